package robotscmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/caddymodule"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Crawler verification for "caddy robots check --ip" and "caddy robots
// verify": the flags of the handler's verify block, and a verifier built
// from them as the handler builds its own (caddymodule.Verify.VerifierConfig),
// asked until it answers, or it is known that no answer will come (see
// claimChecker.answer).

// identityFlags are the flags both commands take, named after the verify
// block's subdirectives.
var identityFlags = []string{"verify-builtin", "ip-ranges", "reverse-dns", "resolver", "timeout"}

// addIdentityFlags adds the verification flags to cmd.
func addIdentityFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.String("verify-builtin", "on", "use the built-in range lists and reverse DNS domains: on or off")
	fs.StringArray("ip-ranges", nil, "<token>=<file|url>: a range list that proves token, in place of its built-in lists (repeatable)")
	fs.StringArray("reverse-dns", nil, "<token>=<suffix,...>: domains the PTR names of token's addresses lie under, in place of its built-in ones (repeatable)")
	fs.String("resolver", "", "DNS server for reverse DNS, <host:port> (default: the system's)")
	fs.Duration("timeout", defaultIdentityTimeout, "how long to wait for range lists and DNS")
}

// readIdentityFlags reads the verification flags into the handler's Verify
// configuration, and the time to wait; bad collects what is wrong with
// their syntax. Their values are the verify block's, which the handler's
// code checks (Verify.Validate, or the Settings of check's handler).
func readIdentityFlags(fl caddycmd.Flags, bad func(format string, args ...any)) (caddymodule.Verify, time.Duration) {
	cfg := caddymodule.Verify{Builtin: fl.String("verify-builtin"), Resolver: fl.String("resolver")}
	ranges, _ := fl.GetStringArray("ip-ranges")
	for _, r := range ranges {
		tok, src, ok := strings.Cut(r, "=")
		if !ok || !rules.IsProductToken(tok) || src == "" {
			bad("--ip-ranges %q: want <token>=<file|url>, e.g. GPTBot=gptbot.json", r)
			continue
		}
		cfg.IPRanges = append(cfg.IPRanges, caddymodule.IPRanges{Token: tok, Source: src})
	}
	domains, _ := fl.GetStringArray("reverse-dns")
	for _, d := range domains {
		tok, list, ok := strings.Cut(d, "=")
		suffixes := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' })
		if !ok || !rules.IsProductToken(tok) || len(suffixes) == 0 {
			bad("--reverse-dns %q: want <token>=<suffix,...>, e.g. Googlebot=googlebot.com,google.com", d)
			continue
		}
		if cfg.ReverseDNS == nil {
			cfg.ReverseDNS = make(map[string][]string)
		}
		cfg.ReverseDNS[tok] = append(cfg.ReverseDNS[tok], suffixes...)
	}
	timeout := fl.Duration("timeout")
	if timeout <= 0 {
		bad("--timeout %v: want a positive duration, e.g. 10s", timeout)
	}
	return cfg, timeout
}

// maxProblems bounds the problems of no range list in particular that a
// claimChecker keeps from its verifier: the last few say why an answer is
// pending. A failed range list is kept apart, the last failure of each,
// so that the failures of other tokens' lists (the built-in ones, offline)
// never push out the one that explains a claim.
const maxProblems = 8

// A claimChecker verifies claims for a command: a Verifier configured as
// the handler configures its own, started, whose DNS traffic is traced so
// that the output can name the PTR names it checked (package verify keeps
// them to itself).
type claimChecker struct {
	v       *verify.Verifier
	trace   *dnsTrace
	timeout time.Duration
	builtin bool

	mu       sync.Mutex
	lists    map[string]problem // the last failure of each range list, by its source
	problems []problem          // the other problems the verifier reported, the last maxProblems
}

// newClaimChecker builds the verifier of cfg, which checks the
// configuration and does no I/O (see check).
func newClaimChecker(cfg *caddymodule.Verify, timeout time.Duration) (*claimChecker, error) {
	c := &claimChecker{timeout: timeout, builtin: cfg.Builtin != "off", lists: make(map[string]problem)}
	vc := cfg.VerifierConfig()
	inner := vc.Resolver
	if inner == nil {
		inner = verify.NewResolver("")
	}
	c.trace = &dnsTrace{inner: inner, ptr: make(map[string]dnsAnswer), fwd: make(map[string]dnsAnswer)}
	vc.Resolver = c.trace
	// Pending means a lookup is under way, for as long as it may be: a
	// claim the command can wait for. And a range list is given up in
	// time for the command to say why it did not load, rather than only
	// that no answer came.
	vc.PendingBound = verify.MaxPendingBound
	vc.HTTPClient = &http.Client{Timeout: listTimeout(timeout)}
	vc.OnError = func(err error) { c.report(problem{text: err.Error()}) }
	vc.OnEvent = func(ev verify.Event) {
		if ev.Kind == verify.EventListFailed {
			c.report(problem{source: ev.URL, tokens: ev.Tokens, text: ev.Err.Error()})
		}
	}
	v, err := verify.New(vc)
	if err != nil {
		return nil, fmt.Errorf("crawler verification: %w", err)
	}
	c.v = v
	return c, nil
}

