package enforce

import (
	"fmt"
	"strings"

	"github.com/mssola/useragent"
)

// WildcardPolicy says whom the robots.txt "*" group binds when no named
// group matches a request. RFC 9309 addresses crawlers; a server that held
// people's browsers to "User-agent: *" / "Disallow: /" would close the site
// to its readers, so by default the "*" group binds automated clients only.
//
// The policy never narrows a named group: a group always binds the agents it
// names, browser-like or not, so "User-agent: Mozilla" reaches browsers
// whatever the policy. Applying both rules is the caller's job.
type WildcardPolicy uint8

const (
	// WildcardBots ("bots", the default): the "*" group binds the clients a
	// Classifier finds automated.
	WildcardBots WildcardPolicy = iota
	// WildcardAll ("all"): the "*" group binds every client, browsers
	// included, as a literal reading of RFC 9309 would have it.
	WildcardAll
	// WildcardNone ("none"): the "*" group binds nobody; only named groups
	// are enforced.
	WildcardNone
)

var wildcardPolicyNames = [...]string{WildcardBots: "bots", WildcardAll: "all", WildcardNone: "none"}

// ParseWildcardPolicy reads a policy name: "bots", "all" or "none".
func ParseWildcardPolicy(s string) (WildcardPolicy, error) {
	for p, name := range wildcardPolicyNames {
		if s == name {
			return WildcardPolicy(p), nil
		}
	}
	return WildcardBots, fmt.Errorf("wildcard policy %q: want \"bots\", \"all\" or \"none\"", s)
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

// Binds reports whether the "*" group binds a client that is, or is not,
// automated.
func (p WildcardPolicy) Binds(automated bool) bool {
	switch p {
	case WildcardAll:
		return true
	case WildcardNone:
		return false
	}
	return automated
}

// Automation tells whether, and by which sign, a client counts as
// automated.
type Automation uint8

const (
	// NotAutomated: no sign of automation; a browser, as far as the header
	// tells.
	NotAutomated Automation = iota
	// AutomatedNoUserAgent: the header is missing, empty or white space.
	// Browsers always send one.
	AutomatedNoUserAgent
	// AutomatedCatalogue: a candidate token is in the catalogue (see
	// Crawlers), which includes HTTP libraries and tools.
	AutomatedCatalogue
	// AutomatedKeyword: a product name or comment word contains "bot",
	// "crawl", "spider", "fetcher" or "scraper" (see Classifier).
	AutomatedKeyword
	// AutomatedParser: github.com/mssola/useragent reads the header as a
	// bot's.
	AutomatedParser
)

var automationNames = [...]string{
	NotAutomated:         "none",
	AutomatedNoUserAgent: "no_user_agent",
	AutomatedCatalogue:   "catalogue",
	AutomatedKeyword:     "keyword",
	AutomatedParser:      "parser",
}

// String returns a stable name for logs: "none", "no_user_agent",
// "catalogue", "keyword" or "parser".
func (a Automation) String() string {
	if int(a) < len(automationNames) {
		return automationNames[a]
	}
	return fmt.Sprintf("automation(%d)", uint8(a))
}

// A Classification says whether a client is automated, and why.
type Classification struct {
	Automation Automation
	// Token says what decided: for AutomatedCatalogue the catalogued
	// candidate, for AutomatedKeyword the product name that holds the
	// keyword ("MJ12bot"), each a substring of the header. Otherwise "".
	Token string
	// Category is the catalogue category of Token, for AutomatedCatalogue.
	Category Category
}

// Automated reports whether the client counts as automated.
func (c Classification) Automated() bool { return c.Automation != NotAutomated }

// ClassifierCacheSize is the number of parsed headers a Classifier keeps by
// default. Browser headers repeat heavily (a few hundred cover most
// traffic), and an entry costs at most about 400 octets, so 4096 entries hold a busy
// site's browsers in under 2 MB.
const ClassifierCacheSize = 4096

// MaxCacheKeyLength is the number of octets of a header that a cache entry
// copies. Longer headers are told apart by their length and a 64-bit seeded
// hash of all the octets read (see MaxUserAgentLength) besides: two headers
// that agree on all three are taken for the same with odds of 2⁻⁶⁴, which
// no client can improve on without knowing the process's random seed. The
// copy means an entry never keeps a request's memory alive.
const MaxCacheKeyLength = 256

// maxBrowserLength bounds the browser name and version kept per entry.
const maxBrowserLength = 64

// A Classifier tells automated clients from browsers by their User-Agent
// header. The cheap signs are tried first, without allocating: a missing
// header, a catalogued token, a keyword in a product name or comment word.
// Only when none decides is the header parsed by github.com/mssola/useragent,
// which costs a microsecond or two and a dozen or more allocations; its
// answers are kept in a bounded cache, so a warm classification does not
// allocate either. A client that sends a new header with every request
// pays for a parse each time; the cache's size bounds the memory, not that
// work.
//
// The cache is a headerCache: bounded, and lock-free for readers. It is safe
// for concurrent use; the zero value works and caches nothing.
type Classifier struct {
	parses headerCache[parsedHeader]
}

// parsedHeader is the parser's answer for one header.
type parsedHeader struct {
	bot     bool
	browser string
	version string
}

// NewClassifier returns a Classifier whose cache holds at most entries
// parsed headers (rounded down to an even number, and at least 2); entries
// <= 0 means ClassifierCacheSize.
func NewClassifier(entries int) *Classifier {
	if entries <= 0 {
		entries = ClassifierCacheSize
	}
	return &Classifier{parses: newHeaderCache[parsedHeader](entries, MaxCacheKeyLength)}
}

// Classify says whether the client that sent the header t was read from is
// automated. It does not allocate once the header's parse is cached.
func (c *Classifier) Classify(t *Tokens) Classification {
	if isBlank(t.header) {
		return Classification{Automation: AutomatedNoUserAgent}
	}
	// Every word of the header counts, not only the candidates t lists: a
	// catalogued token anywhere, else a keyword in a product name.
	sc := scanner{s: t.header, cut: t.cut}
	keyword := ""
	for sc.next() {
		if run := sc.runEnd - sc.start; run > 0 {
			tok := t.header[sc.start:sc.runEnd]
			if cat := lookupCategory(tok); cat != CategoryNone {
				return Classification{Automation: AutomatedCatalogue, Token: tok, Category: cat}
			}
		}
		// The whole product name, digits included: "MJ12bot", "360Spider".
		if w := t.header[sc.start:sc.nameEnd]; keyword == "" && hasKeyword(w) {
			keyword = w
		}
	}
	if keyword != "" {
		return Classification{Automation: AutomatedKeyword, Token: keyword}
	}
	if c.parsed(t.header).bot {
		return Classification{Automation: AutomatedParser}
	}
	return Classification{Automation: NotAutomated}
}

// Browser returns the browser name and version github.com/mssola/useragent
// reads from the header ua (for a bot, its name), for audit records. The
// answer shares Classify's cache.
func (c *Classifier) Browser(ua string) (name, version string) {
	if len(ua) > MaxUserAgentLength {
		ua = ua[:MaxUserAgentLength]
	}
	e := c.parsed(ua)
	return e.browser, e.version
}

// parsed returns the parser's answer for header s, from the cache when it
// holds it.
func (c *Classifier) parsed(s string) *parsedHeader {
	return c.parses.get(s, func(string) parsedHeader {
		// The whole header is parsed, not the key: only the first
		// MaxCacheKeyLength octets of a header are copied.
		ua := useragent.New(s)
		name, version := ua.Browser()
		return parsedHeader{
			bot:     ua.Bot(),
			browser: strings.Clone(name[:min(len(name), maxBrowserLength)]),
			version: strings.Clone(version[:min(len(version), maxBrowserLength)]),
		}
	})
}

// cached returns the number of entries in the cache.
func (c *Classifier) cached() int { return c.parses.len() }

// isBlank reports whether a header is empty or holds only white space.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

// hasKeyword reports whether the product name w contains, ignoring case,
// "bot", "crawl", "spider", "fetcher" or "scraper": the words crawlers
// name themselves with. It reads whole product names, digits included, so
// "MJ12bot" and "AI2Bot" count. Names of Cubot phones, which Android
// browsers send, do not.
func hasKeyword(w string) bool {
	if len(w) >= 5 && equalFold(w[:5], "cubot") {
		return false
	}
	for i := 0; i+3 <= len(w); i++ {
		var kw string
		switch w[i] | 0x20 {
		case 'b':
			kw = "bot"
		case 'c':
			kw = "crawl"
		case 's':
			kw = "spider"
			if len(w)-i >= 2 && w[i+1]|0x20 == 'c' {
				kw = "scraper"
			}
		case 'f':
			kw = "fetcher"
		default:
			continue
		}
		if len(w)-i >= len(kw) && foldedPrefix(w[i:], kw) {
			return true
		}
	}
	return false
}

// foldedPrefix reports whether s starts with the lower-case word kw,
// ignoring the case of s.
func foldedPrefix(s, kw string) bool {
	for j := 0; j < len(kw); j++ {
		if s[j]|0x20 != kw[j] {
			return false
		}
	}
	return true
}
