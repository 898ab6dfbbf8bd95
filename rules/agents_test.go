package rules

import (
	"fmt"
	"strings"
	"testing"
)

// TestAgentTable checks the group lookup by product token (RFC 9309
// §2.2.1: tokens compare ignoring ASCII case) on a file naming many
// tokens of one length, so that slots collide: every token finds its own
// group in any case, and near misses find none.
func TestAgentTable(t *testing.T) {
	const n = 300
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "user-agent: Bot%c%c-x\ndisallow: /only-%d\n\n", 'a'+i%26, 'a'+i/26%26, i)
	}
	r := Parse([]byte(sb.String()))
	for i := range n {
		token := fmt.Sprintf("Bot%c%c-x", 'a'+i%26, 'a'+i/26%26)
		for _, agent := range []string{token, strings.ToLower(token), strings.ToUpper(token)} {
			g := r.Group(agent)
			if g == nil {
				t.Fatalf("Group(%q) = nil, want the group of line %d", agent, 3*i+1)
			}
			if g.Line() != 3*i+1 {
				t.Fatalf("Group(%q) is the group of line %d, want %d", agent, g.Line(), 3*i+1)
			}
		}
		for _, miss := range []string{token[:len(token)-1], token + "x", token[1:], "x" + token, strings.Replace(token, "-", "_", 1)} {
			if g := r.Group(miss); g != nil {
				t.Fatalf("Group(%q) is the group of line %d, want none", miss, g.Line())
			}
		}
	}
	for _, miss := range []string{"", "*", "bot", "\x00"} {
		if g := r.Group(miss); g != nil {
			t.Errorf("Group(%q) is the group of line %d, want none", miss, g.Line())
		}
	}
	if g := Parse([]byte("user-agent: *\ndisallow: /\n")).Group("x"); g != nil {
		t.Errorf("Group(x) on a file with only the * group = line %d, want none", g.Line())
	}
}

// TestAgentTableWraps checks that a probe goes on from the table's last
// slot to its first: two tokens whose hash names the last slot of a table
// of four are both found.
func TestAgentTableWraps(t *testing.T) {
	var tokens []string
	for i := 0; len(tokens) < 2; i++ {
		if tok := fmt.Sprintf("bot%d", i); foldHash(tok)&3 == 3 {
			tokens = append(tokens, tok)
		}
	}
	text := tokens[0] + tokens[1]
	spans := []span{{0, uint32(len(tokens[0]))}, {uint32(len(tokens[0])), uint32(len(tokens[1]))}}
	r := &Robots{text: text, tokens: newTokenTable(text, spans, []uint32{7, 9})}
	table := r.tokens
	if len(table.slots) != 4 {
		t.Fatalf("table of 2 tokens has %d slots, want 4", len(table.slots))
	}
	if table.slots[0] == 0 {
		t.Fatalf("tokens %q: none sits in the first slot, the test does not reach the wrap", tokens)
	}
	for _, tt := range []struct {
		agent string
		want  int
	}{{tokens[0], 7}, {strings.ToUpper(tokens[1]), 9}, {"bot", -1}} {
		if got := r.named(tt.agent); got != tt.want {
			t.Errorf("named(%q) = %d, want %d", tt.agent, got, tt.want)
		}
	}
}
