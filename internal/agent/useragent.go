package agent

import (
	"iter"
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

// MaxCandidates is the number of candidate tokens a Tokens value keeps
// with what is known of them. Browsers send about 15 to 30 distinct words
// (in-app browsers the most), so real headers fit; a header with more keeps
// the candidates of its first words, and the place of the first word it
// could not keep, from which the group choice and the classifier read the
// rest: every word within MaxUserAgentLength counts, however many there are
// (1,024 octets hold at most 512 words), while the value stays small enough
// to zero and copy in a few nanoseconds.
const MaxCandidates = 64

// Tokens are the candidate product tokens of a User-Agent header: the strings
// that could name a robots.txt group. It is a value with no pointers into the
// heap other than the header itself, so it is built without allocating.
//
// The header is read by the grammar of RFC 9110 §10.1.5: products
// (token ["/" version]) and parenthesised comments, which may nest and may
// hold backslash quoted-pairs. Each word of a product name or of a comment
// item yields the run of [A-Za-z_-] it starts with, the same rule rules uses
// for the token of a user-agent line, and so does each version of a product
// ("Ask Jeeves/Teoma" yields "Teoma" too; see nextPiece); comment items are
// split on ";" and ","
// and then on white space, so the "Slurp" of "Yahoo! Slurp" is a candidate as
// well as "Yahoo". Words that are URLs (they contain "://" or start with
// "www.") or e-mail addresses (they contain "@") are skipped. ";", ",", "["
// and "]" separate words outside comments as well, which reads the
// non-standard suffixes of some in-app browsers, and "+" separates words
// everywhere but in URLs and addresses, since some clients send it for a
// space ("Mozilla/5.0+(compatible;+PiplBot;+http://…)").
//
// Candidates are listed once each (compared case-insensitively): first the
// non-generic ones, then the generic ones (see Generic), each in header
// order. At most MaxCandidates are listed (see Complete); the group choice
// (ChooseGroups, GroupIndex), Has and the Classifier consider every
// candidate of the header all the same.
type Tokens struct {
	header string
	// Non-generic candidates fill cands from index 0 up, generic ones from
	// the top down.
	cands          [MaxCandidates]candidate
	named, generic uint8
	// cut says that the length limit cut the header's last word, which is
	// not read; oversized that the header is longer than the limit.
	cut, oversized bool
	// tail is 1 + the offset of the first word a candidate of which is not
	// kept, and tailDepth the comment nesting there; tail is 0 when every
	// candidate is kept.
	tail, tailDepth uint16
	// seen is a filter of the hashes of the candidates kept, to skip most
	// duplicate checks.
	seen [4]uint64
	// signs are what the header shows of the client, for the Classifier.
	signs signs
}

// A candidate is one candidate token kept: offsets into the header rather
// than a string, and its hash, which keeps Tokens small.
type candidate struct {
	start, run uint16 // the candidate is header[start:start+run]
	hash       uint16 // top 16 bits of the candidate's tokenHash
}

// Tokenize reads the candidate tokens of the User-Agent header ua. It reads
// at most MaxUserAgentLength octets, runs in time linear in the octets
// read, and does not allocate.
func Tokenize(ua string) (t Tokens) {
	sc := newScanner(ua)
	t.header, t.cut, t.oversized = sc.s, sc.cut, len(ua) > MaxUserAgentLength
	var sr signReader
	for sc.nextPiece() {
		var kind tokenKind
		switch run := sc.prun - sc.pstart; {
		case run == 0:
			// No candidate: "360Spider", "5.0".
		case t.tail != 0:
			kind = kindOf(t.header[sc.pstart:sc.prun])
		default:
			var full bool
			if kind, full = t.add(sc.pstart, run); full {
				// Full: this word and the rest are read again when
				// needed.
				t.tail, t.tailDepth = uint16(sc.from)+1, uint16(sc.fromDepth)
			}
		}
		sr.piece(&sc, t.header, kind)
	}
	t.signs = sr.finish(&sc)
	return t
}

// Candidates yields the candidate tokens of the header by which a group
// may be chosen, in the order the choice considers them, each with its
// key (see TokenKey): the non-generic ones, or with generic the generic
// ones, each in header order, those past MaxCandidates read again from
// the header. A header's generic words name a group only when no other
// word does.
func (t *Tokens) Candidates(generic bool) iter.Seq2[string, uint16] {
	return func(yield func(string, uint16) bool) {
		if !generic {
			for j := range int(t.named) {
				if c := &t.cands[j]; !yield(t.tok(c), c.hash) {
					return
				}
			}
		} else {
			for j := MaxCandidates - 1; j >= MaxCandidates-int(t.generic); j-- {
				if c := &t.cands[j]; !yield(t.tok(c), c.hash) {
					return
				}
			}
		}
		if t.tail == 0 {
			return
		}
		sc, _ := t.rest()
		for sc.nextPiece() {
			run := sc.prun - sc.pstart
			if run == 0 {
				continue
			}
			tok := t.header[sc.pstart:sc.prun]
			head := foldHead(tok)
			hash := tokenHash(head, run)
			if isGeneric(tok, head, hash) != generic {
				continue
			}
			if !yield(tok, uint16(hash>>48)) {
				return
			}
		}
	}
}

// TokenKey returns the key of a product token that Candidates yields with
// a candidate of the same token, whatever its case: a filter of the
// tokens a robots.txt names, keyed by it, tells most candidates that name
// no group without a lookup.
func TokenKey(tok string) uint16 {
	return uint16(tokenHash(foldHead(tok), len(tok)) >> 48)
}

// add keeps the candidate header[start:start+run], unless it is a duplicate
// or, reporting full, there is no room for it. It returns what the static
// tables know of the candidate (see tokenKind).
func (t *Tokens) add(start, run int) (kind tokenKind, full bool) {
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
	kind = staticKind(tok, head, hash)
	h := uint16(hash >> 48)
	word, bit := h>>14, uint64(1)<<(h>>8&63)
	if t.seen[word]&bit != 0 && t.has(tok, h) {
		return kind, false
	}
	if int(t.named)+int(t.generic) == MaxCandidates {
		return kind, true
	}
	c := candidate{start: uint16(start), run: uint16(run), hash: h}
	if kind == kindGeneric {
		t.generic++
		t.cands[MaxCandidates-int(t.generic)] = c
	} else {
		t.cands[t.named] = c
		t.named++
	}
	t.seen[word] |= bit
	return kind, false
}

// staticKind returns what the static tables know of the candidate tok,
// whose folded head is head and whose tokenHash is hash: kindGeneric for a
// generic candidate (see GenericTokens), else its catalogue category, or 0.
func staticKind(tok string, head, hash uint64) tokenKind {
	if len(tok) <= 2 || len(tok) == 5 && isGenericShape(tok) {
		return kindGeneric
	}
	return staticTokens.lookup(tok, head, hash)
}

// kindOf is staticKind for a candidate alone.
func kindOf(tok string) tokenKind {
	head := foldHead(tok)
	return staticKind(tok, head, tokenHash(head, len(tok)))
}

// isGeneric reports whether the candidate tok, whose folded head is head and
// whose tokenHash is hash, is generic (see GenericTokens).
func isGeneric(tok string, head, hash uint64) bool {
	return staticKind(tok, head, hash) == kindGeneric
}

// rest returns a scanner at the first word a candidate of which t did not
// keep, and false when it kept them all.
func (t *Tokens) rest() (scanner, bool) {
	if t.tail == 0 {
		return scanner{}, false
	}
	return scanner{s: t.header, cut: t.cut, i: int(t.tail) - 1, depth: int(t.tailDepth)}, true
}

// Complete reports whether Len and At list every candidate of the header:
// false for a header with more than MaxCandidates distinct candidates.
func (t *Tokens) Complete() bool { return t.tail == 0 }

// Has reports whether tok is a candidate of the header, compared
// case-insensitively, whether or not it is among those listed.
func (t *Tokens) Has(tok string) bool {
	if !isToken(tok) {
		return false
	}
	h := uint16(tokenHash(foldHead(tok), len(tok)) >> 48)
	if t.has(tok, h) {
		return true
	}
	sc, ok := t.rest()
	for ok && sc.nextPiece() {
		if equalFold(t.header[sc.pstart:sc.prun], tok) {
			return true
		}
	}
	return false
}

// has reports whether tok, whose hash is h, is a candidate kept.
func (t *Tokens) has(tok string, h uint16) bool {
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

// UserAgent returns the part of the header that was read: at most its first
// MaxUserAgentLength octets.
func (t *Tokens) UserAgent() string { return t.header }

// Len returns the number of candidates listed: all of them, or the first
// MaxCandidates when the header has more (see Complete).
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
