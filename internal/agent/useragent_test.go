package agent

import (
	"slices"
	"strings"
	"testing"
)

// candidates returns the non-generic and the generic candidates of t.
func candidates(t *Tokens) (named, generic []string) {
	for i := range t.Len() {
		if t.Generic(i) {
			generic = append(generic, t.At(i))
		} else {
			named = append(named, t.At(i))
		}
	}
	return named, generic
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name    string
		ua      string
		named   []string
		generic []string
	}{
		{"empty", "", nil, nil},
		{"white space", " \t ", nil, nil},
		{
			"product and comment",
			"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
			[]string{"Googlebot"}, []string{"Mozilla", "compatible"},
		},
		{
			// RFC 9110 §10.1.5: a product alone, its comment holding a URL.
			"product, URL comment",
			"CCBot/2.0 (https://commoncrawl.org/faq/)",
			[]string{"CCBot"}, nil,
		},
		{
			"e-mail address skipped",
			"Mozilla/5.0 (compatible; Bytespider; spider-feedback@bytedance.com) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.0.0 Safari/537.36",
			[]string{"Bytespider"},
			[]string{"Mozilla", "compatible", "AppleWebKit", "KHTML", "like", "Gecko", "Chrome", "Safari"},
		},
		{
			"comment item split on white space",
			"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)",
			[]string{"Yahoo", "Slurp"}, []string{"Mozilla", "compatible"},
		},
		{
			"digits end the run",
			"Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; SLCC2; .NET CLR 2.0.50727)",
			nil, []string{"Mozilla", "Windows", "NT", "WOW", "Trident", "SLCC", "CLR"},
		},
		{
			"locale and short words are generic",
			"Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.9.0.1) Gecko/2008070208 Firefox/3.0.1",
			nil, []string{"Mozilla", "Windows", "U", "NT", "en-US", "rv", "Gecko", "Firefox"},
		},
		{
			// RFC 9110 §5.6.5: comments nest.
			"nested comments",
			"Foo/1.0 (a (b; Bar) c) Baz",
			[]string{"Foo", "Bar", "Baz"}, []string{"a", "b", "c"},
		},
		{
			// RFC 9110 §5.6.4: a quoted-pair in a comment is literal, so
			// "\)" closes nothing and "\," separates nothing.
			"quoted pairs",
			`X (KHTML\, like Gecko; a\)b Qux) Quux`,
			[]string{"Qux", "Quux"}, []string{"X", "KHTML", "like", "Gecko", "a"},
		},
		{
			"URLs and addresses skipped",
			"Foo (+https://example.com/bot; www.example.com; WWW.example.org; mail@example.com; http://x.y; +www.z.com)",
			[]string{"Foo"}, nil,
		},
		{"www alone is a word", "www/1.0", []string{"www"}, nil},
		{"duplicates dropped, any case", "Mozilla/5.0 Foo/1 (mozilla; FOO) MOZILLA", []string{"Foo"}, []string{"Mozilla"}},
		{"unbalanced open", "Foo (Bar; Baz", []string{"Foo", "Bar", "Baz"}, nil},
		{"unbalanced close", "Foo) Bar))", []string{"Foo", "Bar"}, nil},
		{"backslash at the end", `Foo (Bar\`, []string{"Foo", "Bar"}, nil},
		{
			"separators outside comments",
			"Mozilla/5.0 [FBAN/FBIOS;FBAV/400.0.0.37.84;FBBV/1]",
			[]string{"FBAN", "FBIOS", "FBAV", "FBBV"}, []string{"Mozilla"},
		},
		{"no letters", "1234 (5.6; +7)", nil, nil},
		{"controls separate words", "Foo\x00Bar\x7fBaz", []string{"Foo", "Bar", "Baz"}, nil},
		{"invalid UTF-8 ends a run", "Foo\xffBar Qux", []string{"Foo", "Qux"}, nil},
		{
			// Some clients send "+" for spaces, form-encoding style.
			"plus separates words",
			"Mozilla/5.0+(compatible;+PiplBot;+http://www.pipl.com/bot/)",
			[]string{"PiplBot"}, []string{"Mozilla", "compatible"},
		},
		{
			// RFC 9110 §10.1.5: product = token ["/" product-version].
			"versions are candidates",
			"Mozilla/2.0 (compatible; Ask Jeeves/Teoma; +http://sp.ask.com/x) Node/simplecrawler Qwantify/Bleriot/1.1 help.yahoo.com/help/us",
			[]string{"Ask", "Jeeves", "Teoma", "Node", "simplecrawler", "Qwantify", "Bleriot", "help"}, []string{"Mozilla", "compatible"},
		},
		{"addresses need a domain", "Foo (android@101.0; th-TH@calendar=x; bot@example.com)", []string{"Foo"}, []string{"android", "th-TH"}},
		{"plus inside a URL", "Foo (+https://a.example/x+Googlebot; mail+Bar@example.com) Baz+Qux", []string{"Foo", "mail", "Baz", "Qux"}, nil},
	}
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
		named, generic := candidates(&tok)
		if !slices.Equal(named, tt.named) || !slices.Equal(generic, tt.generic) {
			t.Errorf("%s: Tokenize(%q) = %q + generic %q, want %q + generic %q",
				tt.name, tt.ua, named, generic, tt.named, tt.generic)
		}
	}
}

func TestTokenizeLengthLimit(t *testing.T) {
	pad := func(n int) string { return "Foo " + strings.Repeat(".", n-4) }
	tests := []struct {
		name string
		ua   string
		want bool // whether Googlebot is a candidate
	}{
		{"cut inside the word", pad(MaxUserAgentLength-5) + " Googlebot/2.1", false},
		{"cut at the end of the word", pad(MaxUserAgentLength-10) + " Googlebot", true},
		{"cut at the end of the name", pad(MaxUserAgentLength-10) + " Googlebot/2.1", false},
		{"ends before the limit", pad(MaxUserAgentLength-11) + " Googlebot", true},
		{"ends at the limit, delimiter after", pad(MaxUserAgentLength-10) + " Googlebot (x)", true},
		{"past the limit", pad(MaxUserAgentLength) + " Googlebot", false},
	}
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
		named, _ := candidates(&tok)
		if got := slices.Contains(named, "Googlebot"); got != tt.want {
			t.Errorf("%s: Googlebot in Tokenize(%d octets) = %v, want %v (candidates %q)",
				tt.name, len(tt.ua), got, tt.want, named)
		}
		if len(tok.UserAgent()) > MaxUserAgentLength {
			t.Errorf("%s: UserAgent() is %d octets, want at most %d", tt.name, len(tok.UserAgent()), MaxUserAgentLength)
		}
	}
}

func TestTokenizeCandidateLimit(t *testing.T) {
	var words []string
	for i := range MaxCandidates + 16 {
		words = append(words, "Tok"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	ua := strings.Join(words, " ")
	tok := Tokenize(ua)
	named, _ := candidates(&tok)
	if !slices.Equal(named, words[:MaxCandidates]) || tok.Complete() {
		t.Errorf("Tokenize(%d words) = %q, complete %v; want the first %d, incomplete", len(words), named, tok.Complete(), MaxCandidates)
	}
	// The words not listed are candidates all the same.
	for _, w := range words {
		if !tok.Has(w) || !tok.Has(strings.ToUpper(w)) {
			t.Errorf("Tokenize(%d words).Has(%q) = false, want true", len(words), w)
		}
	}
	for _, w := range []string{"Tok", "Tokaa1", "", "Tokzz"} {
		if tok.Has(w) {
			t.Errorf("Tokenize(%d words).Has(%q) = true, want false", len(words), w)
		}
	}
	if short := Tokenize("Foo/1 Bar"); !short.Complete() || !short.Has("bar") || short.Has("Baz") {
		t.Errorf("Tokenize(%q): Complete, Has(bar), Has(Baz) = %v, %v, %v; want true, true, false",
			"Foo/1 Bar", short.Complete(), short.Has("bar"), short.Has("Baz"))
	}
}

func TestGenericTokens(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range GenericTokens() {
		k := strings.ToLower(g)
		switch {
		case !isToken(g):
			t.Errorf("generic token %q is not a run of [A-Za-z_-]", g)
		case seen[k]:
			t.Errorf("generic token %q listed twice", g)
		case hasKeyword(g) && k != "cubot":
			t.Errorf("generic token %q holds a crawler keyword", g)
		case LookupCrawler(g) != CategoryNone:
			t.Errorf("generic token %q is catalogued too", g)
		}
		seen[k] = true
		tok := Tokenize(g + "/1.0")
		if tok.Len() != 1 || !tok.Generic(0) {
			t.Errorf("Tokenize(%q): Generic(0) = false, want true", g)
		}
	}
}

func TestIsGenericShape(t *testing.T) {
	tests := []struct {
		tok  string
		want bool
	}{
		{"U", true}, {"rv", true}, {"en-US", true}, {"pt_BR", true}, {"zh-cn", true},
		{"GPT", false}, {"en-USA", false}, {"ab-1x", false}, {"Bot-X", false}, {"a-b-c", false},
	}
	for _, tt := range tests {
		if got := isGenericShape(tt.tok); got != tt.want {
			t.Errorf("isGenericShape(%q) = %v, want %v", tt.tok, got, tt.want)
		}
	}
}

func TestTokensAtPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("Tokens.At(1) of one candidate did not panic")
		}
	}()
	tok := Tokenize("Foo")
	tok.At(1)
}

func TestTokenizeAllocs(t *testing.T) {
	ua := "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.201 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	if n := testing.AllocsPerRun(100, func() { _ = Tokenize(ua) }); n != 0 {
		t.Errorf("Tokenize allocates %v times, want 0", n)
	}
}
