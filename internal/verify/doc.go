// Package verify decides whether a client that names a crawler's product
// token in its User-Agent (Googlebot, GPTBot, …) is that crawler. A
// User-Agent is a claim anyone can forge; the methods here check it against
// what the crawler's operator publishes. It imports no Caddy: the clock,
// the DNS resolver, the HTTP client and persistent storage are injected.
//
// # Outcomes and methods
//
// Verify returns a Result: Verified (a method for the token confirmed the
// claim), Forged (the token has a method and the client failed it),
// Unverified (no method is known for the token, or none applies to this
// request), Pending (a method applies but its answer is not in yet),
// Unconfirmed (no answer will come in time) or Replayed (a Web Bot Auth
// signature that verifies, first seen from another client), with the
// Method that decided: IPRanges, ReverseDNS or WebBotAuth.
//
//   - IPRanges: the client address is in a range list the operator
//     publishes (BuiltinLists; operators can replace a token's lists with
//     their own file or URL). Lists are fetched after Start, refreshed daily
//     with backoff after failures, and kept in Storage so that a restart or
//     an offline start has the last good copy.
//   - ReverseDNS: forward-confirmed reverse DNS. The address's PTR name lies
//     under a domain the operator documents (BuiltinReverseDNS), on a label
//     boundary, and that name resolves back to the address. Lookups run in
//     the background, bounded in number, rate and memory; answers are
//     cached per address.
//   - WebBotAuth: an HTTP Message Signature (RFC 9421) made as
//     draft-ietf-webbotauth-httpsig-protocol-01 describes, by a signature
//     agent known to speak for the token (BuiltinSignatureAgents, and
//     Config.SignatureAgents), with an Ed25519 key from the agent's key
//     directory, fetched and cached in the background, or pinned by the
//     configuration (Config.AgentKeys, read by New; never fetched). A
//     signature verifies once per client, within at most 24 hours of its
//     created (wba_replay.go).
//
// # The order of Verify
//
//  1. A token no method is known for: Unverified, at once.
//  2. Web Bot Auth (when on and the request carries signatures): if a
//     signature tagged "web-bot-auth" covers a Signature-Agent member naming
//     an agent known for the token, Web Bot Auth decides: Verified when one
//     such signature verifies, Pending while the agent's key directory is
//     being fetched (also when a keyid is missing from a copy over five
//     minutes old, which is then fetched again), Forged when the directory
//     is in and none verifies. A directory that cannot be fetched is no
//     evidence: the next steps decide (or Pending, for a token with no
//     other method). When no signature names such an agent, the claim of a
//     token whose agent the configuration names (or whose built-in agent
//     signs every request) is Forged: that token must be signed.
//  3. IP ranges, when the token has lists: an address in a loaded list is
//     Verified. Otherwise, when the token also has reverse DNS, step 4
//     decides; when it has not, the claim is Forged if all its lists are
//     loaded and Pending if some are not yet (first start, offline, no
//     stored copy).
//  4. Reverse DNS, when the token has domains: a cached answer gives
//     Verified or Forged; without one, a lookup starts in the background
//     and the claim is Pending. A lookup refused by the rate limit, or one
//     that failed, also leaves it Pending.
//  5. Otherwise (only Web Bot Auth is known and the request is not signed
//     by a known agent): Unverified.
//
// Verify never waits for the network and, on the warm paths (an address in
// a list, a cached DNS answer), allocates nothing. VerifyNow waits for
// pending answers, for command-line use.
package verify
