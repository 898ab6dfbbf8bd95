package robotscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// newVerifyCommand returns "caddy robots verify".
func newVerifyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "verify [--verify-builtin on|off] [--ip-ranges <token>=<file|url>]... [--reverse-dns <token>=<suffix,...>]... " +
			"[--resolver <host:port>] [--timeout <duration>] [--json] <token> <ip>...",
		Short: "Says whether IP addresses are the crawler they claim to be",
		Long: `
Answers "is this IP address this crawler?" for a product token (GPTBot,
Googlebot, …) and one or more IPv4 or IPv6 addresses, with the code and the
sources the robots_enforce handler verifies claims with (its verify block):
the crawler operator's published range lists, then forward-confirmed
reverse DNS under the operator's documented domains. For each address it
prints the outcome (verified, forged, unverified when no method is known for
the token, unconfirmed when no answer will come: a range list that could
not be loaded, a DNS lookup that failed, each named; pending when the
answer was still on its way at --timeout), the method that decided, and
for reverse DNS the PTR names it was given and what they resolve to.
Unlike the handler, which never waits, the command waits for the range
lists to load and for DNS to answer, up to --timeout; a range list is
given three quarters of it, so that one that cannot be fetched (offline,
say) is named as the reason within the wait.

--verify-builtin, --ip-ranges, --reverse-dns and --resolver mean what the
verify block's builtin, ip_ranges, reverse_dns and resolver mean: an
--ip-ranges or --reverse-dns flag replaces the built-in list or domains of
its token. With --verify-builtin on (the default) the command fetches the
operators' published lists from their sites.

Signed requests (Web Bot Auth) carry their proof in the request's header
fields, which this command does not take: the handler verifies them.

With --json, each address's answer is one JSON object on a line of its own,
with the compliance record's field names (agent, client_ip, identity,
identity_method).

Exit status: 0 when every address is verified, 1 when one is forged or
unverified, 2 on a usage error or when an answer did not come (pending
at --timeout, or unconfirmed).`,
		Example: `  $ caddy robots verify Googlebot 66.249.66.1 2001:4860:4801:10::1
  $ caddy robots verify --verify-builtin off --ip-ranges ExampleBot=ranges.json ExampleBot 192.0.2.40
  $ caddy robots verify --resolver 127.0.0.1:53 --json Googlebot 66.249.66.1`,
	}
	fs := cmd.Flags()
	addIdentityFlags(cmd)
	fs.Bool("json", false, "print one JSON object per address")
	cmd.RunE = robotsRunE(runVerify)
	cmd.DisableFlagsInUseLine = true // Use spells them out
	return cmd
}

// verifyResult is the answer for one address. Its JSON form is a
// contract: fields may be added, none will change meaning.
type verifyResult struct {
	Agent          string `json:"agent"`
	ClientIP       string `json:"client_ip"`
	Identity       string `json:"identity"`
	IdentityMethod string `json:"identity_method,omitempty"`
	// Detail says in words why, as the text output does.
	Detail string `json:"detail"`
	// PTR are the PTR names of the address, when reverse DNS was asked.
	PTR []string `json:"ptr,omitempty"`
	// PTRConfirmed are those of them that resolve back to the address.
	PTRConfirmed []string `json:"ptr_confirmed,omitempty"`
}

