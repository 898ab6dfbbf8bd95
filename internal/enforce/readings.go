package enforce

import (
	"encoding/hex"
	"strings"
	"unsafe"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// A Reading is one way of reading a request's path, for bypass resistance.
//
// The same resource can be asked for under many spellings: "/%70rivate/x",
// "//private/x", "/pub/../private/x", "/pub/..%2Fprivate/x". An origin
// server or a proxy behind this handler may normalise any of them into
// "/private/x", so a crawler must not escape "Disallow: /private" by
// choosing its spelling. A request is therefore judged under each reading,
// and denied when any reading is disallowed. Readings that come out the same
// are judged once.
type Reading uint8

const (
	// AsSent is the request target as sent, in the canonical form of RFC
	// 9309 §2.2.2: the reading a crawler obeying the RFC compares.
	AsSent Reading = iota
	// Cleaned is AsSent with repeated slashes merged and "." and ".."
	// segments removed (RFC 3986 §5.2.4), as most servers resolve them.
	Cleaned
	// Decoded is the path fully percent-decoded (up to maxDecodeRounds
	// times, for double encoding), with backslashes read as slashes and
	// ";parameters" dropped from each segment, then cleaned: the most any
	// server behind this handler could make of it. The query is kept as in
	// AsSent.
	Decoded
	// RewriteHeader is the path of a header some origins serve instead of
	// the request's own (X-Original-URL, X-Rewrite-URL, or
	// X-Forwarded-Prefix before the path). Build never makes it: a caller
	// that judges such a header names its decision so.
	RewriteHeader
	// Folded is the Decoded path with its ASCII letters in lower case, for
	// an origin that reads paths without regard to case
	// (Policy.CaseInsensitive): it is judged against the groups folded
	// (rules.Group.Folded), so that "/PRIVATE/x" meets "Disallow:
	// /private/". Build makes it only when asked (Fold).
	Folded
)

var readingNames = [...]string{AsSent: "as_sent", Cleaned: "cleaned", Decoded: "decoded", RewriteHeader: "rewrite_header", Folded: "folded"}

// String returns "as_sent", "cleaned", "decoded", "rewrite_header" or
// "folded".
func (r Reading) String() string {
	if int(r) < len(readingNames) {
		return readingNames[r]
	}
	return "reading(?)"
}

// maxDecodeRounds bounds how often the Decoded reading percent-decodes a
// path: twice catches double encoding ("%252e" → "%2e" → "."), a third
// round catches triple; more would let a path cost more than it reads.
const maxDecodeRounds = 3

// readingBufSize is the room each reading has on the stack. Longer targets
// are still read in full; they cost an allocation.
const readingBufSize = 512

// Readings holds the distinct readings of one request target, each in the
// canonical form that rules.Group.DecideCanonical takes. Its buffers make it
// large: keep one on the stack (var rd Readings) rather than returning it.
type Readings struct {
	n     int
	kind  [4]Reading
	list  [4]string // the target itself, or views of the buffers
	bufs  [3][readingBufSize]byte
	work  [2][readingBufSize]byte
	fold  [readingBufSize]byte
	valid bool
}

// Fold adds the Folded reading: the most decoded reading, its path's
// letters in lower case. It is judged against the groups folded, so it is
// added even when its octets are another reading's. Call it after Build.
func (rd *Readings) Fold() {
	if rd.n == 0 || rd.n == len(rd.list) {
		return
	}
	base := rd.list[rd.n-1] // Decoded when there is one: the most any server makes of the path
	path, query := base, ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		path, query = base[:i], base[i:]
	}
	folded := base
	for i := 0; i < len(path); i++ {
		if c := path[i]; 'A' <= c && c <= 'Z' {
			folded = view(append(rules.FoldPath(rd.fold[:0], path), query...))
			break
		}
	}
	rd.kind[rd.n], rd.list[rd.n] = Folded, folded
	rd.n++
}

// Len returns the number of readings: the distinct ones, and Folded.
func (rd *Readings) Len() int { return rd.n }

// At returns reading i, for 0 <= i < Len(), and its kind. AsSent comes
// first. The bytes are valid until the next Build, and must not be
// modified: they may be the target's own.
func (rd *Readings) At(i int) (string, Reading) { return rd.list[:rd.n][i], rd.kind[i] }

// Path returns the AsSent reading as a string; "" before a successful Build.
// The string shares memory with rd: copy it to keep it.
func (rd *Readings) Path() string {
	if rd.n == 0 {
		return ""
	}
	return rd.list[0]
}

// view returns b as a string without a copy. The readings are views of
// rd's buffers: with string(b), a decision on a target that is not plain
// allocates for each reading ("/pub/../admin/", of BenchmarkDecision's
// targets: 3 allocations, against none).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Build reads target, a request target: origin-form ("/a/b?c"), or
// absolute-form ("http://host/a/b?c"). A server reads a target its own way
// first (Go's keeps a raw "#" in the path, where a URL would start a
// fragment); callers pass the target as their server read it (see
// Request.Target), and Build cuts nothing from it. It returns false, and
// holds no reading, for a target no rule can apply to: "*" (OPTIONS), an
// empty target, or an authority alone (CONNECT); such requests pass.
func (rd *Readings) Build(target string) bool {
	rd.n = 0
	if plainTarget(target) {
		// Already canonical, and nothing to clean or decode: the target
		// is its own only reading, used where it is, uncopied.
		rd.add(AsSent, target)
		return true
	}
	return rd.build(target)
}

