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
	// Pending means a method exists for the token but its answer is not in
	// yet (a range list not loaded, a DNS lookup or key directory under way).
	Pending
)

var outcomeNames = [...]string{None: "", Verified: "verified", Forged: "forged", Unverified: "unverified", Pending: "pending"}

// String returns the outcome's stable name as the compliance record and the
// metrics write it ("verified", "forged", "unverified", "pending"), or "" for
// None.
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
// Method is NoMethod when Outcome is Unverified or None; for Pending it names
// the method whose answer is awaited.
type Result struct {
	Outcome Outcome
	Method  Method
	// Limited, on a Pending result, says that no answer is on its way: the
	// budget of reverse DNS lookups is spent (a flood of claims from new
	// addresses), and the claim stays pending until a later request finds
	// room. A caller that judges pending claims as made may judge these
	// otherwise, so that a flood cannot buy a crawler's rights.
	Limited bool
}
