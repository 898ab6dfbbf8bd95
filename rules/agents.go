package rules

// A tokenTable finds the group a product token names, comparing tokens
// by ASCII rules only (see fold.go). It is a flat hash table with open
// addressing, hashed and compared with the token's letters folded as they
// are read: a Go map needs the token folded into a buffer first, then
// hashes it and compares it again, which took a fifth of a decision on
// twitter.com's mix (BenchmarkDecide under cachegrind: 318 of 1,746
// instructions a decision; this table takes 170).
type tokenTable struct {
	slots []uint32 // a power of two in length, at least twice the tokens: 1 + an index in named, or 0
	named []namedToken
}

type namedToken struct {
	token span   // in the backing text, as first written
	group uint32 // in Robots.groups
}

// newTokenTable builds the table of the tokens, in text, and their groups.
// No two tokens are equal ignoring ASCII case.
func newTokenTable(text string, tokens []span, groups []uint32) tokenTable {
	if len(tokens) == 0 {
		return tokenTable{}
	}
	n := 4
	for n < 2*len(tokens) {
		n *= 2
	}
	t := tokenTable{slots: make([]uint32, n), named: make([]namedToken, len(tokens))}
	for k, tok := range tokens {
		t.named[k] = namedToken{token: tok, group: groups[k]}
		i := foldHash(tok.in(text)) & uint32(n-1)
		for t.slots[i] != 0 {
			i = (i + 1) & uint32(n-1)
		}
		t.slots[i] = uint32(k + 1)
	}
	return t
}

// named returns the index in r.groups of the group agent names, or -1.
func (r *Robots) named(agent string) int {
	t := &r.tokens
	if len(t.slots) == 0 {
		return -1
	}
	mask := uint32(len(t.slots) - 1)
	for i := foldHash(agent) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if nt := &t.named[s-1]; equalFoldASCII(agent, nt.token.in(r.text)) {
			return int(nt.group)
		}
	}
}

// tokens returns the tokens as first written, in the order first named.
func (t *tokenTable) tokens(text string) []string {
	if len(t.named) == 0 {
		return nil
	}
	out := make([]string, len(t.named))
	for i, nt := range t.named {
		out[i] = nt.token.in(text)
	}
	return out
}

// foldHash is the 32-bit FNV-1a hash of s with its ASCII letters in lower
// case.
func foldHash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(lowerASCII(s[i]))) * 16777619
	}
	return h
}