// build is Build for any target: it copies each reading into rd's buffers.
func (rd *Readings) build(target string) bool {
	pathQuery, ok := splitTarget(target)
	if !ok {
		return false
	}
	path, query := pathQuery, ""
	if i := strings.IndexByte(pathQuery, '?'); i >= 0 {
		path, query = pathQuery[:i], pathQuery[i:]
	}

	asSent := rd.bufs[AsSent][:0]
	if path == "" {
		asSent = append(asSent, '/') // "http://host?q": an empty path reads as "/"
	}
	asSent = rules.AppendCanonical(asSent, pathQuery)
	rd.add(AsSent, view(asSent))
	if plainPath(path) {
		return true // nothing to clean or decode: the other readings are the same
	}

	canonPath := rules.AppendCanonical(rd.work[0][:0], path)
	cleaned := appendClean(rd.bufs[Cleaned][:0], canonPath, false)
	cleaned = rules.AppendCanonical(cleaned, query)
	rd.add(Cleaned, view(cleaned))

	decoded := rd.work[1][:0]
	decoded = append(decoded, path...)
	for range maxDecodeRounds {
		var changed bool
		decoded, changed = percentDecode(decoded)
		if !changed {
			break
		}
	}
	clean := appendClean(rd.work[0][:0], decoded, true)
	out := rules.AppendCanonical(rd.bufs[Decoded][:0], view(clean))
	out = rules.AppendCanonical(out, query)
	rd.add(Decoded, view(out))
	return true
}

// plainTarget reports whether an origin-form target is in canonical form
// and its path is plain (see plainPath), in one pass: ASCII, with no
// escape or fragment anywhere, and no backslash, parameter, empty segment
// or segment starting with "." in its path. Most targets crawlers send
// are, and their AsSent reading is the target itself.
func plainTarget(t string) bool {
	if t == "" || t[0] != '/' {
		return false
	}
	inPath := true
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= 0x80 || c == '%' || c == '#' {
			return false
		}
		if !inPath {
			continue
		}
		switch c {
		case '?':
			inPath = false
		case '\\', ';':
			return false
		case '/':
			if i+1 < len(t) && (t[i+1] == '/' || t[i+1] == '.') {
				return false
			}
		}
	}
	return true
}

// plainPath reports whether a path certainly reads the same cleaned and
// decoded: it has no escape, backslash or parameter, and no segment that is
// empty or starts with ".". Most paths are plain, and are read once.
func plainPath(path string) bool {
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '%', '\\', ';':
			return false
		case '/':
			if i+1 < len(path) && (path[i+1] == '/' || path[i+1] == '.') {
				return false
			}
		}
	}
	return true
}

// add keeps a reading unless an earlier one is the same.
func (rd *Readings) add(kind Reading, b string) {
	for _, prev := range rd.list[:rd.n] {
		if prev == b {
			return
		}
	}
	rd.kind[rd.n], rd.list[rd.n] = kind, b
	rd.n++
}

// splitTarget returns the path and query of a request target. The path
// starts with "/" or is empty ("http://host?q"). ok is false when no path
// applies. A "#" is not a fragment's start here: a server that receives
// one reads it as part of the path or query (Go's does), and a fragment
// cut off here would leave the path a proxy forwards unjudged.
func splitTarget(target string) (pathQuery string, ok bool) {
	if strings.HasPrefix(target, "/") {
		return target, true
	}
	// Absolute-form (RFC 9112 §3.2.2): scheme "://" authority path-abempty.
	scheme := strings.Index(target, "://")
	if scheme <= 0 {
		return "", false // "*", "", authority-form, or no URL at all
	}
	rest := target[scheme+3:]
	start := strings.IndexAny(rest, "/?")
	if start < 0 {
		return "/", true
	}
	return rest[start:], true
}

// percentDecode decodes every %XX in b in place and reports whether any was
// found.
func percentDecode(b []byte) ([]byte, bool) {
	out, changed := b[:0], false
	var octet [1]byte
	for i := 0; i < len(b); i++ {
		if b[i] == '%' && i+2 < len(b) {
			if _, err := hex.Decode(octet[:], b[i+1:i+3]); err == nil {
				out = append(out, octet[0])
				i += 2
				changed = true
				continue
			}
		}
		out = append(out, b[i])
	}
	return out, changed
}

// appendClean appends path to dst with repeated slashes merged and "." and
// ".." segments resolved (RFC 3986 §5.2.4; ".." never climbs above the
// root). With lenient set, a backslash also separates segments, and a
// segment's ";parameters" are dropped, as some servers read them.
func appendClean(dst, path []byte, lenient bool) []byte {
	root := len(dst)
	dst = append(dst, '/')
	isSep := func(c byte) bool { return c == '/' || lenient && c == '\\' }
	endsInDir := true // whether the cleaned path ends with "/"
	for i := 0; i < len(path); {
		for i < len(path) && isSep(path[i]) {
			i++
		}
		j := i
		for j < len(path) && !isSep(path[j]) {
			j++
		}
		seg := path[i:j]
		if lenient {
			if k := indexByte(seg, ';'); k >= 0 {
				seg = seg[:k]
			}
		}
		atEnd := j == len(path)
		switch string(seg) {
		case "":
		case ".":
			endsInDir = true
		case "..":
			if len(dst) > root+1 {
				dst = dst[:len(dst)-1]
				dst = dst[:root+lastIndexByte(dst[root:], '/')+1]
			}
			endsInDir = true
		default:
			dst = append(dst, seg...)
			dst = append(dst, '/')
			endsInDir = !atEnd
		}
		i = j
	}
	if !endsInDir && len(dst) > root+1 {
		dst = dst[:len(dst)-1]
	}
	return dst
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func lastIndexByte(b []byte, c byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == c {
			return i
		}
	}
	return -1
}
