package enforce

import (
	"slices"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// MaxUserAgentLength is the number of octets of a User-Agent header that are
// read. Real headers are far shorter (the longest common ones, in-app
// browsers, stay under 512 octets), and a crawler names itself within them,
// while a server may accept headers of a megabyte: reading a bounded prefix
// keeps the work per request constant whatever the client sends. A word that
// the limit cuts in two is dropped, since its start could name a different
// token than the whole.
const MaxUserAgentLength = 1024

// MaxCandidates is the number of candidate tokens kept from one header.
// Browsers send about 15 distinct words, most of them generic; the rest of a
// longer header is dropped. A non-generic candidate takes the place of a
// generic one when the list is full, so a crawler's own token survives a
// long browser-like prefix.
const MaxCandidates = 24

// Tokens are the candidate product tokens of a User-Agent header: the strings
// that could name a robots.txt group. It is a value with no pointers into the
// heap other than substrings of the header, so it is built without
// allocating.
//
// The header is read by the grammar of RFC 9110 §10.1.5: products
// (token ["/" version]) and parenthesised comments, which may nest and may
// hold backslash quoted-pairs. Each word of a product name or of a comment
// item yields the run of [A-Za-z_-] it starts with, the same rule rules uses
// for the token of a user-agent line; comment items are split on ";" and ","
// and then on white space, so the "Slurp" of "Yahoo! Slurp" is a candidate as
// well as "Yahoo". Words that are URLs (they contain "://" or start with
// "www.") or e-mail addresses (they contain "@") are skipped. ";", ",", "["
// and "]" separate words outside comments as well, which reads the
// non-standard suffixes of some in-app browsers.
//
// Candidates are kept once each (compared case-insensitively): first the
// non-generic ones, then the generic ones (see Generic), each in header
// order.
type Tokens struct {
	header string
	// Non-generic candidates fill cands from index 0 up, generic ones from
	// the top down, so that either kind can be dropped first.
	cands          [MaxCandidates]candidate
	named, generic uint8
	// seen is a filter of the hashes of the candidates kept, to skip most
	// duplicate checks.
	seen [2]uint64
	// keyword is the first word that yields no candidate, since it starts
	// with no letter, but holds a crawler keyword (see hasKeyword).
	keyword string
}

// A candidate is one candidate token and what is known of it. It holds
// offsets into the header rather than strings, which keeps Tokens small
// enough to zero and copy in a few nanoseconds.
type candidate struct {
	// start and end delimit the word the candidate was read from, up to
	// its first "/"; the candidate is its first run octets.
	start, end, run uint16
	cat             Category // catalogue category, or CategoryNone
	hash            uint32   // top 32 bits of the candidate's tokenHash
}

// Tokenize reads the candidate tokens of the User-Agent header ua. It reads
// at most MaxUserAgentLength octets, keeps at most MaxCandidates candidates,
// runs in time linear in the octets read, and does not allocate.
func Tokenize(ua string) (t Tokens) {
	s := ua
	cut := len(s) > MaxUserAgentLength
	if cut {
		s = s[:MaxUserAgentLength]
	}
	t.header = s
	depth := 0 // comment nesting
	i := 0
	for i < len(s) {
		c := s[i]
		if byteClass[c]&classDelim != 0 {
			switch c {
			case '(':
				depth++
			case ')':
				if depth > 0 {
					depth--
				}
			}
			i++
			continue
		}
		start := i
		for i < len(s) && byteClass[s[i]]&classToken != 0 {
			i++
		}
		runEnd, nameEnd := i, -1
		skip := false // a URL or an e-mail address
		for i < len(s) {
			c := s[i]
			k := byteClass[c]
			if k&(classDelim|classSpecial) == 0 {
				i++
				continue
			}
			if k&classDelim != 0 {
				break
			}
			switch c {
			case '/':
				if nameEnd < 0 {
					nameEnd = i
				}
			case '@':
				skip = true
			case ':':
				skip = skip || i+2 < len(s) && s[i+1] == '/' && s[i+2] == '/'
			case '\\':
				if depth > 0 {
					i++ // a quoted-pair: the next octet is literal, even a delimiter
				}
			}
			i++
		}
		if i > len(s) {
			i = len(s) // a backslash was the last octet
		}
		if cut && i == len(s) && byteClass[ua[i]]&classDelim == 0 {
			break // the limit cut this word
		}
		if nameEnd < 0 {
			nameEnd = i
		}
		if skip || runEnd-start == 3 && isWWW(s[start:runEnd], s[runEnd:]) {
			continue
		}
		if runEnd == start {
			// No candidate ("360Spider", "5.0"), but the classifier
			// still wants to know of a crawler's name.
			if t.keyword == "" && hasKeyword(s[start:nameEnd]) {
				t.keyword = s[start:nameEnd]
			}
			continue
		}
		t.add(start, nameEnd, runEnd-start)
	}
	return t
}

// isWWW reports whether a word whose token run is run, followed by rest, is
// a host name starting "www.".
func isWWW(run, rest string) bool {
	return len(run) == 3 && run[0]|0x20 == 'w' && run[1]|0x20 == 'w' && run[2]|0x20 == 'w' &&
		len(rest) > 0 && rest[0] == '.'
}

// add keeps the candidate header[start:start+run], read from the word
// header[start:end], unless it is a duplicate or there is no room for it.
func (t *Tokens) add(start, end, run int) {
	tok := t.header[start : start+run]
	// foldHead(tok) in one load, when the header has eight octets from
	// start (written out here: a call per candidate shows in benchmarks).
	var head uint64
	if s := t.header; start+8 <= len(s) {
		s = s[start:]
		_ = s[7]
		head = uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		head |= 0x2020202020202020
		if run < 8 {
			head &= 1<<(8*run) - 1
		}
	} else {
		head = foldHead(tok)
	}
	hash := tokenHash(head, run)
	h := uint32(hash >> 32)
	word, bit := h>>31, uint64(1)<<(h>>(32-7)&63)
	if t.seen[word]&bit != 0 && t.has(tok, h) {
		return
	}
	c := candidate{start: uint16(start), end: uint16(end), run: uint16(run), hash: h}
	generic := run <= 2 || run == 5 && isGenericShape(tok)
	if !generic {
		switch k := staticTokens.lookup(tok, head, hash); k {
		case kindGeneric:
			generic = true
		default:
			c.cat = Category(k)
		}
	}
	free := MaxCandidates - int(t.named) - int(t.generic)
	switch {
	case generic:
		if free == 0 {
			return
		}
		t.generic++
		t.cands[MaxCandidates-int(t.generic)] = c
	default:
		if free == 0 {
			if t.generic == 0 {
				return
			}
			t.generic-- // the last generic candidate makes room
		}
		t.cands[t.named] = c
		t.named++
	}
	t.seen[word] |= bit
}

// has reports whether tok, whose hash is h, is a candidate already.
func (t *Tokens) has(tok string, h uint32) bool {
	for i := range t.Len() {
		c := &t.cands[t.slot(i)]
		if c.hash == h && equalFold(t.tok(c), tok) {
			return true
		}
	}
	return false
}

// slot returns the index in cands of candidate i.
func (t *Tokens) slot(i int) int {
	if i < int(t.named) {
		return i
	}
	return MaxCandidates - 1 - (i - int(t.named))
}

// tok returns the token of candidate c.
func (t *Tokens) tok(c *candidate) string { return t.header[c.start : c.start+c.run] }

// word returns the word candidate c was read from, up to its first "/": the
// product name, digits included, that the keyword check reads.
func (t *Tokens) word(c *candidate) string { return t.header[c.start:c.end] }

// UserAgent returns the part of the header that was read: at most its first
// MaxUserAgentLength octets.
func (t *Tokens) UserAgent() string { return t.header }

// Len returns the number of candidates.
func (t *Tokens) Len() int { return int(t.named) + int(t.generic) }

// At returns candidate i, for 0 <= i < Len(): a non-empty [A-Za-z_-] run of
// the header. Non-generic candidates come first.
func (t *Tokens) At(i int) string {
	if i < 0 || i >= t.Len() {
		panic("enforce: Tokens.At index out of range")
	}
	return t.tok(&t.cands[t.slot(i)])
}

// Generic reports whether candidate i is a generic browser token (see
// GenericTokens), which names a group only when no other candidate does.
func (t *Tokens) Generic(i int) bool { return i >= int(t.named) }

// Byte classes for the tokenizer.
const (
	classToken   = 1 << iota // [A-Za-z_-]: part of a product token
	classDelim               // ends a word: white space, controls, ( ) ; , [ ]
	classSpecial             // means something inside a word: / @ : \
)

var byteClass = func() (c [256]uint8) {
	for b := range 256 {
		switch {
		case isTokenChar(byte(b)):
			c[b] = classToken
		case b <= ' ' || b == 0x7f || b == '(' || b == ')' || b == ';' || b == ',' || b == '[' || b == ']':
			c[b] = classDelim
		case b == '/' || b == '@' || b == ':' || b == '\\':
			c[b] = classSpecial
		}
	}
	return c
}()

// isTokenChar reports whether c may appear in a product token, as rules
// reads one.
func isTokenChar(c byte) bool { return rules.IsProductTokenChar(c) }

// equalFold reports whether the [A-Za-z_-] tokens a and b are equal, ignoring
// case. Within that alphabet, setting bit 0x20 folds case and nothing else.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i]|0x20 {
			return false
		}
	}
	return true
}