// Close stops the verifier's background work.
func (c *claimChecker) Close() { _ = c.v.Close() }

// problem is something the verifier reported: a range list that failed,
// with its source and the tokens it proves, or a problem of no token in
// particular.
type problem struct {
	source string
	tokens []string
	text   string
}

func (c *claimChecker) report(p problem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.source != "" {
		c.lists[p.source] = p
		return
	}
	if len(c.problems) == maxProblems {
		c.problems = c.problems[1:]
	}
	c.problems = append(c.problems, p)
}

// problemsOf returns what the verifier reported that concerns token: the
// failures of its own lists, by source, and problems of no token in
// particular.
func (c *claimChecker) problemsOf(token string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, source := range slices.Sorted(maps.Keys(c.lists)) {
		if p := c.lists[source]; slices.ContainsFunc(p.tokens, func(t string) bool { return strings.EqualFold(t, token) }) {
			out = append(out, p.text)
		}
	}
	for _, p := range c.problems {
		out = append(out, p.text)
	}
	return out
}

// prestart asks about the first addresses at once, without waiting, so
// that their DNS lookups run side by side rather than one after another;
// no more than the verifier's burst of lookups, which it would refuse.
func (c *claimChecker) prestart(token string, addrs []netip.Addr) {
	if !c.v.HasMethod(token) {
		return
	}
	c.v.Start()
	for _, a := range addrs[:min(len(addrs), verify.DefaultDNSBurst)] {
		c.v.Verify(token, a, nil)
	}
}

// loaded starts the verifier and waits until its range lists are in, or
// failed, or ctx is done.
func (c *claimChecker) loaded(ctx context.Context) {
	c.v.Start()
	_ = c.v.WaitLists(ctx)
}

// check verifies the claim that addr is token, waiting for the answer
// until ctx is done (see answer).
func (c *claimChecker) check(ctx context.Context, token string, addr netip.Addr) claimResult {
	// The verifier starts with the first claim some method can decide,
	// as the handler's starts with its first request: a check whose
	// client the rules never bind, or whose token no method knows (and
	// which is answered at once), fetches no range list. Calls after the
	// first do nothing.
	hasMethod := c.v.HasMethod(token)
	if hasMethod {
		c.v.Start()
	}
	res, err := c.answer(ctx, token, addr)
	r := claimResult{token: token, addr: addr, res: res, hasMethod: hasMethod, builtin: c.builtin}
	if res.Method == verify.ReverseDNS {
		ptr := c.trace.ptrOf(addr)
		r.ptr, r.trace = ptr.values, c.trace
		for _, name := range r.ptr {
			if fwd, asked := c.trace.forward(name); asked && slices.Contains(fwd.values, addr.String()) {
				r.confirmed = append(r.confirmed, name)
			}
		}
	}
	// Why no answer came, or will: what went wrong with the token's range
	// lists, and the DNS questions about this address that failed.
	why := c.problemsOf(token)
	if ptr := c.trace.ptrOf(addr); ptr.err != "" {
		why = append(why, "PTR lookup of "+ptr.err)
	} else {
		for _, name := range ptr.values {
			if fwd, _ := c.trace.forward(name); fwd.err != "" {
				why = append(why, "forward lookup of "+fwd.err)
			}
		}
	}
	switch {
	case err != nil:
		r.why = fmt.Sprintf("no answer within %v", c.timeout)
		if len(why) > 0 {
			r.why += "; " + strings.Join(why, "; ")
		}
	case res.Outcome == verify.Unconfirmed:
		r.why = "no answer will come"
		if len(why) > 0 {
			r.why += ": " + strings.Join(why, "; ")
		}
	}
	return r
}

// answerPoll is how often answer asks the verifier again while an answer
// is on its way: the verifier says when one comes only to VerifyNow,
// which waits through an unconfirmed claim too.
const answerPoll = 10 * time.Millisecond

// answer waits for the verifier's answer about the claim that addr is
// token: until it is decided, or until it is known that none will come
// within the wait (the claim is Unconfirmed, as the handler would record
// it, once every range list has been tried: a lookup that failed, a list
// that did not load), or until ctx is done, when it is Pending and the
// error says so.
func (c *claimChecker) answer(ctx context.Context, token string, addr netip.Addr) (verify.Result, error) {
	for {
		res := c.v.Verify(token, addr, nil)
		switch res.Outcome {
		case verify.Pending:
		case verify.Unconfirmed:
			if c.listsTried() {
				return res, nil
			}
		default:
			return res, nil
		}
		select {
		case <-ctx.Done():
			res.Outcome = verify.Pending
			return res, fmt.Errorf("verify %s %s: %w", token, addr, ctx.Err())
		case <-time.After(answerPoll):
		}
	}
}

