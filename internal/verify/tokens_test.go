package verify

import (
	"strings"
	"testing"
)

// Tokens compare ignoring ASCII case (RFC 9309 §2.2.1), without allocating.
func TestTokenTable(t *testing.T) {
	tt := newTokenTable()
	var names []string
	for _, l := range builtinLists {
		for _, tok := range l.Tokens {
			tt.add(tok)
			names = append(names, tok)
		}
	}
	tt.freeze()
	for _, n := range names {
		for _, spelling := range []string{n, strings.ToLower(n), strings.ToUpper(n)} {
			e := tt.get(spelling)
			if e == nil || !strings.EqualFold(e.name, n) {
				t.Errorf("get(%q) = %v, want the entry of %s", spelling, e, n)
			}
			if foldHash(spelling) != foldHash(strings.ToLower(n)) {
				t.Errorf("foldHash(%q) differs from foldHash of its lower case", spelling)
			}
		}
	}
	for _, miss := range []string{"", "Googlebo", "Googlebot2", "Mozilla", strings.Repeat("a", maxTokenLen+1), "googlebot\x00"} {
		if e := tt.get(miss); e != nil {
			t.Errorf("get(%q) = %s, want nil", miss, e.name)
		}
	}
	if n := testing.AllocsPerRun(100, func() { tt.get("GoogleBot") }); n != 0 {
		t.Errorf("get allocates %v times", n)
	}
}