// foldHead returns the first eight octets of the [A-Za-z_-] token tok,
// case folded, as a little-endian number. With the token's length it
// identifies a token of up to eight octets exactly, which is most of them;
// it is never 0 for a non-empty token.
func foldHead(tok string) uint64 {
	var head uint64
	for i := range min(len(tok), 8) {
		head |= uint64(tok[i]|0x20) << (8 * i)
	}
	return head
}

// tokenHash hashes a token of length n from its folded head
// (multiplicative hashing: take the top bits).
func tokenHash(head uint64, n int) uint64 {
	return (head ^ uint64(n)<<32) * 0x9E3779B97F4A7C15
}

// GenericTokens returns the product tokens and comment words that browsers
// send whatever they are: engine and browser names, and the words that
// describe the platform. A generic candidate names a robots.txt group only
// when no other candidate of the header does, so that "User-agent: Mozilla"
// still reaches browsers, but a crawler that dresses as a browser answers to
// its own group. The words are compared case-insensitively. Besides these,
// every candidate of one or two letters ("U", "NT", "rv", "en") and every
// locale ("en-US", "pt_BR") is generic.
func GenericTokens() []string { return slices.Clone(genericTokens) }

// genericTokens is the list GenericTokens returns. Cubot, a phone maker, is
// in it because its device names appear in the comments of Android browsers.
var genericTokens = []string{
	// Engines and browsers.
	"Mozilla", "AppleWebKit", "WebKit", "KHTML", "like", "Gecko", "Chrome", "Chromium", "CriOS",
	"Safari", "Version", "Mobile", "Firefox", "FxiOS", "Focus", "Edg", "EdgA", "EdgiOS", "Edge",
	"OPR", "OPT", "Opera", "Presto", "Trident", "MSIE", "IEMobile", "SamsungBrowser", "YaBrowser",
	"Vivaldi", "UCBrowser", "Silk", "Goanna", "PaleMoon", "SeaMonkey", "Electron", "wv",
	// Platforms and the words of their comments.
	"compatible", "Windows", "Win", "WOW", "NT", "Phone", "Linux", "Ubuntu", "Fedora", "Android",
	"Macintosh", "Mac", "Intel", "PPC", "OS", "iPhone", "iPad", "iPod", "CPU", "CrOS", "X", "U",
	"Build", "Tablet", "Touch", "ARM", "aarch", "armv", "amd", "Media", "Center", "PC", "InfoPath",
	"CLR", "SLCC", "Zune", "Cubot",
}

// isGenericShape reports whether tok is generic by its shape alone: one or
// two letters, or a locale such as "en-US".
func isGenericShape(tok string) bool {
	if len(tok) <= 2 {
		return true
	}
	return len(tok) == 5 && (tok[2] == '-' || tok[2] == '_') &&
		isLetter(tok[0]) && isLetter(tok[1]) && isLetter(tok[3]) && isLetter(tok[4])
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
