package rules

import (
	"encoding/binary"
	"slices"
	"strings"
)

// Compiling: the groups that apply to each product token and to "*" (RFC
// 9309 §2.2.1), each with its rules ranked and indexed for matching, built
// once the file is parsed and its backing text written.

// patForm is a distinct pattern of the file, compiled, with what ranking
// it needs. It is kept only while the file is compiled.
type patForm struct {
	at   span // the pattern as written
	pat  cpat
	prio uint16 // the pattern's priority (Pattern.Priority)
	// dir is the length of the compiled text of the directory an index
	// page implies ("/dir/" for "/dir/index.html", see
	// indexPageDirectory), a prefix of pat's, or 0; dirPrio is its
	// priority.
	dir, dirPrio uint16
}

// newPatForm compiles the pattern text, which at locates in the text b
// holds.
func newPatForm(b *textBuilder, text string, at span) patForm {
	f := patForm{at: at, pat: compilePattern(b, text, at), prio: uint16(canonicalLen(text, false))}
	if dir, ok := indexPageDirectory(text); ok {
		f.dirPrio = uint16(canonicalLen(dir, false) + 1) // and "$"
		f.dir = uint16(len(dir))
		if f.pat.flags&patRewritten != 0 {
			f.dir = uint16(len(appendSegments(nil, dir)))
		}
	}
	return f
}

// indexPageDirectory returns the directory an allow rule for a directory
// index page also allows: "Allow: /dir/index.html" also allows "/dir/",
// read as "/dir/$" (Google-compatible: Google reads "index.htm" and
// "index.html" as the directory itself; RFC 9309 has no such rule).
func indexPageDirectory(pattern string) (string, bool) {
	slash := strings.LastIndexByte(pattern, '/')
	if slash < 0 || !strings.HasPrefix(pattern[slash:], "/index.htm") {
		return "", false
	}
	return pattern[:slash+1], true
}

// A naming says which source groups name each product token, and which
// name "*" (RFC 9309 §2.2.1: all groups naming a token combine).
type naming struct {
	tokens  []string            // in lower case, in the order first named
	spelt   []span              // each token as first written
	sources map[string][]uint32 // by token in lower case
	global  []uint32
}

// naming reads the user-agent lines of r's source groups.
func (r *Robots) naming() naming {
	n := naming{sources: map[string][]uint32{}}
	for si := range r.sources {
		end, _, _ := r.sourceEnd(si)
		for _, a := range r.agents[r.sources[si].agents:end] {
			v := a.value.in(r.text)
			if isGlobalAgent(v) {
				n.global = appendOnce(n.global, uint32(si))
				continue
			}
			tok := ProductToken(v)
			if tok == "" {
				continue
			}
			k := toLowerASCII(tok)
			if _, seen := n.sources[k]; !seen {
				n.tokens = append(n.tokens, k)
				n.spelt = append(n.spelt, span{off: a.value.off, n: uint32(len(tok))})
			}
			n.sources[k] = appendOnce(n.sources[k], uint32(si))
		}
	}
	return n
}

// compile builds the groups of p.r from its source groups.
func (p *parser) compile() {
	r := p.r
	names := r.naming()
	// One Group for each kind and set of source groups: tokens named in
	// the same groups share it, and a named group and the "*" group made
	// of the same source groups share all but their kind.
	type groupPlan struct {
		kind GroupKind
		set  []uint32
	}
	var plans []groupPlan
	planOf := map[string]int{}
	planFor := func(kind GroupKind, set []uint32) int {
		key := string(setKey(kind, set))
		if i, ok := planOf[key]; ok {
			return i
		}
		planOf[key] = len(plans)
		plans = append(plans, groupPlan{kind, set})
		return len(plans) - 1
	}
	plan := make([]int, len(names.tokens))
	for i, k := range names.tokens {
		plan[i] = planFor(NamedGroup, names.sources[k])
	}
	wildcard := -1
	if len(names.global) > 0 {
		wildcard = planFor(WildcardGroup, names.global)
	}
	r.groups = make([]Group, len(plans))
	p.ranks = make([]uint32, 0, len(r.rules)+len(r.rules)/8) // most rules are in one group; a few have a directory too
	built := map[string]*Group{}
	pairs := maxUsagePairs // the file's budget (see newUsageSet)
	for i, pl := range plans {
		g := &r.groups[i]
		g.kind = pl.kind
		key := string(setKey(NoGroup, pl.set))
		if b := built[key]; b != nil {
			g.r, g.m, g.ranks, g.src, g.line, g.usage = b.r, b.m, b.ranks, b.src, b.line, b.usage
			continue
		}
		p.build(g, pl.set, &pairs)
		built[key] = g
	}
	r.ranks, r.groupSrc = slices.Clone(p.ranks), slices.Clone(p.groupSrc)
	if wildcard >= 0 {
		r.wildcard = &r.groups[wildcard]
	}
	named := make([]uint32, len(plan))
	for i, pl := range plan {
		named[i] = uint32(pl)
	}
	r.tokens = newTokenTable(r.text, names.spelt, named)
}

