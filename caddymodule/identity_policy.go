package caddymodule

import (
	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// What the handler and "caddy robots check" and "verify" share about
// crawler identity: which claims are verified, the verifier's
// configuration, and what a claim's outcome does to a decision. The
// handler verifies without waiting (Verify), the commands wait for the
// answer (VerifyNow); everything else is this one code.

// claimToVerify reports whether the claim behind dec is verified: the
// client names a product token, and the rules bind it. Browsers, and
// clients the "*" group does not bind, are never looked up.
func claimToVerify(dec *enforce.Decision) bool {
	return dec.Token != "" && dec.Bound
}

// verifyConfig returns the verify.Config of the configuration: the
// sources of proof and the resolver. The caller adds what belongs to its
// process (storage, metrics, logs).
func (cfg *Verify) verifyConfig() verify.Config {
	vc := verify.Config{
		ReverseDNS:          cfg.ReverseDNS,
		WebBotAuth:          cfg.WebBotAuth != "off",
		NoBuiltinLists:      cfg.Builtin == "off",
		NoBuiltinReverseDNS: cfg.Builtin == "off",
	}
	for _, r := range cfg.IPRanges {
		vc.RangeOverrides = append(vc.RangeOverrides, verify.RangeOverride{Token: r.Token, Source: r.Source})
	}
	if cfg.Resolver != "" {
		vc.Resolver = verify.NewResolver(cfg.Resolver)
	}
	return vc
}

// identityPolicy is what a claim's outcome does to a decision: Verify.Forged
// and Verify.Pending.
type identityPolicy struct {
	// forged is "wildcard" (or "", the default), "deny" or "ignore".
	forged string
	// pendingWildcard: a pending claim is judged as a forged one would be
	// under "wildcard" (Verify.Pending "wildcard").
	pendingWildcard bool
}

// apply applies the policy to dec, the decision d made on req, given res,
// the outcome of its claim: a forged claim is judged as an unnamed
// crawler ("wildcard"), refused ("deny") or only recorded ("ignore"); a
// pending one is judged as claimed (a real crawler is never refused while
// DNS answers) unless the policy says "wildcard", or no answer is on its
// way: a flood of claims from new addresses, past the lookup budget, must
// not buy the crawler's rights.
func (p identityPolicy) apply(d *enforce.Decider, res verify.Result, snap *enforce.Snapshot, req *enforce.Request, rd *enforce.Readings, dec *enforce.Decision) {
	forged := res.Outcome == verify.Forged
	switch {
	case forged && p.forged == "deny":
		dec.Allowed, dec.Reason, dec.Reading = false, enforce.ReasonForged, enforce.AsSent
	case forged && p.forged == "ignore":
	case (forged || res.Outcome == verify.Pending && (p.pendingWildcard || res.Limited)) && dec.Named:
		// Judged as the crawler it still says it is, without the token
		// it could not prove.
		req.Forged = dec.Token
		d.DecideInto(dec, snap, req, rd)
	}
}
