package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Fuzz seeds: every robots.txt under ../testdata/robots (real sites and a
// 500 KiB synthetic file; see its SOURCES.md), plus hand-written hostile
// inputs.
func fuzzSeeds(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "robots", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed files in ../testdata/robots: %v", err)
	}
	var seeds [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	hostile := []string{
		"",
		"\xEF\xBB\xBF",
		"user-agent: *\ndisallow: " + strings.Repeat("*", 2000) + "\n",
		"user-agent: *\ndisallow: /" + strings.Repeat("a*", 500) + "$\n",
		"user-agent: *\r\r\n\n\rdisallow: %\n%%\nallow: /%zz%2\n",
		"user-agent:\xff\xfe\ndisallow:/\x00\x01\n",
		"user-agent: *\nallow: /index.html/index.htm\ndisallow: /$$$\n",
		"user-agent * x\nuser agent: y\n#\n:\n: :\n",
		// draft-ietf-aipref-attach-05 §3.
		"user-agent: *\ncontent-usage: train-ai=n, search=y\ncontent-usage: /r/ train-ai=y\ndisallow: /p/\n",
		"user-agent: *\ncontent-usage: /a* train-ai=y\ncontent-usage: /ab search=n;x=?1, z=(a b)\n",
		"content-usage: x\nuser-agent: a\ncontent-usage:\t/%2a$\tsearch=n\nuser-agent: b\ncontent-usage: /\n",
		"user-agent: *\ncontent-usage: Train-AI=n\ncontent-usage: *.pdf search=y\ncontent-signal: search=yes\n",
	}
	for _, h := range hostile {
		seeds = append(seeds, []byte(h))
	}
	return seeds
}

var fuzzTargets = []string{"/", "/a", "/private/x?y=1", "/%70rivate", "/caf%C3%A9", "/robots.txt",
	"https://example.com/search?q=a*b$", "/" + strings.Repeat("a", 300), ""}

// FuzzParse checks that Parse never panics and is deterministic: the same
// input gives the same groups, diagnostics and verdicts.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, b := Parse(body), Parse(body)
		if !reflect.DeepEqual(a.Groups(), b.Groups()) || !reflect.DeepEqual(a.Diagnostics(), b.Diagnostics()) {
			t.Fatalf("Parse is not deterministic for %q", body)
		}
		for _, tok := range append(a.Tokens(), "*", "x") {
			for _, target := range fuzzTargets {
				if va, vb := a.Decide(tok, target), b.Decide(tok, target); !sameVerdict(va, vb) {
					t.Fatalf("Decide(%q, %q): %+v then %+v", tok, target, va, vb)
				}
			}
		}
	})
}

// sameVerdict reports whether two verdicts say the same. Usages are
// compared by what they say: a combination built at lookup time is a new
// value each time.
func sameVerdict(a, b Verdict) bool {
	ua, ub := a.Usage, b.Usage
	a.Usage, b.Usage = Usage{}, Usage{}
	return a == b && ua.TrainAI == ub.TrainAI && ua.AIUse == ub.AIUse && ua.Search == ub.Search && ua.String() == ub.String() &&
		reflect.DeepEqual(ua.Rules(), ub.Rules())
}

// FuzzDecide checks the compiled matcher against refDecide, a small matcher
// written for clarity rather than speed, on every rule of the group.
func FuzzDecide(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		if len(s) > 64<<10 {
			continue // the reference is quadratic; the big files seed FuzzParse
		}
		for _, target := range fuzzTargets[:4] {
			f.Add(s, "Googlebot", target)
		}
	}
	f.Add([]byte("user-agent: a\ndisallow: /a*%2A*b$\nallow: /a%2ab\n"), "a", "/a*xx*b")
	f.Add([]byte("user-agent: a\ndisallow: /x*2F\n"), "a", "/x%2f")
	f.Fuzz(func(t *testing.T, body []byte, agent, target string) {
		if len(target) > 2048 || len(body) > 64<<10 {
			return
		}
		if !strings.HasPrefix(target, "/") {
			target = "/" + target // origin-form: the reference reads no URLs
		}
		r := Parse(body)
		got := r.Decide(agent, target)
		want := refDecide(r.GroupFor(agent), target)
		if got.Allowed != want {
			t.Fatalf("Decide(%q, %q) = %+v, reference says allowed=%v\nrobots.txt:\n%s", agent, target, got, want, body)
		}
	})
}

