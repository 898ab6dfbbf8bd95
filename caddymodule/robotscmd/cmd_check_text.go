package robotscmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// writeCheckText writes what the robots.txt and the client are, then a
// block per target.
func writeCheckText(out io.Writer, o checkOptions, snap *robotstxt.Snapshot, class agent.Classification, results []checkResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "robots.txt: %s (%s)\n", o.robots, checkSnapshotText(snap))
	ua := "none"
	if o.userAgent != "" {
		ua = fmt.Sprintf("%q", o.userAgent)
	}
	fmt.Fprintf(&b, "user agent: %s\n", ua)
	fmt.Fprintf(&b, "class:      %s\n", checkClassText(class))
	if o.ip.IsValid() {
		fmt.Fprintf(&b, "client ip:  %s\n", o.ip)
	}
	for i := range results {
		r := &results[i]
		fmt.Fprintf(&b, "\n%s: %s\n", r.target, r.rec.Verdict)
		forged := ""
		if r.redecided {
			forged = r.claim.token
		}
		fmt.Fprintf(&b, "  reason:   %s: %s\n", r.rec.Reason, checkReasonText(&r.dec, o.policy, forged))
		if r.claim != nil {
			fmt.Fprintf(&b, "  identity: %s: %s%s\n", identityHead(r.rec.Identity, r.rec.IdentityMethod), r.claim.detail(), r.identityEffect())
		} else if r.dec.Undeclared {
			fmt.Fprintf(&b, "  identity: verified (ip_ranges): %s's published range holds the address, whatever the User-Agent says (--undeclared bind)\n", r.rec.Agent)
		}
		if r.rec.Escalation != "" {
			fmt.Fprintf(&b, "  escalated: %s, as a crawler recorded with a violation (--escalated)\n", r.rec.Escalation)
		}
		if r.dec.Reason == enforce.ReasonNamedGroup || r.dec.Reason == enforce.ReasonWildcardGroup {
			writeCheckRule(&b, r)
		}
		if r.rec.ContentUsage != "" {
			fmt.Fprintf(&b, "  usage:    %s\n", r.rec.ContentUsage)
			for _, ur := range r.usageRules {
				fmt.Fprintf(&b, "            line %d: %s\n", ur.Line, ur)
			}
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// writeCheckRule writes the group, the rule and the reading that decided.
func writeCheckRule(b *strings.Builder, r *checkResult) {
	if r.rec.GroupLine > 0 {
		fmt.Fprintf(b, "  group:    line %d (%s)\n", r.rec.GroupLine, checkGroupText(&r.dec))
	}
	if r.rec.RuleLine > 0 {
		fmt.Fprintf(b, "  rule:     line %d: %s\n", r.rec.RuleLine, robotsRuleText(r.dec.Verdict.Rule.Allow, r.rec.Rule))
	} else {
		b.WriteString("  rule:     none matches\n")
	}
	if r.dec.Reading == enforce.AsSent {
		fmt.Fprintf(b, "  reading:  %s\n", r.rec.Reading)
	} else {
		fmt.Fprintf(b, "  reading:  %s, %s\n", r.rec.Reading, r.readingPath)
	}
}

// identityEffect says what the claim's outcome did to the decision, as
// Handler.identity applies the policy.
func (r *checkResult) identityEffect() string {
	switch r.claim.res.Outcome {
	case verify.Forged:
		switch {
		case r.forged == enforce.ForgedDeny:
			return "; refused (--forged deny)"
		case r.forged == enforce.ForgedIgnore:
			return "; judged as claimed all the same (--forged ignore)"
		case r.redecided:
			return "; judged without the token it could not prove (--forged wildcard)"
		}
	case verify.Pending:
		return "; judged as claimed meanwhile, as the handler does by default (pending claimed)"
	}
	return ""
}

// checkSnapshotText says what a snapshot holds, for the first line of a check.
func checkSnapshotText(s *robotstxt.Snapshot) string {
	if s.Access != robotstxt.AccessAvailable {
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

// checkClassText names the client's class and the sign that shows it (see
// agent.Classifier for the order in which the signs are tried).
func checkClassText(c agent.Classification) string {
	class := checkClassName(c.Class)
	switch c.Automation {
	case agent.AutomatedNoUserAgent:
		return class + ": no User-Agent, which browsers always send"
	case agent.AutomatedCatalogue:
		return fmt.Sprintf("%s: the catalogue lists %s among %s (%s)", class, c.Token, checkCategoryText(c.Category), c.Category)
	case agent.AutomatedKeyword:
		if c.Class == agent.ClassCrawler {
			return fmt.Sprintf(`%s: the word %s names a crawler ("bot", "crawl", "spider", "fetcher", "scraper")`, class, c.Token)
		}
		return fmt.Sprintf("%s: the word %s names a monitor or a link previewer", class, c.Token)
	case agent.AutomatedParser:
		return class + ": github.com/mssola/useragent reads the header as a bot's"
	case agent.AutomatedShape:
		return class + ": the header is not shaped like a browser's (Mozilla/5.0 (<platform>) <engine>…) and shows no other sign"
	case agent.AutomatedLink:
		return class + `: the header gives a URL or an e-mail address, or reads "Mozilla/5.0 (compatible; <name>…)", as crawlers' do`
	case agent.AutomatedTooLong:
		return fmt.Sprintf("%s: the header is longer than the %d octets read, which no browser sends, and its rest could name any crawler", class, agent.MaxUserAgentLength)
	case agent.AutomatedRanges:
		return class + ": the address is in a crawler operator's published range list, whatever the header says (--undeclared bind)"
	}
	return class + ": the header is shaped like a browser's and shows no sign of automation"
}

// checkCategoryText says what the clients of a catalogue category are.
func checkCategoryText(c agent.Category) string {
	switch c {
	case agent.CategorySearch:
		return "search engines' crawlers"
	case agent.CategoryAI:
		return "AI companies' crawlers and agents"
	case agent.CategorySEO:
		return "SEO and marketing crawlers"
	case agent.CategorySocial:
		return "social networks' link previewers"
	case agent.CategoryArchive:
		return "archives and site copiers"
	case agent.CategoryMonitor:
		return "uptime and health monitors"
	case agent.CategoryFeed:
		return "feed readers"
	case agent.CategoryScanner:
		return "security and internet-wide scanners"
	case agent.CategoryTool:
		return "HTTP libraries and tools"
	}
	return "crawlers"
}

// checkClassName names a class in the text output.
func checkClassName(c agent.ClientClass) string {
	switch c {
	case agent.ClassCrawler:
		return "crawler"
	case agent.ClassAutomated:
		return "automated, not a crawler"
	}
	return "browser"
}

// checkClassPhrase says what a client of class c is, in a sentence.
func checkClassPhrase(c agent.ClientClass) string {
	switch c {
	case agent.ClassCrawler:
		return "a crawler"
	case agent.ClassAutomated:
		return "an automated client, not a crawler"
	}
	return "a browser"
}

// checkBindsText says whom the "*" group binds under policy p, and names
// the flag that says so.
func checkBindsText(p agent.WildcardPolicy) string {
	var whom string
	switch p {
	case agent.WildcardCrawlers:
		whom = "crawlers only"
	case agent.WildcardAutomated:
		whom = "crawlers and other automated clients"
	case agent.WildcardAll:
		whom = "every client, browsers included"
	default:
		whom = "nobody"
	}
	return fmt.Sprintf("%s (--wildcard %s)", whom, p)
}

// checkClientIs says what the client of dec is: "curl is an automated
// client, not a crawler".
func checkClientIs(dec *enforce.Decision) string {
	who := dec.Token
	switch {
	case dec.Classification.Automation == agent.AutomatedNoUserAgent:
		who = "a client without a User-Agent"
	case who == "" || dec.Classification.Class == agent.ClassBrowser:
		who = "the client" // a browser's first product name is Mozilla's
	}
	return who + " is " + checkClassPhrase(dec.Classification.Class)
}

// checkReasonText explains a decision's reason in words; forged is the
// token a forged claim was judged without (see identityPolicy), or "".
func checkReasonText(dec *enforce.Decision, p enforce.Policy, forged string) string {
	noName := "no group names the client, and "
	if forged != "" {
		noName = fmt.Sprintf("no group names the client once the token it could not prove (%s) is set aside, and ", forged)
	}
	binds := checkBindsText(p.Wildcard)
	switch dec.Reason {
	case enforce.ReasonNamedGroup:
		return fmt.Sprintf("a group names %s", dec.Token)
	case enforce.ReasonWildcardGroup:
		return fmt.Sprintf(`%sthe "*" group binds %s; %s`, noName, binds, checkClientIs(dec))
	case enforce.ReasonNoGroup:
		return noName + `there is no "*" group`
	case enforce.ReasonNotAutomated:
		if p.Wildcard == agent.WildcardNone {
			return noName + `the "*" group binds nobody (--wildcard none)`
		}
		if dec.Snapshot.Robots == nil {
			return fmt.Sprintf(`robots.txt is unreachable, which disallows only the clients the "*" group binds: %s; %s`, binds, checkClientIs(dec))
		}
		return fmt.Sprintf(`%sthe "*" group binds %s; %s`, noName, binds, checkClientIs(dec))
	case enforce.ReasonRobotsTxt:
		return "/robots.txt is always allowed (RFC 9309 §2.2.2)"
	case enforce.ReasonUnreachable:
		return fmt.Sprintf("robots.txt is unreachable: complete disallow for crawlers (RFC 9309 §2.3.1.4), here for the clients the \"*\" group binds, %s; %s",
			binds, checkClientIs(dec))
	case enforce.ReasonUnavailable:
		if dec.Snapshot.Access == robotstxt.AccessUnavailable {
			return "robots.txt is unavailable, the server says there is none: no rules apply (RFC 9309 §2.3.1.3)"
		}
		return "robots.txt is unreachable, and --unreachable allow lets every client pass"
	case enforce.ReasonAllowListed:
		return fmt.Sprintf("%s is in --allow-agents", dec.Token)
	case enforce.ReasonNoPath:
		return "the target has no path a rule could apply to"
	case enforce.ReasonUnreadableTarget:
		group := `the "*" group`
		if dec.Named {
			group = "the group naming " + dec.Token
		}
		return fmt.Sprintf("the server reads the target as no path a rule can be matched against, and %s disallows something: denied, since no rule can be shown not to apply", group)
	case enforce.ReasonInvalidHost:
		return "the request names no host whose robots.txt could be known: denied to the clients the rules bind"
	case enforce.ReasonHostBudget:
		return "the host is new and the budget of first robots.txt fetches (new_hosts) is spent: denied to the clients the rules bind until its robots.txt is fetched"
	case enforce.ReasonForged:
		return fmt.Sprintf("the client claims to be %s and failed to prove it, and --forged deny refuses such clients", dec.Token)
	case enforce.ReasonEscalated:
		return fmt.Sprintf("%s was recorded with a violation, and --escalated block denies it everything but /robots.txt for a while", dec.Token)
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