// setKey names a kind and set of source groups, for a map.
func setKey(kind GroupKind, set []uint32) []byte {
	b := []byte{byte(kind)}
	for _, si := range set {
		b = binary.LittleEndian.AppendUint32(b, si)
	}
	return b
}

func appendOnce(s []uint32, v uint32) []uint32 {
	if len(s) > 0 && s[len(s)-1] == v {
		return s
	}
	return append(s, v)
}

// rankKey orders a group's patterns (RFC 9309 §2.2.2): by priority, the
// longest first, then allow before disallow, then in file order (seq).
func rankKey(prio uint16, allow bool, seq uint64) uint64 {
	k := uint64(0xFFFF-prio)<<48 | seq
	if !allow {
		k |= 1 << 47
	}
	return k
}

const seqMask = 1<<47 - 1

// sortRanks sorts rank keys as slices.Sort does. Their sequence numbers
// come in order, so a stable sort by the rest does it: a counting sort in
// two passes, linear in the keys (on the 10,749 rules of the synthetic
// file's "*" group, a tenth of the time slices.Sort takes).
func sortRanks(keys []uint64) {
	if len(keys) < 256 {
		slices.Sort(keys)
		return
	}
	buf := make([]uint64, len(keys))
	from, to := keys, buf
	for _, shift := range [2]uint{47, 56} { // the disallow bit and the priority's low octet, then its high one
		var at [512]int
		for _, k := range from {
			at[k>>shift&511]++
		}
		sum := 0
		for d, n := range at {
			at[d], sum = sum, sum+n
		}
		for _, k := range from {
			d := k >> shift & 511
			to[at[d]] = k
			at[d]++
		}
		from, to = to, from
	}
}

// build compiles the source groups of set into g, spending *usagePairs on
// combined usage preferences (see newUsageSet).
func (p *parser) build(g *Group, set []uint32, usagePairs *int) {
	r := p.r
	g.r, g.line = r, r.sources[set[0]].line
	g.src = run{off: uint32(len(p.groupSrc)), n: uint32(len(set))}
	p.groupSrc = append(p.groupSrc, set...)
	n := 0
	for _, si := range set {
		_, rulesEnd, _ := r.sourceEnd(int(si))
		n += int(rulesEnd - r.sources[si].rules)
	}
	rules := make([]uint32, 0, n)    // in file order
	keys := make([]uint64, 0, n+n/8) // a rankKey for each rule and directory, seq telling which
	var usage []UsageRule            // made for the index, not kept
	for _, si := range set {
		_, rulesEnd, usageEnd := r.sourceEnd(int(si))
		for ri := r.sources[si].rules; ri < rulesEnd; ri++ {
			rr := r.rules[ri]
			f := &p.forms[p.ruleForm[ri]]
			seq := uint64(len(rules)) << 1
			rules = append(rules, ri)
			keys = append(keys, rankKey(f.prio, rr.allow(), seq))
			if rr.allow() && f.dir > 0 {
				keys = append(keys, rankKey(f.dirPrio, true, seq|1))
			}
		}
		usage = append(usage, r.usageRules(r.sources[si].usage, usageEnd)...)
	}
	sortRanks(keys)
	g.ranks = run{off: uint32(len(p.ranks)), n: uint32(len(keys))}
	pats := make([]cpat, len(keys))
	for i, k := range keys {
		seq := k & seqMask
		ri := rules[seq>>1]
		f := &p.forms[p.ruleForm[ri]]
		pats[i] = f.pat
		if seq&1 != 0 {
			ri |= rankDir
			pats[i].n = f.dir
			pats[i].flags |= patAnchored
		}
		p.ranks = append(p.ranks, ri)
	}
	g.m = p.matcherFor(pats)
	g.usage = newUsageSet(usage, usagePairs)
}

// matcherFor returns the matcher of patterns ranked as pats, sharing one
// with a group whose patterns rank alike.
func (p *parser) matcherFor(pats []cpat) *matcher {
	key := make([]byte, 0, 8*len(pats))
	for _, c := range pats {
		key = binary.LittleEndian.AppendUint32(key, c.off)
		key = binary.LittleEndian.AppendUint16(key, c.n)
		key = append(key, c.flags, 0)
	}
	if m := p.matchers[string(key)]; m != nil {
		return m
	}
	m := newMatcher(p.r.text, pats)
	if p.matchers == nil {
		p.matchers = map[string]*matcher{}
	}
	p.matchers[string(key)] = m
	return m
}
