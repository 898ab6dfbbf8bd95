package rules

// An agentTable finds the group a product token names, comparing tokens
// by ASCII rules only (see fold.go). It is a flat hash table with open
// addressing, hashed and compared with the token's letters folded as they
// are read: a Go map needs the token folded into a buffer first, then
// hashes it and compares it again, which took a fifth of a decision on
// twitter.com's mix (BenchmarkDecide under cachegrind: 318 of 1,746
// instructions a decision; this table takes 170).
type agentTable struct {
	slots []agentSlot // a power of two in length, at least twice the tokens
}

type agentSlot struct {
	token string // lower-case
	group *Group // nil for an empty slot
}

// newAgentTable builds the table from groups keyed by lower-case token.
func newAgentTable(named map[string]*Group) agentTable {
	if len(named) == 0 {
		return agentTable{}
	}
	n := 4
	for n < 2*len(named) {
		n *= 2
	}
	t := agentTable{slots: make([]agentSlot, n)}
	for token, g := range named {
		i := foldHash(token) & uint32(n-1)
		for t.slots[i].group != nil {
			i = (i + 1) & uint32(n-1)
		}
		t.slots[i] = agentSlot{token: token, group: g}
	}
	return t
}

// lookup returns the group named by agent, or nil.
func (t *agentTable) lookup(agent string) *Group {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint32(len(t.slots) - 1)
	for i := foldHash(agent) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.group == nil {
			return nil
		}
		if equalLowerASCII(agent, s.token) {
			return s.group
		}
	}
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

// equalLowerASCII reports whether s with its ASCII letters in lower case
// equals lower.
func equalLowerASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(s[i]) != lower[i] {
			return false
		}
	}
	return true
}
