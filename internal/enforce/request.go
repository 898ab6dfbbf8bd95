package enforce

import (
	"net/http"
	"net/url"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// A Request is a request as the client sent it, before any rewrite by the
// handlers before this one: what the judgement reads of it, and writes in
// its record. The judgement never writes to it.
type Request struct {
	// Method, URL and URI are the request line as the server parsed it
	// from what the client sent: for Go's server, the original request's
	// Method, URL and RequestURI. The judgement reads the target from URL
	// (see TargetOf), never from a re-parse of URI, which is only
	// recorded; a URL with no path the handlers after this one can read
	// the same way makes the target unreadable, which fails closed.
	Method string
	URL    *url.URL
	URI    string
	// Host is the request's Host header, for its record; UserAgent its
	// User-Agent header, "" when missing.
	Host, UserAgent string
	// ClientIP is the client's address, as the server resolved it behind
	// trusted proxies; RemoteIP the connection's peer.
	ClientIP, RemoteIP string
	// Header holds the request's header fields: those that make some
	// origins serve another path (X-Original-URL, X-Rewrite-URL,
	// X-Forwarded-Prefix) are judged too. HTTP is the request itself, read
	// only by Identity (signatures); either may be nil.
	Header http.Header
	HTTP   *http.Request
	// Site is the origin whose robots.txt applies (see robotstxt.SiteKey);
	// "" when the request names none, which a Store refuses
	// (RefusalInvalidHost). Via is what a Store fetches the site's
	// robots.txt with (see robotstxt.Store.SnapshotWith); nil for other
	// sources.
	Site string
	Via  robotstxt.Fetcher
	// Now is when the request arrived; the zero value means the current
	// time, read once, and only when the judgement needs it.
	Now time.Time
}

// A Query is what a decision reads of a request: its target and its
// User-Agent, and the claim it could not prove.
type Query struct {
	// Target is the request target as the server parsed it from what the
	// client sent: the escaped path and raw query of the original request,
	// never a path already decoded or rewritten by earlier handlers (see
	// TargetOf).
	Target string
	// Unreadable says the server parsed the target into no path the
	// decision can judge the way the handlers after it will read it (an
	// opaque URL such as "x:private", say). The decision then fails
	// closed: disallowed for every client the rules bind.
	Unreadable bool
	// UserAgent is the User-Agent header; "" when missing.
	UserAgent string
	// Forged, when not empty, is a product token the client claimed and
	// failed to prove (see package verify): the groups it names do not
	// bind the client, which is judged as if its header did not name it,
	// but as the crawler it claimed to be: a client that names a token
	// the site's robots.txt names is a crawler, genuine or not, and the
	// "*" group binds it as one (agent.AutomatedClaim).
	Forged string
}