// refDecide decides by trying every rule of g with refMatch.
func refDecide(g *Group, target string) bool {
	path, _, _ := strings.Cut(target, "#")
	if p, _, _ := strings.Cut(path, "?"); refCanon(p) == "/robots.txt" {
		return true
	}
	if g == nil {
		return true
	}
	best, allowed := -1, true
	try := func(pattern string, allow bool) {
		if !refMatch(pattern, path) {
			return
		}
		if p := refPriority(pattern); p > best || p == best && allow {
			best, allowed = p, allow
		}
	}
	for _, rule := range g.Rules() {
		try(rule.Pattern, rule.Allow)
		if i := strings.LastIndex(rule.Pattern, "/"); rule.Allow && i >= 0 && strings.HasPrefix(rule.Pattern[i:], "/index.htm") {
			try(rule.Pattern[:i+1]+"$", true)
		}
	}
	return allowed
}

// refOctets decodes s into octets, telling for each whether it was written
// percent-encoded.
func refOctets(s string) (octets []byte, encoded []bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && strings.ContainsAny(s[i+1:i+2], "0123456789abcdefABCDEF") &&
			strings.ContainsAny(s[i+2:i+3], "0123456789abcdefABCDEF") {
			var v byte
			for _, c := range []byte(strings.ToUpper(s[i+1 : i+3])) {
				v = v*16 + byte(strings.IndexByte("0123456789ABCDEF", c))
			}
			octets, encoded = append(octets, v), append(encoded, true)
			i += 2
			continue
		}
		octets, encoded = append(octets, s[i]), append(encoded, false)
	}
	return octets, encoded
}

// refCanon re-encodes s: encoded octets stay encoded unless unreserved,
// "*" or "$"; raw octets stay raw unless outside ASCII.
func refCanon(s string) string {
	octets, encoded := refOctets(s)
	var b strings.Builder
	for i, o := range octets {
		plain := strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~*$", o) >= 0
		if o >= 0x80 || encoded[i] && !plain {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[o>>4])+string("0123456789abcdef"[o&15])))
		} else {
			b.WriteByte(o)
		}
	}
	return b.String()
}

// refPriority is the octet length of the pattern as normalised, where
// "%2A" and "%24" still count as three octets.
func refPriority(pattern string) int {
	octets, encoded := refOctets(pattern)
	n := 0
	for i, o := range octets {
		plain := strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~", o) >= 0
		if o >= 0x80 || encoded[i] && !plain {
			n += 3
		} else {
			n++
		}
	}
	return n
}

// refMatch matches by dynamic programming over (pattern position, path
// position): can[j] says whether the pattern read so far can end at path
// octet j.
func refMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// Split at raw "*" before decoding, so an encoded "%2A" stays literal.
	parts := strings.Split(pattern, "*")
	p := refCanon(path)
	can := make([]bool, len(p)+1)
	can[0] = true
	for i, part := range parts {
		if i > 0 { // a wildcard: every later position is reachable
			for j := 1; j <= len(p); j++ {
				can[j] = can[j] || can[j-1]
			}
		}
		lit := refCanon(part)
		next := make([]bool, len(p)+1)
		for j := 0; j+len(lit) <= len(p); j++ {
			next[j+len(lit)] = can[j] && p[j:j+len(lit)] == lit
		}
		can = next
	}
	if anchored {
		return can[len(p)]
	}
	for _, ok := range can {
		if ok {
			return true
		}
	}
	return false
}
