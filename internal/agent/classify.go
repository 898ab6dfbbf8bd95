package agent

import (
	"fmt"
	"strings"

	"github.com/mssola/useragent"
)

// Automation tells whether, and by which sign, a client counts as
// automated (see Classifier for the order in which the signs are tried).
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
	// AutomatedKeyword: a product name, version or comment word contains
	// "bot", "crawl", "spider", "fetcher" or "scraper" (a crawler), or
	// names a monitor or a link previewer (see Classifier).
	AutomatedKeyword
	// AutomatedParser: github.com/mssola/useragent reads the header as a
	// bot's.
	AutomatedParser
	// AutomatedShape: the header is not shaped like a browser's (see
	// Classifier), and shows no other sign.
	AutomatedShape
	// AutomatedLink: the header gives a URL or an e-mail address, as
	// crawlers do to say who runs them, or follows their old convention
	// "Mozilla/5.0 (compatible; <name>…)".
	AutomatedLink
	// AutomatedTooLong: the header is longer than MaxUserAgentLength, and
	// what was read of it shows no crawler. No browser sends such a
	// header, and its unread rest could name any crawler: the client is
	// held to the "*" group as a crawler.
	AutomatedTooLong
	// AutomatedRanges: the header names no crawler a group names, but the
	// client's address is in a crawler operator's published range list
	// (enforce.JudgeConfig.Undeclared): an undeclared crawler.
	AutomatedRanges
	// AutomatedClaim: the header names a product token a group of the
	// site's robots.txt names, which the client could not prove: whatever
	// else its header says, it claims to be a crawler, and is held to the
	// "*" group as one.
	AutomatedClaim
)

var automationNames = [...]string{
	NotAutomated:         "none",
	AutomatedNoUserAgent: "no_user_agent",
	AutomatedCatalogue:   "catalogue",
	AutomatedKeyword:     "keyword",
	AutomatedParser:      "parser",
	AutomatedShape:       "shape",
	AutomatedLink:        "link",
	AutomatedTooLong:     "user_agent_too_long",
	AutomatedRanges:      "ip_ranges",
	AutomatedClaim:       "claim",
}

// String returns a stable name for logs: "none", "no_user_agent",
// "catalogue", "keyword", "parser", "shape", "link",
// "user_agent_too_long", "ip_ranges" or "claim".
func (a Automation) String() string {
	if int(a) < len(automationNames) {
		return automationNames[a]
	}
	return fmt.Sprintf("automation(%d)", uint8(a))
}

// A Classification says what kind of client sent a header, and why.
type Classification struct {
	// Class is the kind of client.
	Class ClientClass
	// Automation is the sign that decided the class; NotAutomated for a
	// browser.
	Automation Automation
	// Token says what decided: for AutomatedCatalogue the catalogued
	// candidate, for AutomatedKeyword the product name, version or comment
	// word that holds the keyword ("MJ12bot"), each a substring of the
	// header. Otherwise "".
	Token string
	// Category is the catalogue category of Token, for AutomatedCatalogue.
	Category Category
}

// Automated reports whether the client counts as automated: a crawler or
// another automated client.
func (c Classification) Automated() bool { return c.Class != ClassBrowser }

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

