package agent

import "fmt"

// ClientClass is what kind of client a User-Agent header shows (see
// Classifier): a person's browser, a crawler, or another automated client.
type ClientClass uint8

const (
	// ClassBrowser: a person's browser, as far as the header tells: shaped
	// like a browser's, with no sign of automation.
	ClassBrowser ClientClass = iota
	// ClassCrawler: a crawler, the client RFC 9309 addresses: a catalogued
	// crawler (search engines, AI companies, SEO tools, archives, feed
	// readers, scanners), or a client that calls itself a bot, crawler,
	// spider, fetcher or scraper.
	ClassCrawler
	// ClassAutomated: automated, but not a crawler: HTTP libraries and
	// tools, monitors, link previewers, clients with no User-Agent, and any
	// client whose header is not shaped like a browser's.
	ClassAutomated
)

var clientClassNames = [...]string{ClassBrowser: "browser", ClassCrawler: "crawler", ClassAutomated: "automated"}

// String returns the class's stable name, as compliance records write it
// in bot_class: "browser", "crawler" or "automated".
func (c ClientClass) String() string {
	if int(c) < len(clientClassNames) {
		return clientClassNames[c]
	}
	return fmt.Sprintf("client_class(%d)", uint8(c))
}

// WildcardPolicy says whom the robots.txt "*" group binds when no named
// group matches a request. RFC 9309 §2.2.1 addresses crawlers ("the crawler
// MUST obey the first group" … "if there is no group matching, crawlers
// MUST obey the group with a user-agent line with the "*" value"): a server
// that held people's browsers, or its own apps and health checks, to
// "User-agent: *" / "Disallow: /api/" would close the site to them, so by
// default the "*" group binds crawlers only.
//
// The policy never narrows a named group: a group always binds the agents it
// names, browser-like or not, so "User-agent: Mozilla" reaches browsers
// whatever the policy. Applying both rules is the caller's job.
type WildcardPolicy uint8

const (
	// WildcardCrawlers ("crawlers", the default): the "*" group binds the
	// clients a Classifier finds to be crawlers (ClassCrawler).
	WildcardCrawlers WildcardPolicy = iota
	// WildcardAutomated ("automated"): the "*" group binds every client a
	// Classifier finds automated: crawlers, and also HTTP libraries and
	// tools, monitors, link previewers, clients with no User-Agent and
	// clients whose header is not shaped like a browser's
	// (ClassCrawler and ClassAutomated). It was called "bots", a name
	// ParseWildcardPolicy still reads.
	WildcardAutomated
	// WildcardAll ("all"): the "*" group binds every client, browsers
	// included, as a literal reading of RFC 9309 would have it.
	WildcardAll
	// WildcardNone ("none"): the "*" group binds nobody; only named groups
	// are enforced.
	WildcardNone
)

// WildcardBots is the former name of WildcardAutomated.
//
// Deprecated: use WildcardAutomated, or WildcardCrawlers, the new default.
const WildcardBots = WildcardAutomated

var wildcardPolicyNames = [...]string{
	WildcardCrawlers:  "crawlers",
	WildcardAutomated: "automated",
	WildcardAll:       "all",
	WildcardNone:      "none",
}

// deprecatedBots is the former name of "automated", still read.
const deprecatedBots = "bots"

// ParseWildcardPolicy reads a policy name: "crawlers", "automated", "all"
// or "none". "bots", the name "automated" had before, is read as
// "automated".
func ParseWildcardPolicy(s string) (WildcardPolicy, error) {
	if s == deprecatedBots {
		return WildcardAutomated, nil
	}
	for p, name := range wildcardPolicyNames {
		if s == name {
			return WildcardPolicy(p), nil
		}
	}
	return WildcardCrawlers, fmt.Errorf("wildcard policy %q: want \"crawlers\", \"automated\", \"all\" or \"none\"", s)
}

// String returns the policy's name, as ParseWildcardPolicy reads it.
func (p WildcardPolicy) String() string {
	if int(p) < len(wildcardPolicyNames) {
		return wildcardPolicyNames[p]
	}
	return fmt.Sprintf("wildcard_policy(%d)", uint8(p))
}

// MarshalText returns the policy's name, for configuration files.
func (p WildcardPolicy) MarshalText() ([]byte, error) {
	if int(p) >= len(wildcardPolicyNames) {
		return nil, fmt.Errorf("wildcard policy %d: not a policy", uint8(p))
	}
	return []byte(wildcardPolicyNames[p]), nil
}

// UnmarshalText reads a policy name, as ParseWildcardPolicy does.
func (p *WildcardPolicy) UnmarshalText(text []byte) error {
	v, err := ParseWildcardPolicy(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Binds reports whether the "*" group binds a client of class c.
func (p WildcardPolicy) Binds(c ClientClass) bool {
	switch p {
	case WildcardAll:
		return true
	case WildcardNone:
		return false
	case WildcardAutomated:
		return c != ClassBrowser
	}
	return c == ClassCrawler
}
