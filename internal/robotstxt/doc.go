// Package robotstxt says which robots.txt is in force for a site, and which
// versions of it were in force within the day a crawler may keep one (RFC
// 9309 §2.4).
//
// A Source answers a Snapshot for a site: an immutable value that names its
// version (source, fetch time, content hash) and holds the parsed file, the
// index of its groups, and the versions it replaced within GraceWindow. A
// Store fetches each site's own file and keeps it current by the access
// rules of RFC 9309 §2.3.1 and the caching rules of §2.4, bounded in sites
// (a scan-resistant table), first fetches and versions; its state is saved
// and restored across restarts (SavedSite), and the versions the other
// instances of a fleet had in force join its snapshots (SetFleet). A
// FileSource and an InlineSource serve one file from the configuration.
// SiteKey names a site by its origin, in one canonical spelling.
//
// A GroupIndex finds the groups a header's product tokens name (see package
// agent), and keeps Google's reading of each group, which the judgement
// compares with this profile's.
//
// Sources take the clock as a function and the network as a Fetcher, so
// that tests control both; HTTPFetcher is the Fetcher for real use. It
// imports no Caddy.
package robotstxt
