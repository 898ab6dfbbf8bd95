package robotscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/caddymodule"
	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// newCheckCommand returns "caddy robots check".
func newCheckCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "check --robots <file|url> --ua <user-agent> [--wildcard crawlers|automated|all|none] " +
			"[--ip <address> [--forged wildcard|deny|ignore] [--undeclared bind|ignore]] [--escalated enforce|block] [--json] <url-or-path>...",
		Short: "Says whether a User-Agent may fetch targets, and why",
		Long: `
Decides, for each target, whether a client sending the given User-Agent may
fetch it under a robots.txt, exactly as the robots_enforce handler decides a
request: the verdict (allow or deny), the reason, the client's class
(browser, crawler, or another automated client) and what shows it, the
product token and the group that applied, the deciding rule and its line,
the reading of the target that decided, and, for an allowed target, the AI
usage preference (Content-Usage, draft-ietf-aipref-attach-05) the handler
would add to the response, with the line of the rule that states it.

--robots names a robots.txt file, or an http or https URL to fetch it from
(as "source url" does: redirects are followed; a 4xx answer other than 429
means no rules apply; 429 and 5xx answers, and an HTML page, mean
unreachable: complete disallow for crawlers).
--ua takes a whole User-Agent header or a bare product token such as GPTBot;
--ua "" checks a request without one. A target is a path ("/private/x?y=1")
or an http or https URL, whose host is ignored: the robots.txt of --robots
applies to it. It is read as Go's HTTP server reads a request target, so
"/a#b" is the path "/a%23b", and a target the server would refuse with 400
("/a%zz") is an error.

--wildcard, --unreachable, --allow-agents, --origin and --max-size mean
what the handler's wildcard, unreachable, allow_agents, origin and
max_size mean, with the same defaults: by default the "*" group binds crawlers only ("bots" is
read as "automated").

--ip gives the client's address (IPv4 or IPv6). The claim of a client the
rules bind to be the crawler its User-Agent names is then verified as the
handler verifies it, with the same sources (--verify-builtin,
--ip-ranges, --reverse-dns and --resolver mean what the verify block's
builtin, ip_ranges, reverse_dns and resolver mean), waiting up to
--timeout for range lists and DNS; --forged says what a forged claim gets,
as the verify block's forged does: wildcard (the default: judged without
the token it could not prove), deny, or ignore; --undeclared bind judges
a client whose User-Agent names no crawler a group names, from an address
in a crawler's published range list, as that crawler, as the verify
block's undeclared does. Signed requests (Web Bot Auth) are verified by
the handler only. Without --ip, every claim is taken as made.

--escalated enforce or block judges the client as a crawler recorded with
a violation, escalated by the handler's violators option: enforce denies
what its group disallows, block everything but /robots.txt.

The flags are read by the handler's own code, as the options they stand
for: a value the directive refuses is refused with the directive's
message, and a --robots file with an error that "caddy robots lint"
reports (an HTML page, a line the parser cannot use) is refused, as the
handler refuses it as a file source.

With --json, each target's result is one JSON object on a line of its own,
with the compliance record's field names.

Exit status: 0 when every target is allowed, 1 when one is disallowed, 2 on
a usage error, a robots.txt file that cannot be read or that the handler
would refuse, a URL that gives no HTTP response, or a claim that got no
answer (pending at --timeout, or unconfirmed).`,
		Example: `  $ caddy robots check --robots robots.txt --ua GPTBot /blog/post.html
  $ caddy robots check --robots https://example.com/robots.txt \
        --ua "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" \
        --ip 66.249.66.1 --json / /private/report.html`,
	}
	fs := cmd.Flags()
	fs.StringP("robots", "r", "", "robots.txt file, or http or https URL")
	fs.String("ua", "", `User-Agent header or product token (--ua "" for none)`)
	fs.String("wildcard", agent.WildcardCrawlers.String(), `whom the "*" group binds: crawlers, automated, all or none`)
	fs.String("unreachable", "deny", "what applies while a robots.txt URL cannot be fetched: deny or allow")
	fs.StringSlice("allow-agents", nil, "product tokens never enforced")
	fs.String("origin", "case_sensitive", "how the origin reads paths: case_sensitive or case_insensitive (judge each path folded too)")
	fs.String("max-size", "", "how much of robots.txt is parsed, e.g. 1MiB (default 500KiB)")
	fs.String("ip", "", "the client's IP address: verify the crawler it claims to be")
	fs.String("forged", "wildcard", "what a forged claim gets (with --ip): wildcard, deny or ignore")
	fs.String("undeclared", "ignore", "bind: judge a client from a crawler's published range as that crawler (with --ip)")
	fs.String("escalated", "", "judge the client as a crawler escalated for a violation: enforce or block")
	addIdentityFlags(cmd)
	fs.Bool("json", false, "print one JSON object per target")
	cmd.RunE = robotsRunE(runCheck)
	cmd.DisableFlagsInUseLine = true // Use spells them out
	return cmd
}