// runVerify is "caddy robots verify".
func runVerify(fl caddycmd.Flags, out io.Writer) (int, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	cfg, timeout := readIdentityFlags(fl, bad)
	errs = append(errs, flagErrors(cfg.Validate())...)
	args := fl.Args()
	var token string
	var addrs []netip.Addr
	switch {
	case len(args) == 0:
		bad("no token: give a product token and one or more IP addresses")
	case len(args) == 1:
		bad("no address: give one or more IP addresses after the token %q", args[0])
		fallthrough
	default:
		token = args[0]
		if !verifyToken(token) {
			bad("token %q: want a product token such as Googlebot (letters, digits, '-', '_' or '.'; no version)", token)
		}
		for _, a := range args[1:] {
			addr, err := parseClientIP(a)
			if err != nil {
				bad("%w", err)
			}
			addrs = append(addrs, addr)
		}
	}
	if len(errs) > 0 {
		return exitUsage, fmt.Errorf("robots verify: %w", joinErrors(errs))
	}
	claims, err := newClaimChecker(&cfg, timeout)
	if err != nil {
		return exitUsage, fmt.Errorf("robots verify: %w", err)
	}
	defer claims.Close()

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	claims.prestart(token, addrs)
	status := exitOK
	var pending, unconfirmed []string
	results := make([]verifyResult, 0, len(addrs))
	for _, addr := range addrs {
		c := claims.check(ctx, token, addr)
		results = append(results, verifyResult{
			Agent: token, ClientIP: addr.String(), Identity: c.res.Outcome.String(), IdentityMethod: c.res.Method.String(),
			Detail: c.detail(), PTR: c.ptr, PTRConfirmed: c.confirmed,
		})
		switch c.res.Outcome {
		case verify.Verified:
		case verify.Pending:
			pending = append(pending, addr.String())
		case verify.Unconfirmed:
			unconfirmed = append(unconfirmed, addr.String())
		default:
			status = max(status, exitFindings)
		}
	}
	if fl.Bool("json") {
		err = writeVerifyJSON(out, results)
	} else {
		var b strings.Builder
		for _, r := range results {
			fmt.Fprintf(&b, "%s: %s: %s\n", r.ClientIP, identityHead(r.Identity, r.IdentityMethod), r.Detail)
		}
		_, err = io.WriteString(out, b.String())
	}
	if err != nil {
		return exitUsage, fmt.Errorf("robots verify: writing the result: %w", err)
	}
	if err := noAnswer(timeout, pending, unconfirmed); err != nil {
		return exitUsage, fmt.Errorf("robots verify: %w", err)
	}
	return status, nil
}

// noAnswer says which claims got no answer: those still pending when the
// wait ended, and those no answer will come for (unconfirmed); nil when
// every claim was answered.
func noAnswer(timeout time.Duration, pending, unconfirmed []string) error {
	var parts []string
	if len(pending) > 0 {
		parts = append(parts, fmt.Sprintf("no answer within %v for %s", timeout, strings.Join(pending, ", ")))
	}
	if len(unconfirmed) > 0 {
		parts = append(parts, fmt.Sprintf("no answer will come for %s (unconfirmed)", strings.Join(unconfirmed, ", ")))
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// writeVerifyJSON writes each result as a JSON object on a line of its own.
func writeVerifyJSON(out io.Writer, results []verifyResult) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for i := range results {
		if err := enc.Encode(&results[i]); err != nil {
			return err
		}
	}
	return nil
}

// identityHead names an outcome and its method as the outputs write
// them: "verified by ip_ranges", "forged (reverse_dns)", "unverified",
// "pending (reverse_dns)".
func identityHead(outcome, method string) string {
	switch {
	case method == "":
		return outcome
	case outcome == verify.Verified.String():
		return outcome + " by " + method
	}
	return outcome + " (" + method + ")"
}

// maxTokenLength bounds a product token given on the command line, as the
// verifier bounds the tokens it knows.
const maxTokenLength = 64

// verifyToken reports whether s can name a token the verifier knows:
// letters, digits, '-', '_' and '.' (RFC 9309 §2.2.1 has letters, '-' and
// '_'; catalogued crawlers use digits and dots too).
func verifyToken(s string) bool {
	if s == "" || len(s) > maxTokenLength {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// parseClientIP reads an IPv4 or IPv6 address, as a client's address is
// verified: an IPv4-mapped IPv6 address as IPv4, without a zone.
func parseClientIP(s string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("address %q: not an IPv4 or IPv6 address", s)
	}
	return addr.Unmap().WithZone(""), nil
}

// defaultIdentityTimeout is how long the commands wait, by default, for
// range lists and DNS: as long as the handler's fetch_timeout gives a
// robots.txt fetch, well past a resolver's answer, and short enough for a
// command line.
const defaultIdentityTimeout = 10 * time.Second
