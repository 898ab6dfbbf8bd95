package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// hiddenPrefixes are ways to push a crawler's own token far into its
// header: many short distinct words before it, as product names, generic
// browser words, comment items, or joined by "+" as some clients send
// spaces.
func hiddenPrefixes(n int) map[string]string {
	distinct := make([]string, n)
	for i := range distinct {
		distinct[i] = fmt.Sprintf("W%c%c", 'a'+i/26%26, 'a'+i%26)
	}
	generic := agent.GenericTokens()
	for len(generic) < n {
		generic = append(generic, generic...)
	}
	return map[string]string{
		"words":   strings.Join(distinct, " ") + " ",
		"generic": strings.Join(generic[:n], " ") + " ",
		"comment": "Mozilla/5.0 (" + strings.Join(distinct, "; ") + "; ",
		"plus":    strings.Join(distinct, "+") + "+",
		"mixed":   strings.Join(distinct[:n/2], " ") + " (" + strings.Join(generic[:n/2], "; ") + ") ",
	}
}

// TestHiddenToken checks that a crawler's own token names its group and
// marks it as automated however many words come before it, as long as the
// header is within MaxUserAgentLength: before, only the first 24 distinct
// candidates counted, and 24 short words before "GPTBot/1.2" made the
// header escape both the GPTBot group and "*".
func TestHiddenToken(t *testing.T) {
	r := rules.Parse([]byte("User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n"))
	x := robotstxt.NewGroupIndex(r)
	c := agent.NewClassifier(0)
	d := enforce.NewDecider(enforce.Policy{}, nil)
	snap := inlineSnapshot(t, "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n")
	for _, n := range []int{23, 24, 25, 30, 63, 64, 65, 100, 200} {
		for kind, prefix := range hiddenPrefixes(n) {
			for _, suffix := range []string{"GPTBot/1.2", "(compatible; GPTBot/1.2; +https://openai.com/gptbot)"} {
				ua := prefix + suffix
				if len(ua) > agent.MaxUserAgentLength {
					continue
				}
				name := fmt.Sprintf("%s, %d words, %.20q", kind, n, suffix)
				tok := agent.Tokenize(ua)
				if !tok.Has("GPTBot") {
					t.Errorf("%s: Tokenize(%q).Has(GPTBot) = false", name, ua)
				}
				for _, m := range []robotstxt.Match{robotstxt.ChooseGroups(r, &tok), x.Choose(&tok)} {
					if m.Len() != 1 || m.Token(0) != "GPTBot" {
						t.Errorf("%s: groups of %q = %q, want [GPTBot]", name, ua, matchedTokens(&m))
					}
				}
				if got := c.Classify(&tok); got.Automation != agent.AutomatedCatalogue || got.Token != "GPTBot" {
					t.Errorf("%s: Classify(%q) = %+v, want catalogue GPTBot", name, ua, got)
				}
				var rd enforce.Readings
				if dec := d.Decide(snap, enforce.Query{Target: "/x", UserAgent: ua}, &rd); dec.Allowed || dec.Reason != enforce.ReasonNamedGroup || dec.Token != "GPTBot" {
					t.Errorf("%s: Decide(%q, /x) = %v %v %q, want deny named_group GPTBot", name, ua, dec.Allowed, dec.Reason, dec.Token)
				}
			}
		}
	}
}

// TestHiddenTokenLimit checks the other side of the limit: a token past
// MaxUserAgentLength, or cut by it, is not read.
func TestHiddenTokenLimit(t *testing.T) {
	r := rules.Parse([]byte("User-agent: GPTBot\nDisallow: /\n"))
	x := robotstxt.NewGroupIndex(r)
	prefix := hiddenPrefixes(300)["words"]
	for _, tt := range []struct {
		ua   string
		want bool
	}{
		{prefix[:agent.MaxUserAgentLength-len(" GPTBot")] + " GPTBot", true},
		{prefix[:agent.MaxUserAgentLength-len(" GPTBot")] + " GPTBot/1.2", false}, // cut
		{prefix[:agent.MaxUserAgentLength] + " GPTBot", false},
	} {
		tok := agent.Tokenize(tt.ua)
		m := x.Choose(&tok)
		if got := m.Named(); got != tt.want || tok.Has("GPTBot") != tt.want {
			t.Errorf("GPTBot at octet %d: named %v, Has %v; want %v", strings.Index(tt.ua, "GPTBot"), got, tok.Has("GPTBot"), tt.want)
		}
	}
}

