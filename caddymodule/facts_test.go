package caddymodule

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// unitFactsHandler returns a handler with only what its factsTable needs,
// counting on reg.
func unitFactsHandler(t *testing.T, reg *prometheus.Registry, mode string) *Handler {
	t.Helper()
	h := &Handler{Mode: mode, metrics: unitNewMetrics(t, reg)}
	h.facts = newFactsTable(h.newFacts)
	return h
}

// unitPlaceholder returns what a provider answers for a placeholder.
func unitPlaceholder(t *testing.T, f *decisionFacts, key string) any {
	t.Helper()
	v, ok := f.provider(key)
	if !ok {
		t.Fatalf("provider does not answer %s", key)
	}
	return v
}

// TestFactsTableKinds feeds three times more kinds of decision than the
// table has slots (every case spelling of a token, each with two rules),
// each twice: every lookup returns the facts of its own kind, whether
// cached or evicted, and all spellings count in one series.
func TestFactsTableKinds(t *testing.T) {
	const token = "facebookexternalhit" // 19 letters: 524288 spellings, and catalogued
	n := 3 * factsSlots / 2
	reg := prometheus.NewRegistry()
	h := unitFactsHandler(t, reg, "log")
	for i := range n {
		for _, rule := range []rules.Rule{{Pattern: "/private/", Line: 3}, {Pattern: "/drafts/", Line: 4}} {
			dec := enforce.Decision{Reason: enforce.ReasonNamedGroup, Token: unitSpelling(token, i), Verdict: rules.Verdict{Rule: rule}}
			for range 2 {
				f := h.facts.get(&dec)
				if f.key != factsKeyOf(&dec) {
					t.Fatalf("facts of %+v have key %+v", factsKeyOf(&dec), f.key)
				}
				if got := unitPlaceholder(t, f, phAgent); got != dec.Token {
					t.Fatalf("agent placeholder = %v, want %s", got, dec.Token)
				}
				if got := unitPlaceholder(t, f, phRuleLine); got != rule.Line {
					t.Fatalf("rule_line placeholder = %v, want %d", got, rule.Line)
				}
				f.counter.Inc()
			}
		}
	}
	unitCompareSeries(t, unitSeries(t, reg, unitDecisionsMetric), map[string]float64{
		unitDecisionLabels(token, "log", "deny"): float64(4 * n),
	})
}

// TestFactsTableOwnsStrings checks that cached facts keep their own copy
// of the agent token and the rule: the request's header and an old
// robots.txt body must be free to go.
func TestFactsTableOwnsStrings(t *testing.T) {
	h := unitFactsHandler(t, prometheus.NewRegistry(), "enforce")
	header := []byte("ExampleBot")
	body := []byte("/private/")
	dec := enforce.Decision{
		Reason:  enforce.ReasonNamedGroup,
		Token:   unsafe.String(unsafe.SliceData(header), len(header)),
		Verdict: rules.Verdict{Rule: rules.Rule{Pattern: unsafe.String(unsafe.SliceData(body), len(body)), Line: 2}},
	}
	f := h.facts.get(&dec)
	copy(header, "XXXXXXXXXX")
	copy(body, "/changed/")
	if got := unitPlaceholder(t, f, phAgent); got != "ExampleBot" {
		t.Errorf("agent placeholder after the header changed = %v, want ExampleBot", got)
	}
	if got := unitPlaceholder(t, f, phRule); got != "/private/" {
		t.Errorf("rule placeholder after the body changed = %v, want /private/", got)
	}
}

// TestFactsTableLongRules checks that a kind whose rule is longer than the
// table keeps is answered, but not kept: the table's memory is bounded by
// maxCachedFacts a slot, whatever the robots.txt holds.
func TestFactsTableLongRules(t *testing.T) {
	h := unitFactsHandler(t, prometheus.NewRegistry(), "enforce")
	for i := range 2 * factsSlots {
		rule := fmt.Sprintf("/%d/%s", i, strings.Repeat("x", 16<<10))
		dec := enforce.Decision{Reason: enforce.ReasonNamedGroup, Token: "GPTBot", Verdict: rules.Verdict{Rule: rules.Rule{Pattern: rule, Line: i + 1}}}
		if got := unitPlaceholder(t, h.facts.get(&dec), phRule); got != rule {
			t.Fatalf("rule placeholder of a long rule = %.20v…, want the rule", got)
		}
	}
	kept := 0
	for i := range h.facts.slots {
		if f := h.facts.slots[i].Load(); f != nil {
			kept += len(f.key.agent) + len(f.key.rule)
		}
	}
	if kept > factsSlots*maxCachedFacts {
		t.Errorf("the table keeps %d octets of agents and rules, want at most %d", kept, factsSlots*maxCachedFacts)
	}
}

// TestFactsTableConcurrent looks kinds up from several goroutines, as
// concurrent requests do (run with -race): every lookup gets its own
// kind's facts and no count is lost.
func TestFactsTableConcurrent(t *testing.T) {
	const goroutines, each = 8, 600
	reg := prometheus.NewRegistry()
	h := unitFactsHandler(t, reg, "enforce")
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				dec := enforce.Decision{Allowed: i%3 == 0, Reason: enforce.ReasonNamedGroup, Token: unitSpelling("facebookexternalhit", (g*each+i)%700)}
				f := h.facts.get(&dec)
				if f.key != factsKeyOf(&dec) {
					t.Errorf("facts of %+v have key %+v", factsKeyOf(&dec), f.key)
					return
				}
				f.counter.Inc()
			}
		})
	}
	wg.Wait()
	allowed := goroutines * ((each + 2) / 3)
	unitCompareSeries(t, unitSeries(t, reg, unitDecisionsMetric), map[string]float64{
		unitDecisionLabels("facebookexternalhit", "enforce", "allow"): float64(allowed),
		unitDecisionLabels("facebookexternalhit", "enforce", "deny"):  float64(goroutines*each - allowed),
	})
}

// TestFactsTableSeries checks the series of each kind of automated
// decision: a named group's counts under its token, lower-cased; the "*"
// group's and an unreachable file's under "_other".
func TestFactsTableSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := unitFactsHandler(t, reg, "log")
	for _, dec := range []enforce.Decision{
		{Reason: enforce.ReasonNamedGroup, Token: "GPTBot"},
		{Allowed: true, Reason: enforce.ReasonNamedGroup, Token: "gptbot"},
		{Reason: enforce.ReasonWildcardGroup, Token: "curl"},
		{Reason: enforce.ReasonUnreachable, Token: "CCBot"},
		{Allowed: true, Reason: enforce.ReasonWildcardGroup, Token: "curl"},
	} {
		h.facts.get(&dec).counter.Inc()
	}
	unitCompareSeries(t, unitSeries(t, reg, unitDecisionsMetric), map[string]float64{
		unitDecisionLabels("gptbot", "log", "deny"):  1,
		unitDecisionLabels("gptbot", "log", "allow"): 1,
		unitDecisionLabels("_other", "log", "deny"):  2,
		unitDecisionLabels("_other", "log", "allow"): 1,
	})
}
