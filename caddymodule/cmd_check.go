package caddymodule

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// newCheckCommand returns "caddy robots check".
func newCheckCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check --robots <file|url> --ua <user-agent> [--wildcard bots|all|none] [--json] <url-or-path>...",
		Short: "Says whether a User-Agent may fetch targets, and why",
		Long: `
Decides, for each target, whether a client sending the given User-Agent may
fetch it under a robots.txt, exactly as the robots_enforce handler decides a
request: the verdict (allow or deny), the reason, the product token and the
group that applied, the deciding rule and its line, and the reading of the
target that decided.

--robots names a robots.txt file, or an http or https URL to fetch it from
(as "source url" does: redirects are followed; a 4xx answer means no rules
apply, a 5xx answer or an HTML page means complete disallow for crawlers).
--ua takes a whole User-Agent header or a bare product token such as GPTBot;
--ua "" checks a request without one. A target is a path ("/private/x?y=1")
or an http or https URL, whose host is ignored: the robots.txt of --robots
applies to it.

--wildcard, --unreachable, --allow-agents and --max-size mean what the
handler's wildcard, unreachable, allow_agents and max_size mean, with the
same defaults.

With --json, each target's result is one JSON object on a line of its own.

Exit status: 0 when every target is allowed, 1 when one is disallowed, 2 on
a usage error, a robots.txt file that cannot be read, or a URL that gives
no HTTP response.`,
		Example: `  $ caddy robots check --robots robots.txt --ua GPTBot /blog/post.html
  $ caddy robots check --robots https://example.com/robots.txt \
        --ua "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" \
        --json / /private/report.html`,
	}
	fs := cmd.Flags()
	fs.StringP("robots", "r", "", "robots.txt file, or http or https URL")
	fs.String("ua", "", `User-Agent header or product token (--ua "" for none)`)
	fs.String("wildcard", "bots", `whom the "*" group binds: bots, all or none`)
	fs.String("unreachable", "deny", "what applies while a robots.txt URL cannot be fetched: deny or allow")
	fs.StringSlice("allow-agents", nil, "product tokens never enforced")
	fs.String("max-size", "", "how much of robots.txt is parsed, e.g. 1MiB (default 500KiB)")
	fs.Bool("json", false, "print one JSON object per target")
	cmd.RunE = robotsRunE(runCheck)
	cmd.DisableFlagsInUseLine = true // Use spells them out
	return cmd
}

// checkOptions are the flags and arguments of "caddy robots check".
type checkOptions struct {
	robots      string
	userAgent   string
	policy      enforce.Policy
	unreachable enforce.UnreachablePolicy
	maxSize     int
	json        bool
	targets     []string
}

// readCheckOptions reads and checks the flags and arguments of check.
func readCheckOptions(fl caddycmd.Flags) (checkOptions, error) {
	o := checkOptions{
		robots:    fl.String("robots"),
		userAgent: fl.String("ua"),
		json:      fl.Bool("json"),
		targets:   fl.Args(),
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.robots == "" {
		bad("--robots is required: a robots.txt file or URL")
	} else if isRobotsURL(o.robots) && urlHost(o.robots) == "" {
		bad("--robots %q: a URL with no host", o.robots)
	}
	if !fl.Changed("ua") {
		bad(`--ua is required: a User-Agent header or product token (--ua "" for none)`)
	}
	var err error
	if o.policy.Wildcard, err = enforce.ParseWildcardPolicy(fl.String("wildcard")); err != nil {
		bad("--wildcard: %w", err)
	}
	switch u := fl.String("unreachable"); u {
	case "deny":
		o.unreachable = enforce.UnreachableDisallow
	case "allow":
		o.unreachable = enforce.UnreachableAllow
	default:
		bad("--unreachable %q: want deny or allow", u)
	}
	if o.policy.AllowAgents, err = fl.GetStringSlice("allow-agents"); err != nil {
		bad("--allow-agents: %w", err)
	}
	for _, a := range o.policy.AllowAgents {
		if !rules.IsProductToken(a) {
			bad("--allow-agents %q: a product token is letters, '-' and '_' only", a)
		}
	}
	if o.maxSize, err = parseMaxSize(fl.String("max-size")); err != nil {
		errs = append(errs, err)
	}
	if len(o.targets) == 0 {
		bad("no target: give one or more paths or URLs to check")
	}
	for _, t := range o.targets {
		if !strings.HasPrefix(t, "/") && !isRobotsURL(t) && t != "*" {
			bad(`target %q: want a path starting with "/", an http or https URL, or "*"`, t)
		}
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("robots check: %w", joinErrors(errs))
	}
	return o, nil
}

// runCheck is "caddy robots check".
func runCheck(fl caddycmd.Flags, out io.Writer) (int, error) {
	o, err := readCheckOptions(fl)
	if err != nil {
		return exitUsage, err
	}
	snap, err := checkSnapshot(o)
	if err != nil {
		return exitUsage, fmt.Errorf("robots check: %w", err)
	}
	classifier := enforce.NewClassifier(enforce.ClassifierCacheSize)
	decider := enforce.NewDecider(o.policy, classifier)
	toks := enforce.Tokenize(o.userAgent)
	class := classifier.Classify(&toks)

	results := make([]checkResult, 0, len(o.targets))
	status := exitOK
	now := time.Now()
	for _, target := range o.targets {
		var rd enforce.Readings
		dec := decider.Decide(snap, enforce.Request{Target: target, UserAgent: o.userAgent, Now: now}, &rd)
		results = append(results, newCheckResult(target, o.userAgent, &dec, &rd))
		if !dec.Allowed {
			status = exitFindings
		}
	}
	if o.json {
		err = writeCheckJSON(out, results)
	} else {
		err = writeCheckText(out, o, snap, class, results)
	}
	if err != nil {
		return exitUsage, fmt.Errorf("robots check: writing the result: %w", err)
	}
	return status, nil
}

// checkSnapshot reads the robots.txt of --robots through the source the
// handler would use for it: a FileSource for a file, a Store with a fixed
// URL for a URL. A URL that gives no HTTP response at all is an input
// error; any answer is a snapshot to decide with, as the handler would.
func checkSnapshot(o checkOptions) (*enforce.Snapshot, error) {
	if !isRobotsURL(o.robots) {
		src, err := enforce.NewFileSource(enforce.FileConfig{Path: o.robots, MaxSize: o.maxSize})
		if err != nil {
			return nil, err
		}
		defer src.Close()
		return src.Snapshot(context.Background(), "file"), nil
	}
	cfg := enforce.StoreConfig{
		URL:         o.robots,
		Fetcher:     &enforce.HTTPFetcher{Client: &http.Client{}, UserAgent: internalUserAgent},
		MaxSize:     o.maxSize,
		Unreachable: o.unreachable,
	}
	if strings.HasPrefix(o.robots, "http://") {
		cfg.Scheme = "http"
	}
	store, err := enforce.NewStore(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	snap := store.Snapshot(context.Background(), urlHost(o.robots))
	if snap.Access == enforce.AccessUnreachable && snap.HTTPStatus == 0 {
		return nil, fmt.Errorf("robots.txt %s is unreachable, no HTTP response: %s", o.robots, snap.Err)
	}
	return snap, nil
}
