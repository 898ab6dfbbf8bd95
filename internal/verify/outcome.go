package verify

// Outcome is what a verifier concluded about a claimed product token.
type Outcome uint8

const (
	// None is the zero Outcome: no claim was judged.
	None Outcome = iota
	// Verified means a method known for the token confirmed the claim.
	Verified
	// Forged means the token has a method and the client failed it.
	Forged
	// Unverified means no method is known for the token, so the claim can be
	// neither confirmed nor refuted.
	Unverified
	// Pending means a method exists for the token and its answer is on its
	// way: a reverse DNS lookup or key directory fetch under way, begun
	// less than Config.PendingBound ago.
	Pending
	// Unconfirmed means a method exists for the token but no answer will
	// come in time: its range lists never loaded, a lookup failed, timed
	// out or was refused by the rate limit, or the claim has been pending
	// past Config.PendingBound. The claim proves nothing either way: a
	// caller judges it as one the client did not make.
	Unconfirmed
	// Replayed means the claim rests on a Web Bot Auth signature that
	// verifies, but was first seen, within its validity, from another
	// client: a signature proves the request it signed, once, not whoever
	// sends it again. The claim is not proven; a caller judges it as a
	// forged one, and never credits it to the crawler.
	Replayed
)

var outcomeNames = [...]string{None: "", Verified: "verified", Forged: "forged", Unverified: "unverified",
	Pending: "pending", Unconfirmed: "unconfirmed", Replayed: "replayed"}

// String returns the outcome's stable name as the compliance record and the
// metrics write it ("verified", "forged", "unverified", "pending",
// "unconfirmed", "replayed"), or "" for None.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "invalid"
}

// Method names the way a claim was decided.
type Method uint8

const (
	// NoMethod is the zero Method: no method decided.
	NoMethod Method = iota
	// IPRanges is membership of the client address in a range list the
	// crawler's operator publishes.
	IPRanges
	// ReverseDNS is forward-confirmed reverse DNS: the address's PTR name
	// lies under a domain the operator documents, and that name resolves
	// back to the address.
	ReverseDNS
	// WebBotAuth is an HTTP Message Signature (RFC 9421) by a signature
	// agent known to speak for the token, per the webbotauth protocol draft.
	WebBotAuth
)

var methodNames = [...]string{NoMethod: "", IPRanges: "ip_ranges", ReverseDNS: "reverse_dns", WebBotAuth: "web_bot_auth"}

// String returns the method's stable name ("ip_ranges", "reverse_dns",
// "web_bot_auth"), or "" for NoMethod.
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return "invalid"
}

// Result is the answer of Verify: what was concluded, and by which method.
// Method is NoMethod when Outcome is Unverified or None; for Pending and
// Unconfirmed it names the method whose answer is awaited or missing.
type Result struct {
	Outcome Outcome
	Method  Method
}

// combined gathers the answers of the methods that apply to a claim, for
// Verify: verified by any method wins (the caller returns at once); of
// the rest, a replayed signature comes first, since it shows someone
// presenting another client's proof; then an answer on its way (Pending),
// since it may yet verify, then a missing one (Unconfirmed); the claim is
// Forged only when every method that applies says so.
type combined struct {
	best Result
}

// rank orders the outcomes a method can give short of Verified.
func rank(o Outcome) int {
	switch o {
	case Replayed:
		return 4
	case Pending:
		return 3
	case Unconfirmed:
		return 2
	case Forged:
		return 1
	}
	return 0
}

// add takes r unless an answer of a higher rank is in; of equal ones, the
// last (the methods are asked from the cheapest to the most telling).
func (c *combined) add(r Result) {
	if rank(r.Outcome) >= rank(c.best.Outcome) {
		c.best = r
	}
}

// result returns the combined answer; Unverified when no method answered.
func (c *combined) result() Result {
	if c.best.Outcome == None {
		return Result{Outcome: Unverified}
	}
	return c.best
}
