package caddymodule

import (
	"hash/maphash"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
)

// decisionFacts is what the handler hands on for one kind of decision
// about an automated client: the provider of its placeholders and the
// metric series it counts in. Building them costs allocations and label
// lookups; the same crawler meets the same rules request after request,
// so they are built once per kind and kept in a factsTable.
type decisionFacts struct {
	key      factsKey
	provider caddy.ReplacerFunc
	counter  prometheus.Counter
	// access are the fields the decision adds to the request's access
	// log entry.
	access accessFields
}

// accessFields are a decision's fields in the access log, written inline
// (zap.Inline) as robots_verdict, robots_reason, robots_agent and
// robots_rule_line.
type accessFields struct {
	verdict, reason, agent string
	ruleLine               int
}

// MarshalLogObject implements zapcore.ObjectMarshaler.
func (a *accessFields) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("robots_verdict", a.verdict)
	enc.AddString("robots_reason", a.reason)
	enc.AddString("robots_agent", a.agent)
	enc.AddInt("robots_rule_line", a.ruleLine)
	return nil
}

// factsKey is what decisionFacts depend on: the verdict, its reason, the
// agent token as the client spelt it, and the deciding rule.
type factsKey struct {
	allowed  bool
	reason   enforce.Reason
	agent    string
	rule     string
	ruleLine int
}

func factsKeyOf(dec *enforce.Decision) factsKey {
	return factsKey{
		allowed:  dec.Allowed,
		reason:   dec.Reason,
		agent:    dec.Token,
		rule:     dec.Verdict.Rule.Pattern,
		ruleLine: dec.Verdict.Rule.Line,
	}
}

// maxCachedFacts bounds the octets of agent and rule a cached kind keeps:
// real tokens and rules are far shorter, and a robots.txt line may be 16
// KiB long, which would make the table's 1024 slots cost 17 MiB. A longer
// kind costs its rare requests an allocation instead.
const maxCachedFacts = 512

// factsSlots is the size of a factsTable: room for the kinds of decision
// a busy site's crawlers meet (each crawler's spelling times the rules
// that decide for it), in 8 KiB of pointers.
const factsSlots = 1024

// A factsTable caches decisionFacts in a fixed array, each kind in one of
// two slots chosen by its hash. A kind that finds both taken replaces one:
// memory never grows, whatever the clients send, and a lookup is a hash
// and two atomic loads, with no lock and no allocation. It is safe for
// concurrent use.
type factsTable struct {
	seed  maphash.Seed
	slots [factsSlots]atomic.Pointer[decisionFacts]
	// build makes the facts of a kind not in the table.
	build func(factsKey) *decisionFacts
}

func newFactsTable(build func(factsKey) *decisionFacts) *factsTable {
	return &factsTable{seed: maphash.MakeSeed(), build: build}
}

// get returns the facts of dec's kind.
func (t *factsTable) get(dec *enforce.Decision) *decisionFacts {
	key := factsKeyOf(dec)
	// The rule is left out of the hash: its line tells rules apart
	// within a file, and the full key is compared anyway.
	h := maphash.String(t.seed, key.agent) ^ uint64(key.ruleLine)*0x9e3779b97f4a7c15 ^ uint64(key.reason)<<1
	if key.allowed {
		h ^= 1
	}
	first := &t.slots[h%factsSlots]
	second := &t.slots[(h%factsSlots)^1]
	f1, f2 := first.Load(), second.Load()
	switch {
	case f1 != nil && f1.key == key:
		return f1
	case f2 != nil && f2.key == key:
		return f2
	}
	// Kept beyond the request: not views of its header or of the
	// robots.txt body, which a later version replaces.
	key.agent, key.rule = strings.Clone(key.agent), strings.Clone(key.rule)
	f := t.build(key)
	f.key = key
	if len(key.agent)+len(key.rule) > maxCachedFacts {
		return f // built for this request alone: the table's memory stays bounded
	}
	switch {
	case f1 == nil:
		first.Store(f)
	case f2 == nil:
		second.Store(f)
	case h>>63 == 0: // both taken: evict either, by a bit of the hash
		first.Store(f)
	default:
		second.Store(f)
	}
	return f
}

// newFacts builds the facts of a kind of decision, for h's factsTable.
func (h *Handler) newFacts(key factsKey) *decisionFacts {
	vals := &placeholders{
		verdict:  enforce.VerdictName(key.allowed),
		reason:   key.reason.String(),
		agent:    key.agent,
		rule:     key.rule,
		ruleLine: key.ruleLine,
	}
	return &decisionFacts{
		provider: vals.replace,
		counter:  h.metrics.series(key.allowed, key.reason, key.agent, h.Mode),
		access:   accessFields{verdict: vals.verdict, reason: vals.reason, agent: key.agent, ruleLine: key.ruleLine},
	}
}
