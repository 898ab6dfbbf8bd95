package enforce

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// Identity says whether a client is the crawler its User-Agent names (see
// package verify, whose Verifier implements it). Its methods are called
// on the request path: they must not wait for the network.
type Identity interface {
	// Verify decides whether the client at addr, whose request is r (read
	// for signatures; it may be nil), proves token.
	Verify(token string, addr netip.Addr, r *http.Request) verify.Result
	// HasMethod reports whether any method can decide a claim of token:
	// a token without one can be claimed by anyone, and proves nothing.
	HasMethod(token string) bool
	// ListedTokens returns the product tokens whose published range lists
	// hold addr, nil when none do; the caller must not modify the slice.
	// It is asked for every client whose header names no crawler a group
	// names (JudgeConfig.Undeclared), browsers included: one prefix
	// lookup, no allocation.
	ListedTokens(addr netip.Addr) []string
	// ProvenTokens returns the product tokens a request from addr (r, read
	// for signatures, may be nil) is proven to come from, whatever its
	// header names: those whose range lists hold addr, those whose
	// reverse DNS domains a name of addr already confirmed is under, and
	// those of a signature agent whose signature of r verifies. It starts
	// no lookup and waits for nothing; nil when none. The caller
	// must not modify the slice. It is asked for every request while an
	// escalation is in force (see escalation).
	ProvenTokens(addr netip.Addr, r *http.Request) []string
}

// ForgedPolicy says what a client that fails to prove its claim gets.
type ForgedPolicy uint8

const (
	// ForgedWildcard ("wildcard", the default): judged as the crawler it
	// still says it is, without the token it could not prove: by the
	// groups its other tokens name, or the "*" group.
	ForgedWildcard ForgedPolicy = iota
	// ForgedDeny ("deny"): refused outright.
	ForgedDeny
	// ForgedIgnore ("ignore"): judged as claimed, and recorded as forged.
	ForgedIgnore
)

var forgedPolicyNames = [...]string{ForgedWildcard: "wildcard", ForgedDeny: "deny", ForgedIgnore: "ignore"}

// String returns "wildcard", "deny" or "ignore".
func (p ForgedPolicy) String() string {
	if int(p) < len(forgedPolicyNames) {
		return forgedPolicyNames[p]
	}
	return fmt.Sprintf("forged_policy(%d)", uint8(p))
}

// ParseForgedPolicy reads a ForgedPolicy by name; "" is the default.
func ParseForgedPolicy(s string) (ForgedPolicy, error) {
	if s == "" {
		return ForgedWildcard, nil
	}
	for p, name := range forgedPolicyNames {
		if name == s {
			return ForgedPolicy(p), nil
		}
	}
	return 0, fmt.Errorf("forged %q: want wildcard, deny or ignore", s)
}

// IdentityPolicy is what the outcome of a claim does to a decision.
type IdentityPolicy struct {
	Forged ForgedPolicy
	// PendingWildcard judges a claim whose proof is on its way
	// (verify.Pending, within the verifier's bound) as a forged one is
	// judged under ForgedWildcard. Otherwise it is judged as claimed, so
	// that a real crawler is not refused while DNS answers. A claim no
	// answer will come for in time (verify.Unconfirmed) is always judged
	// without its token: it proves nothing, and a real crawler loses only
	// what it would lose by not claiming.
	PendingWildcard bool
}

// claimed reports whether a decision rests on a claim worth verifying:
// the client names a product token, and the rules bind it. Browsers, and
// clients the "*" group does not bind, are never looked up.
func claimed(dec *Decision) bool { return dec.Token != "" && dec.Bound }

// identify verifies the claim behind dec, made on q, and applies the
// policy: the decision is made again without the token a forged (or, by
// policy, pending) claim could not prove, which q then names as Forged
// and jd as Unproven.
func (j *Judge) identify(jd *Judgement, q *Query, dec *Decision, rd *Readings) {
	if j.cfg.Identity == nil || !claimed(dec) || jd.Identity.Outcome != verify.None {
		return
	}
	addr, _ := netip.ParseAddr(jd.req.ClientIP)
	res := j.cfg.Identity.Verify(dec.Token, addr, jd.req.HTTP)
	jd.Identity = res
	// A replayed signature proves nothing of this client: judged as a
	// forged claim is.
	forged := res.Outcome == verify.Forged || res.Outcome == verify.Replayed
	p := j.cfg.IdentityPolicy
	switch {
	case forged && p.Forged == ForgedDeny:
		dec.Allowed, dec.Reason, dec.Reading = false, ReasonForged, AsSent
	case forged && p.Forged == ForgedIgnore:
	case (forged || res.Outcome == verify.Unconfirmed || res.Outcome == verify.Pending && p.PendingWildcard) && dec.Named:
		// Judged as the crawler it still says it is, without the token
		// it could not prove.
		q.Forged, jd.Unproven = dec.Token, dec.Token
		j.decider.DecideInto(dec, dec.Snapshot, q, rd)
	}
}
