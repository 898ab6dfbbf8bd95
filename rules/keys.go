package rules

// A key is the kind of a robots.txt record.
type key uint8

const (
	keyUnknown key = iota
	keyUserAgent
	keyAllow
	keyDisallow
	keySitemap
	keyCrawlDelay
	keyContentUsage  // draft-ietf-aipref-attach-05 §3
	keyContentSignal // contentsignals.org
	keyOther         // a known extension record, kept but not interpreted
)

// keySpelling maps a spelling a key starts with to its kind. Like Google's
// parser, a key is recognised by its start, case-insensitively, and common
// typos are accepted (Google-compatible; RFC 9309 §2.2 names only the exact
// keys). Order matters: the first spelling that fits wins.
var keySpellings = []struct {
	spelling string
	key      key
	typo     bool
}{
	{"user-agent", keyUserAgent, false},
	{"useragent", keyUserAgent, true},
	{"user agent", keyUserAgent, true},
	{"allow", keyAllow, false},
	{"disallow", keyDisallow, false},
	{"dissallow", keyDisallow, true},
	{"dissalow", keyDisallow, true},
	{"disalow", keyDisallow, true},
	{"diasllow", keyDisallow, true},
	{"disallaw", keyDisallow, true},
	{"sitemap", keySitemap, false},
	{"site-map", keySitemap, true},
}

// otherKeys are records outside RFC 9309 that are common enough not to be
// reported as unknown. They are kept in Robots.Records.
var otherKeys = []string{"host", "clean-param", "request-rate", "visit-time", "noindex"}

// canonicalKeys names each key kind as the RFC (or common use) spells it.
var canonicalKeys = map[key]string{
	keyUserAgent:     "user-agent",
	keyAllow:         "allow",
	keyDisallow:      "disallow",
	keySitemap:       "sitemap",
	keyCrawlDelay:    "crawl-delay",
	keyContentUsage:  "content-usage",
	keyContentSignal: "content-signal",
}

// classifyKey returns the kind of the key as written, and whether it was
// accepted only as a typo or a longer spelling of a known key.
func classifyKey(k string) (kind key, inexact bool) {
	if k == "" {
		return keyUnknown, false
	}
	for _, s := range keySpellings {
		if lowerASCII(k[0]) == s.spelling[0] && hasPrefixFold(k, s.spelling) {
			return s.key, s.typo || len(k) != len(s.spelling)
		}
	}
	if equalFoldASCII(k, "crawl-delay") {
		return keyCrawlDelay, false
	}
	// The draft and contentsignals.org name the keys exactly; no typo is
	// read as them.
	if equalFoldASCII(k, "content-usage") {
		return keyContentUsage, false
	}
	if equalFoldASCII(k, "content-signal") {
		return keyContentSignal, false
	}
	for _, o := range otherKeys {
		if equalFoldASCII(k, o) {
			return keyOther, false
		}
	}
	return keyUnknown, false
}

// hasPrefixFold reports whether s starts with the lower-case ASCII prefix,
// ignoring ASCII case (see fold.go).
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix)
}
