// Package enforce holds a site's crawlers to its robots.txt (RFC 9309).
//
// A Source says which robots.txt is in force for a host: a Store fetches
// each host's own file and keeps it current by the access rules of RFC 9309
// §2.3.1 and the caching rules of §2.4; a FileSource and an InlineSource
// serve a file from the configuration. What they return is a Snapshot, an
// immutable value that names its version (source, fetch time, content hash),
// so that every decision can say which robots.txt it was made against.
//
// Sources take the clock as a function and the network as a Fetcher, so
// that tests control both; HTTPFetcher is the Fetcher for real use.
package enforce