// checkOptions are the flags and arguments of "caddy robots check".
type checkOptions struct {
	robots    string
	userAgent string
	json      bool
	targets   []checkTarget
	// ip is the client's address (--ip); the zero Addr when none was
	// given, and no claim is verified.
	ip      netip.Addr
	verify  caddymodule.Verify
	timeout time.Duration
	// settings are the handler's, filled from the flags (see
	// checkHandler); policy is their Judge's.
	settings *caddymodule.Settings
	policy   enforce.Policy
}

// checkTarget is a target as given, and as Go's server reads it.
type checkTarget struct {
	given string
	url   *url.URL
}

// readCheckOptions reads and checks the flags and arguments of check.
func readCheckOptions(fl caddycmd.Flags) (checkOptions, error) {
	o := checkOptions{
		robots:    fl.String("robots"),
		userAgent: fl.String("ua"),
		json:      fl.Bool("json"),
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.robots == "" {
		bad("--robots is required: a robots.txt file or URL")
	}
	if !fl.Changed("ua") {
		bad(`--ua is required: a User-Agent header or product token (--ua "" for none)`)
	}
	readCheckIdentity(fl, &o, bad)
	h, err := checkHandler(fl, o.robots, &o.verify)
	if err != nil {
		errs = append(errs, err)
	} else if o.settings, err = h.Settings(); err != nil {
		errs = append(errs, flagErrors(err)...)
	} else {
		o.policy = o.settings.Judge.Policy
	}
	if len(fl.Args()) == 0 {
		bad("no target: give one or more paths or URLs to check")
	}
	for _, t := range fl.Args() {
		ct, err := readCheckTarget(t)
		if err != nil {
			errs = append(errs, err)
		}
		o.targets = append(o.targets, ct)
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("robots check: %w", joinErrors(errs))
	}
	return o, nil
}

// checkHandler fills the options of a robots_enforce handler from the
// flags of check, which mean what the handler's options mean: its
// Settings then check them with the handler's messages and defaults.
// robots is --robots, a file or a URL; v the verify block.
func checkHandler(fl caddycmd.Flags, robots string, v *caddymodule.Verify) (*caddymodule.Handler, error) {
	h := &caddymodule.Handler{
		Wildcard:    fl.String("wildcard"),
		Unreachable: fl.String("unreachable"),
		Origin:      fl.String("origin"),
		LogAllowed:  true, // every target's result is printed
		Verify:      v,
	}
	switch {
	case robots == "": // reported: --robots is required
	case isRobotsURL(robots):
		h.Source = &caddymodule.Source{Kind: "url", URL: robots}
	default:
		h.Source = &caddymodule.Source{Kind: "file", Path: robots}
	}
	var err error
	if h.AllowAgents, err = fl.GetStringSlice("allow-agents"); err != nil {
		return nil, fmt.Errorf("--allow-agents: %w", err)
	}
	if size := fl.String("max-size"); size != "" {
		if h.MaxSize, err = caddymodule.ParseByteSize(size); err != nil {
			return nil, fmt.Errorf("--max-size %q: not a size such as 500KiB or 1MiB", size)
		}
	}
	if esc := fl.String("escalated"); esc != "" {
		h.Violators = &caddymodule.RepeatViolators{Mode: esc}
	}
	return h, nil
}

// readCheckIdentity reads --ip, --forged, --undeclared and the
// verification flags.
func readCheckIdentity(fl caddycmd.Flags, o *checkOptions, bad func(format string, args ...any)) {
	o.verify, o.timeout = readIdentityFlags(fl, bad)
	o.verify.Forged, o.verify.Undeclared = fl.String("forged"), fl.String("undeclared")
	if ip := fl.String("ip"); ip != "" {
		addr, err := parseClientIP(ip)
		if err != nil {
			bad("--ip: %w", err)
		}
		o.ip = addr
		return
	}
	for _, name := range append([]string{"forged", "undeclared"}, identityFlags...) {
		if fl.Changed(name) {
			bad("--%s: verifies a claim, which needs the client's address: give --ip", name)
		}
	}
}

// readCheckTarget reads a target as Go's server reads a request target
// (url.ParseRequestURI), which the judgement then reads as the handler's
// does (enforce.TargetOf), so that check and the handler cannot read one
// spelling two ways.
func readCheckTarget(t string) (checkTarget, error) {
	ct := checkTarget{given: t}
	if !strings.HasPrefix(t, "/") && !isRobotsURL(t) && t != "*" {
		return ct, fmt.Errorf(`target %q: want a path starting with "/", an http or https URL, or "*"`, t)
	}
	u, err := url.ParseRequestURI(t)
	if err != nil {
		return ct, fmt.Errorf("target %q: the server would refuse it (400 Bad Request): %w", t, errors.Unwrap(err))
	}
	ct.url = u
	return ct, nil
}

// runCheck is "caddy robots check": each target is judged by the
// handler's own judgement (enforce.Judge), with the claim verified, when
// --ip gives the client's address, by a verifier that waits for its
// answer.
func runCheck(fl caddycmd.Flags, out io.Writer) (int, error) {
	o, err := readCheckOptions(fl)
	if err != nil {
		return exitUsage, err
	}
	src, key, snap, err := checkSource(o)
	if err != nil {
		return exitUsage, fmt.Errorf("robots check: %w", err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	classifier := agent.NewClassifier(agent.ClassifierCacheSize)
	cfg := o.settings.Judge // the handler's, from the flags
	cfg.Classifier, cfg.Source, cfg.FixedKey, cfg.RecordAll = classifier, src, key, true
	if cfg.Escalation != enforce.EscalateOff {
		cfg.Violators = escalatedClient(o)
	}
	var id *waitingIdentity
	if o.ip.IsValid() {
		claims, err := newClaimChecker(&o.verify, o.timeout)
		if err != nil {
			return exitUsage, fmt.Errorf("robots check: %w", err)
		}
		defer claims.Close()
		id = &waitingIdentity{claims: claims, ctx: ctx}
		cfg.Identity = id
	}
	judge := enforce.NewJudge(cfg)
	toks := agent.Tokenize(o.userAgent)
	class := classifier.Classify(&toks)

	results := make([]checkResult, 0, len(o.targets))
	status := exitOK
	var pending, unconfirmed []string
	now := time.Now()
	for _, t := range o.targets {
		req := enforce.Request{Method: http.MethodGet, URL: t.url, URI: t.given, UserAgent: o.userAgent, Now: now}
		if cfg.Escalation != enforce.EscalateOff {
			req.ClientIP = checkClientIP
		}
		if o.ip.IsValid() {
			req.ClientIP = o.ip.String()
			id.last = nil
		}
		jd := judge.Judge(ctx, &req)
		r := newCheckResult(t.given, jd)
		if !o.ip.IsValid() {
			r.rec.ClientIP = "" // checkClientIP: no client's
		}
		if id != nil {
			r.addIdentity(o.ip, id.last, cfg.IdentityPolicy.Forged, jd.Unproven != "")
		}
		switch jd.Identity.Outcome {
		case verify.Pending:
			pending = append(pending, t.given)
		case verify.Unconfirmed:
			unconfirmed = append(unconfirmed, t.given)
		}
		if !jd.Allowed {
			status = exitFindings
		}
		jd.Release()
		results = append(results, r)
	}
	if o.json {
		err = writeCheckJSON(out, results)
	} else {
		err = writeCheckText(out, o, snap, class, results)
	}
	if err != nil {
		return exitUsage, fmt.Errorf("robots check: writing the result: %w", err)
	}
	if err := noAnswer(o.timeout, pending, unconfirmed); err != nil {
		return exitUsage, fmt.Errorf("robots check: the claim of %s could not be verified: %w", o.ip, err)
	}
	return status, nil
}

// escalatedClient returns a table in which the client of o is escalated
// (--escalated), under whatever token its judgement names it by: each
// word of its User-Agent as a proven token, and its address as a whole
// (checkClientIP without --ip), so that the judgement meets the
// escalation as the handler would.
func escalatedClient(o checkOptions) *enforce.Violators {
	v := enforce.NewViolators(0)
	addr := o.ip
	if !addr.IsValid() {
		addr = netip.MustParseAddr(checkClientIP)
	}
	toks := agent.Tokenize(o.userAgent)
	now := time.Now()
	for i := 0; i < toks.Len(); i++ {
		v.Begin("", toks.At(i), addr, true, now, time.Hour, enforce.Escalation{URI: "(--escalated)"})
	}
	v.Begin("", "*", addr, false, now, time.Hour, enforce.Escalation{URI: "(--escalated)"})
	return v
}

// checkClientIP is the address check judges a client by when --ip gives
// none: a documentation address (RFC 5737), which no list proves.
const checkClientIP = "192.0.2.0"

// waitingIdentity is the commands' enforce.Identity: it waits for each
// answer (claimChecker.answer) until ctx is done, and keeps what explains
// the last one for the output.
type waitingIdentity struct {
	claims *claimChecker
	ctx    context.Context
	last   *claimResult
}

// Verify implements enforce.Identity.
func (w *waitingIdentity) Verify(token string, addr netip.Addr, _ *http.Request) verify.Result {
	r := w.claims.check(w.ctx, token, addr)
	w.last = &r
	return r.res
}

// HasMethod implements enforce.Identity.
func (w *waitingIdentity) HasMethod(token string) bool { return w.claims.v.HasMethod(token) }

// ListedTokens implements enforce.Identity, once the range lists are in
// (or the wait is over).
func (w *waitingIdentity) ProvenTokens(addr netip.Addr, r *http.Request) []string {
	return w.claims.v.ProvenTokens(addr, r)
}

// ListedTokens implements enforce.Identity.
func (w *waitingIdentity) ListedTokens(addr netip.Addr) []string {
	w.claims.loaded(w.ctx)
	return w.claims.v.ListedTokens(addr)
}

// checkSource reads the robots.txt of --robots through the source the
// handler's settings make of it: a FileSource for a file, a Store with a
// fixed URL for a URL, with the key the judgement asks it for, and the
// snapshot it holds. A URL that gives no HTTP response at all is an input
// error; any answer is a snapshot to decide with, as the handler would.
func checkSource(o checkOptions) (robotstxt.Source, string, *robotstxt.Snapshot, error) {
	s := o.settings
	if s.File != nil {
		src, err := robotstxt.NewFileSource(*s.File)
		if err != nil {
			return nil, "", nil, err
		}
		return src, s.FixedKey, src.Snapshot(context.Background(), s.FixedKey), nil
	}
	cfg := *s.Store
	cfg.Fetcher = &robotstxt.HTTPFetcher{Client: &http.Client{}, UserAgent: robotstxt.FetchUserAgent}
	store, err := robotstxt.NewStore(cfg)
	if err != nil {
		return nil, "", nil, err
	}
	snap := store.Snapshot(context.Background(), s.FixedKey)
	if snap.Access == robotstxt.AccessUnreachable && snap.HTTPStatus == 0 {
		store.Close()
		return nil, "", nil, fmt.Errorf("robots.txt %s is unreachable, no HTTP response: %s", o.robots, snap.Err)
	}
	return store, s.FixedKey, snap, nil
}
