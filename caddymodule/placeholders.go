package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
)

// Placeholder names; see Handler.
const (
	phVerdict  = "http.robots_enforce.verdict"
	phReason   = "http.robots_enforce.reason"
	phAgent    = "http.robots_enforce.agent"
	phRule     = "http.robots_enforce.rule"
	phRuleLine = "http.robots_enforce.rule_line"
	// phContentUsage is set, unlike the others, only when a usage
	// preference applies: it is per request, not per kind of decision.
	phContentUsage = "http.robots_enforce.content_usage"
)

// placeholders are the values of the handler's placeholders for one kind
// of decision (see decisionFacts). They reach the request's Replacer as a provider (Replacer.Map),
// not as five static values: a value is turned into a string only when a
// placeholder is used, which is rarely, while setting static values would
// allocate the Replacer's map on every request.
type placeholders struct {
	verdict, reason, agent, rule string
	ruleLine                     int
}

// replace answers the handler's placeholders, "" for those that do not
// apply: Caddy leaves a placeholder that nothing answers as it is written,
// which would put "{http.robots_enforce.rule}" in a header or a body.
func (p *placeholders) replace(key string) (any, bool) {
	switch key {
	case phVerdict:
		return p.verdict, true
	case phReason:
		return p.reason, true
	case phAgent:
		return p.agent, true
	case phRule:
		return p.rule, true
	case phRuleLine:
		if p.ruleLine == 0 {
			return "", true
		}
		return p.ruleLine, true
	}
	return nil, false
}

// constantProviders answer the decisions whose placeholders depend on the
// verdict and reason alone (a browser, /robots.txt): built once, so that
// registering them costs no allocation on the requests most sites get most.
var constantProviders = func() (p [enforce.NumReasons][2]caddy.ReplacerFunc) {
	for reason := range p {
		for allowed, verdict := range [2]string{"deny", "allow"} {
			vals := &placeholders{verdict: verdict, reason: enforce.Reason(reason).String()}
			p[reason][allowed] = vals.replace
		}
	}
	return p
}()

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