// listsTried reports whether every range list has loaded or been tried.
func (c *claimChecker) listsTried() bool {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	return c.v.WaitLists(done) == nil
}

// listTimeout bounds a range list's fetch for a command that waits
// timeout: three quarters of it, so that a list that cannot be fetched is
// named in time, and never more than the verifier's own bound.
func listTimeout(timeout time.Duration) time.Duration {
	return min(verify.FetchTimeout, max(timeout*3/4, minListTimeout))
}

// minListTimeout is the least time a range list's fetch is given: a round
// trip on loopback, and a little more.
const minListTimeout = 50 * time.Millisecond

// claimResult is the answer about one claim, with what explains it.
type claimResult struct {
	token     string
	addr      netip.Addr
	res       verify.Result
	hasMethod bool      // some method is known for token
	builtin   bool      // --verify-builtin on
	ptr       []string  // PTR names of addr, for reverse DNS
	confirmed []string  // PTR names that resolve back to addr
	trace     *dnsTrace // the forward answers, for reverse DNS
	why       string    // why the answer is pending or unconfirmed
}

// detail says in words why the claim came out as it did.
func (r *claimResult) detail() string {
	switch r.res.Outcome {
	case verify.Unverified:
		if r.hasMethod {
			return fmt.Sprintf("only Web Bot Auth is known for %s, and signed requests are verified by the handler only", r.token)
		}
		if !r.builtin {
			return fmt.Sprintf("no method is known for %s (--verify-builtin off)", r.token)
		}
		return "no method is known for " + r.token
	case verify.Pending, verify.Unconfirmed:
		return r.why
	}
	if r.res.Method == verify.IPRanges {
		if r.res.Outcome == verify.Verified {
			return "in a range list of " + r.token
		}
		return "in no range list of " + r.token
	}
	if r.res.Method != verify.ReverseDNS {
		return ""
	}
	if len(r.ptr) == 0 {
		return "no PTR name"
	}
	var parts []string
	for _, name := range r.ptr {
		fwd, asked := r.trace.forward(name)
		switch {
		case r.res.Outcome == verify.Verified && slices.Contains(r.confirmed, name):
			parts = append(parts, "PTR "+name+" resolves back to it")
		case r.res.Outcome == verify.Verified:
			continue // another name proved it
		case !asked || slices.Contains(r.confirmed, name):
			parts = append(parts, fmt.Sprintf("PTR %s is under no domain of %s", name, r.token))
		case len(fwd.values) == 0:
			parts = append(parts, "PTR "+name+" does not resolve")
		default:
			parts = append(parts, fmt.Sprintf("PTR %s resolves to %s, not to it", name, strings.Join(fwd.values, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// dnsTrace is the verifier's resolver, passed through, keeping the answers
// the command explains its outcomes with. It holds the answers about the
// addresses the command was given, no more: the verifier asks once per
// address, and forward questions only for the names those answers gave.
type dnsTrace struct {
	inner verify.Resolver
	mu    sync.Mutex
	ptr   map[string]dnsAnswer // address → its PTR names
	fwd   map[string]dnsAnswer // name → the addresses it resolves to
}

// dnsAnswer is the answer to a DNS question, in text: names lower-case and
// without the root's dot, or addresses; err is empty when the answer is
// "no such name", which is an answer.
type dnsAnswer struct {
	values []string
	err    string
}

// LookupAddr implements verify.Resolver.
func (t *dnsTrace) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	names, err := t.inner.LookupAddr(ctx, addr)
	a := dnsAnswer{err: dnsErrorText(err)}
	for _, n := range names {
		a.values = append(a.values, strings.ToLower(strings.TrimSuffix(n, ".")))
	}
	t.mu.Lock()
	t.ptr[addr] = a
	t.mu.Unlock()
	return names, err
}

// LookupIPAddr implements verify.Resolver.
func (t *dnsTrace) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	ips, err := t.inner.LookupIPAddr(ctx, host)
	a := dnsAnswer{err: dnsErrorText(err)}
	for _, ip := range ips {
		if addr, ok := netip.AddrFromSlice(ip.IP); ok {
			a.values = append(a.values, addr.Unmap().String())
		}
	}
	t.mu.Lock()
	t.fwd[host] = a
	t.mu.Unlock()
	return ips, err
}

// dnsErrorText says what went wrong with a DNS question: "" for none, or
// for "no such name".
func dnsErrorText(err error) string {
	var de *net.DNSError
	switch {
	case err == nil, errors.As(err, &de) && de.IsNotFound:
		return ""
	case de != nil:
		// Without the server's address, which names the system's
		// resolver even when the question went to --resolver.
		return de.Name + ": " + de.Err
	}
	return err.Error()
}

// ptrOf returns the PTR answer about addr.
func (t *dnsTrace) ptrOf(addr netip.Addr) dnsAnswer {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ptr[addr.String()]
}

// forward returns what name resolved to, and whether it was asked.
func (t *dnsTrace) forward(name string) (dnsAnswer, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.fwd[name]
	return a, ok
}
