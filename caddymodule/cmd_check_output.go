package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/enforce"
)

// checkResult is the result of one target: the decision, with what the
// compliance record would say of it. Its JSON form is a contract: fields
// may be added, none will change meaning.
type checkResult struct {
	// Target is the target as given.
	Target  string `json:"target"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Agent is the product token the decision is about.
	Agent        string `json:"agent"`
	BotClass     string `json:"bot_class"`
	Automation   string `json:"automation"`
	GroupLine    int    `json:"group_line"`
	RuleKind     string `json:"rule_kind"` // "allow", "disallow", or "" for none
	Rule         string `json:"rule"`
	RuleLine     int    `json:"rule_line"`
	Reading      string `json:"reading"`
	ReadingPath  string `json:"reading_path"` // the target as that reading reads it
	UserAgent    string `json:"user_agent"`
	RobotsSource string `json:"robots_source"`
	RobotsAccess string `json:"robots_access"`
	RobotsStatus int    `json:"robots_status"` // HTTP status; 0 for a file
	RobotsHash   string `json:"robots_hash"`
	RobotsError  string `json:"robots_error"`

	dec enforce.Decision // Path copied out of the Readings
}

func newCheckResult(target, ua string, dec *enforce.Decision, rd *enforce.Readings) checkResult {
	snap := dec.Snapshot
	r := checkResult{
		Target:       target,
		Verdict:      verdictName(dec.Allowed), // as the compliance record names it
		Reason:       dec.Reason.String(),
		Agent:        dec.Token,
		BotClass:     botClass(dec),
		Automation:   dec.Classification.Automation.String(),
		GroupLine:    dec.Verdict.GroupLine,
		Rule:         dec.Verdict.Rule.Pattern,
		RuleLine:     dec.Verdict.Rule.Line,
		Reading:      dec.Reading.String(),
		ReadingPath:  strings.Clone(dec.Path),
		UserAgent:    ua,
		RobotsSource: snap.Source,
		RobotsAccess: snap.Access.String(),
		RobotsStatus: snap.HTTPStatus,
		RobotsHash:   snap.Hash,
		RobotsError:  snap.Err,
		dec:          *dec,
	}
	if r.RuleLine > 0 {
		r.RuleKind = checkRuleKind(dec.Verdict.Rule.Allow)
	}
	for i := 0; i < rd.Len(); i++ {
		if b, kind := rd.At(i); kind == dec.Reading {
			r.ReadingPath = string(b)
		}
	}
	r.dec.Path = strings.Clone(dec.Path)
	return r
}

// checkRuleKind names a rule's kind as the JSON output does.
func checkRuleKind(allow bool) string {
	if allow {
		return "allow"
	}
	return "disallow"
}

// writeCheckJSON writes each result as a JSON object on a line of its own.
func writeCheckJSON(out io.Writer, results []checkResult) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for i := range results {
		if err := enc.Encode(&results[i]); err != nil {
			return err
		}
	}
	return nil
}

// writeCheckText writes what the robots.txt and the User-Agent are, then a
// block per target.
func writeCheckText(out io.Writer, o checkOptions, snap *enforce.Snapshot, class enforce.Classification, results []checkResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "robots.txt: %s (%s)\n", o.robots, checkSnapshotText(snap))
	ua := "none"
	if o.userAgent != "" {
		ua = fmt.Sprintf("%q", o.userAgent)
	}
	fmt.Fprintf(&b, "user agent: %s, %s\n", ua, checkAutomationText(class))
	for i := range results {
		r := &results[i]
		fmt.Fprintf(&b, "\n%s: %s\n", r.Target, r.Verdict)
		fmt.Fprintf(&b, "  reason:  %s: %s\n", r.Reason, checkReasonText(&r.dec, o.policy))
		if r.dec.Reason != enforce.ReasonNamedGroup && r.dec.Reason != enforce.ReasonWildcardGroup {
			continue
		}
		if r.GroupLine > 0 {
			fmt.Fprintf(&b, "  group:   line %d (%s)\n", r.GroupLine, checkGroupText(&r.dec))
		}
		if r.RuleLine > 0 {
			fmt.Fprintf(&b, "  rule:    line %d: %s\n", r.RuleLine, robotsRuleText(r.dec.Verdict.Rule.Allow, r.Rule))
		} else {
			b.WriteString("  rule:    none matches\n")
		}
		if r.dec.Reading == enforce.AsSent {
			fmt.Fprintf(&b, "  reading: %s\n", r.Reading)
		} else {
			fmt.Fprintf(&b, "  reading: %s, %s\n", r.Reading, r.ReadingPath)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// checkSnapshotText says what a snapshot holds, for the first line of a check.
func checkSnapshotText(s *enforce.Snapshot) string {
	if s.Access != enforce.AccessAvailable {
		if s.Err == "" {
			return s.Access.String()
		}
		return s.Access.String() + ": " + s.Err
	}
	t := "sha256 " + s.Hash
	if s.FinalURL != "" {
		t += ", from " + s.FinalURL
	}
	if s.Truncated {
		t += ", only the first part parsed: see caddy robots lint"
	}
	return t
}

// checkAutomationText says whether, and why, the client counts as automated.
func checkAutomationText(c enforce.Classification) string {
	switch c.Automation {
	case enforce.AutomatedNoUserAgent:
		return "automated: no User-Agent"
	case enforce.AutomatedCatalogue:
		return fmt.Sprintf("automated: %s is a catalogued crawler or tool", c.Token)
	case enforce.AutomatedKeyword:
		return fmt.Sprintf("automated: %s is a bot-like product name", c.Token)
	case enforce.AutomatedParser:
		return "automated: github.com/mssola/useragent reads it as a bot"
	}
	return "not automated: a browser, as far as the header tells"
}

// checkReasonText explains a decision's reason in words.
func checkReasonText(dec *enforce.Decision, p enforce.Policy) string {
	switch dec.Reason {
	case enforce.ReasonNamedGroup:
		return fmt.Sprintf("a group names %s", dec.Token)
	case enforce.ReasonWildcardGroup:
		if p.Wildcard == enforce.WildcardAll {
			return `no group names the client, and the "*" group binds every client (--wildcard all)`
		}
		return `no group names the client, and the "*" group binds it as an automated client`
	case enforce.ReasonNoGroup:
		return `no group names the client, and there is no "*" group`
	case enforce.ReasonNotAutomated:
		if p.Wildcard == enforce.WildcardNone {
			return `no group names the client, and the "*" group binds nobody (--wildcard none)`
		}
		if dec.Snapshot.Robots == nil {
			return "robots.txt is unreachable, which disallows only automated clients, and this one does not look automated"
		}
		return `no group names the client, and the "*" group binds only automated clients, which this one does not look like`
	case enforce.ReasonRobotsTxt:
		return "/robots.txt is always allowed (RFC 9309 §2.2.2)"
	case enforce.ReasonUnreachable:
		return "robots.txt is unreachable: complete disallow for crawlers (RFC 9309 §2.3.1.4)"
	case enforce.ReasonUnavailable:
		if dec.Snapshot.Access == enforce.AccessUnavailable {
			return "robots.txt is unavailable, the server says there is none: no rules apply (RFC 9309 §2.3.1.3)"
		}
		return "robots.txt is unreachable, and --unreachable allow lets every client pass"
	case enforce.ReasonAllowListed:
		return fmt.Sprintf("%s is in --allow-agents", dec.Token)
	case enforce.ReasonNoPath:
		return "the target has no path a rule could apply to"
	}
	return dec.Reason.String()
}

// checkGroupText names the group that decided.
func checkGroupText(dec *enforce.Decision) string {
	if dec.Reason == enforce.ReasonWildcardGroup {
		return `the "*" group`
	}
	return "the group naming " + dec.Token
}

// robotsRuleText writes a rule as a robots.txt line.
func robotsRuleText(allow bool, pattern string) string {
	if allow {
		return "Allow: " + pattern
	}
	return "Disallow: " + pattern
}
