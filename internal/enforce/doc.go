// Package enforce holds a site's crawlers to its robots.txt (RFC 9309): it
// decides who is asking, whether they may, and which robots.txt is in force.
// It imports no Caddy: time and fetching are injected, so every behaviour is
// testable on its own.
//
// Who is asking: Tokenize reads the candidate product tokens of a
// User-Agent header; a GroupIndex (or ChooseGroups) finds the robots.txt
// groups they name; a Classifier tells crawlers, which the "*" group binds
// under the default WildcardPolicy, from other automated clients and from
// browsers (see docs/classification.md).
//
// Whether they may: Readings are the spellings of a request target a server
// behind the handler could resolve it to, and a Decider judges each against
// the chosen groups, denying when any is disallowed. A Decision is a pure
// function of the snapshot, the request and the Policy, and says why.
//
// Which robots.txt is in force: a Source says so for a host. A Store fetches
// each host's own file and keeps it current by the access rules of RFC 9309
// §2.3.1 and the caching rules of §2.4; a FileSource and an InlineSource
// serve a file from the configuration. What they return is a Snapshot, an
// immutable value that names its version (source, fetch time, content hash),
// so that every decision can say which robots.txt it was made against.
//
// Sources take the clock as a function and the network as a Fetcher, so
// that tests control both; HTTPFetcher is the Fetcher for real use.
package enforce