// A Classifier tells crawlers and other automated clients from people's
// browsers by their User-Agent header (RFC 9110 §10.1.5). It reads every
// word of the header within MaxUserAgentLength: product names, their
// versions, and the words of comments. The first of these signs decides:
//
//  1. no header, or only white space: automated (AutomatedNoUserAgent);
//  2. a candidate that the catalogue (see Crawlers) files under a
//     crawler's category (search, ai, seo, archive, feed, scanner,
//     crawler): a crawler (AutomatedCatalogue);
//  3. a word naming a monitor or a link previewer ("uptime", "monitor",
//     "healthcheck", "validator", "linkcheck", "preview", "unfurl"), when
//     the header is not a browser's or also holds a crawler keyword:
//     automated (AutomatedCatalogue when the catalogue names the client,
//     else AutomatedKeyword), since "UptimeBot" is a monitor however it
//     calls itself;
//  4. a product name, version or comment word containing "bot", "crawl",
//     "spider", "fetcher" or "scraper": a crawler (AutomatedKeyword);
//  5. a candidate that the catalogue files under another category (tool,
//     monitor, social): automated (AutomatedCatalogue);
//  6. a URL or an e-mail address, where crawlers say who runs them, or
//     the crawlers' old convention "Mozilla/<version> (compatible;
//     <name>…)": a crawler (AutomatedLink);
//  7. github.com/mssola/useragent reads the header as a bot's: a crawler
//     (AutomatedParser);
//  8. a header not shaped like a browser's: automated (AutomatedShape).
//
// Anything else is a browser, unless the header is longer than
// MaxUserAgentLength: a client whose header was not read to its end is a
// crawler (AutomatedTooLong) unless what was read shows one already, so
// that no padding hides a token.
//
// A browser's header is shaped
// "Mozilla/<version> (<platform>) <engine>…": its first word is
// Mozilla/<digit> or Opera/<digit>, a comment follows it (the platform
// comment, which names the operating system and the device, and holds no
// URL), and it names a rendering engine (AppleWebKit, WebKit, Gecko, KHTML,
// Trident, Presto, Goanna); a platform comment that starts "compatible" is
// a crawler's unless it names MSIE. Browsers that predate that shape are
// known by name (Opera, NetFront, Obigo, UC Browser, QQ Browser, HbbTV,
// J2ME phones' "Profile/MIDP", …). The words of a browser's platform
// comment never count as signs: device models are free text ("M bot 60"),
// and a person must not be bound for the name of their phone.
//
// Signs 1 to 6 and 8 are read by Tokenize, in the same pass as the
// candidates and without allocating, so that Classify costs next to
// nothing. The parse of sign 7 and
// of Browser costs a microsecond or two and a dozen or more allocations;
// its answers are kept in a bounded cache, so a warm classification does
// not allocate either. A client that sends a new header with every request
// pays for a parse each time; the cache's size bounds the memory, not that
// work.
//
// The cache is a HeaderCache: bounded, and lock-free for readers. It is safe
// for concurrent use; the zero value works and caches nothing.
type Classifier struct {
	parses HeaderCache[parsedHeader]
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
	return &Classifier{parses: NewHeaderCache[parsedHeader](entries, MaxCacheKeyLength)}
}

// Classify says what kind of client sent the header t was read from, and
// why (see Classifier). It does not allocate.
func (c *Classifier) Classify(t *Tokens) Classification {
	cl := c.classify(t)
	if t.oversized && cl.Class != ClassCrawler {
		return Classification{Class: ClassCrawler, Automation: AutomatedTooLong}
	}
	return cl
}

// classify is Classify for what was read of the header.
func (c *Classifier) classify(t *Tokens) Classification {
	if isBlank(t.header) {
		return Classification{Class: ClassAutomated, Automation: AutomatedNoUserAgent}
	}
	sg := &t.signs
	switch {
	case sg.crawler.n != 0:
		return Classification{Class: ClassCrawler, Automation: AutomatedCatalogue, Token: t.sign(sg.crawler), Category: sg.crawler.cat}
	case sg.role.n != 0 && (sg.keyword.n != 0 || !sg.browser):
		// A monitor or a link previewer, though it may call itself a bot;
		// a role word alone does not make a browser's header automated
		// ("MozillaDeveloperPreview").
		if sg.other.n != 0 {
			return Classification{Class: ClassAutomated, Automation: AutomatedCatalogue, Token: t.sign(sg.other), Category: sg.other.cat}
		}
		return Classification{Class: ClassAutomated, Automation: AutomatedKeyword, Token: t.sign(sg.role)}
	case sg.keyword.n != 0:
		return Classification{Class: ClassCrawler, Automation: AutomatedKeyword, Token: t.sign(sg.keyword)}
	case sg.other.n != 0:
		return Classification{Class: ClassAutomated, Automation: AutomatedCatalogue, Token: t.sign(sg.other), Category: sg.other.cat}
	case sg.link || sg.compatible:
		return Classification{Class: ClassCrawler, Automation: AutomatedLink}
	case c.parsed(t.header).bot:
		return Classification{Class: ClassCrawler, Automation: AutomatedParser}
	case !sg.browser:
		return Classification{Class: ClassAutomated, Automation: AutomatedShape}
	}
	return Classification{Class: ClassBrowser, Automation: NotAutomated}
}

// sign returns the word or candidate of the header that mark m points at.
func (t *Tokens) sign(m mark) string { return t.header[m.at : m.at+m.n] }

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
	return c.parses.Get(s, func(string) parsedHeader {
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