// TestHiddenTokenAllocs checks that a header with more candidates than are
// listed is still tokenized, matched and classified without allocating.
func TestHiddenTokenAllocs(t *testing.T) {
	ua := hiddenPrefixes(150)["words"] + "GPTBot/1.2"
	x := robotstxt.NewGroupIndex(rules.Parse([]byte("User-agent: GPTBot\nDisallow: /\n")))
	c := agent.NewClassifier(0)
	tok := agent.Tokenize(ua)
	c.Classify(&tok)
	for name, f := range map[string]func(){
		"Tokenize": func() { _ = agent.Tokenize(ua) },
		"Choose":   func() { _ = x.Choose(&tok) },
		"Classify": func() { _ = c.Classify(&tok) },
		"Has":      func() { _ = tok.Has("GPTBot") },
	} {
		if n := testing.AllocsPerRun(50, f); n != 0 {
			t.Errorf("%s on a header of 150 words allocates %v times, want 0", name, n)
		}
	}
}

// FuzzEveryWordNamesItsGroup checks, for any header within
// MaxUserAgentLength, that a word exactly a group's token chooses that
// group, wherever it stands, and that the groups chosen are exactly those
// that the header's words name, as a plain reading of every word finds
// them: no word is lost for want of room.
func FuzzEveryWordNamesItsGroup(f *testing.F) {
	const robots = "User-agent: GPTBot\nUser-agent: Googlebot\nDisallow: /a\n\n" +
		"User-agent: FooCrawler\nDisallow: /b\n\nUser-agent: CCBot\nDisallow: /c\n\nUser-agent: *\nDisallow: /\n"
	tokens := []string{"GPTBot", "Googlebot", "FooCrawler", "CCBot"}
	r := rules.Parse([]byte(robots))
	x := robotstxt.NewGroupIndex(r)
	for _, p := range hiddenPrefixes(24) {
		f.Add(p, uint8(0), true, "")
	}
	f.Add(hiddenPrefixes(120)["words"], uint8(1), false, "(compatible; CCBot/2.0)")
	f.Add(hiddenPrefixes(120)["plus"], uint8(2), true, "+Googlebot")
	f.Add(testua.Chrome, uint8(3), true, testua.Firefox)
	f.Add("Mozilla/5.0 (Linux; Android 10; ((((", uint8(0), false, "))))")
	f.Add(`Foo (a\`, uint8(0), true, "")
	f.Fuzz(func(t *testing.T, prefix string, which uint8, versioned bool, suffix string) {
		tok := tokens[int(which)%len(tokens)]
		if versioned {
			tok += "/1.2"
		}
		ua := prefix + " " + tok + " " + suffix
		if len(ua) > agent.MaxUserAgentLength || strings.HasSuffix(prefix, `\`) {
			return // past the limit, or the space is a quoted-pair in a comment
		}
		want := map[*rules.Group]bool{}
		for _, w := range agent.PlainWords(ua) {
			if g := r.Group(w); g != nil {
				want[g] = true
			}
		}
		g := r.Group(tokens[int(which)%len(tokens)])
		if !want[g] {
			t.Fatalf("the plain reading of %q misses %q", ua, tok)
		}
		toks := agent.Tokenize(ua)
		for _, m := range []robotstxt.Match{robotstxt.ChooseGroups(r, &toks), x.Choose(&toks)} {
			got := map[*rules.Group]bool{}
			for i := range m.Len() {
				got[m.Group(i)] = true
			}
			if len(got) != len(want) || !got[g] || m.Dropped() {
				t.Fatalf("groups of %q = %q (dropped %v), want the %d groups its words name, %q among them",
					ua, matchedTokens(&m), m.Dropped(), len(want), tok)
			}
		}
	})
}

// inlineSnapshot returns the snapshot of an inline robots.txt.
func inlineSnapshot(t *testing.T, body string) *robotstxt.Snapshot {
	t.Helper()
	src, err := robotstxt.NewInlineSource(robotstxt.InlineConfig{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return src.Snapshot(t.Context(), "example.com")
}

// matchedTokens returns the tokens of the groups m chose, lower-case.
func matchedTokens(m *robotstxt.Match) []string {
	var out []string
	for i := range m.Len() {
		out = append(out, strings.ToLower(m.Token(i)))
	}
	return out
}
