package enforce

import (
	"net/http"
	"strings"
	"time"
)

// A site's robots.txt can reach a Store another way than its own fetch:
// as the site's answer to a client's GET /robots.txt, seen passing through
// the handler. A crawler that has just read a new file then meets that
// file, instead of the copy fetched before the change, and is not denied
// (and recorded) for following the file it was given.

// OfferInterval is the shortest time between a host's last fetch or offer
// and an offer the store considers. Clients may ask for robots.txt as
// often as they like; each offer costs a copy and a hash of the body (only
// a changed file is parsed again, which clients cannot cause), so offers
// are taken at most about once a second per host.
const OfferInterval = time.Second

// Offerable reports whether Offer would now consider an answer for host:
// host was fetched before, no fetch of it is in flight, and its copy was
// last checked at least OfferInterval ago. A caller checks it before going
// to the trouble of keeping a copy of a response.
func (s *Store) Offerable(host string) bool {
	_, ok := s.offerable(strings.ToLower(host))
	return ok
}

func (s *Store) offerable(key string) (*hostEntry, bool) {
	v, ok := s.hosts.Load(key)
	if !ok || s.closed.Load() {
		return nil, false
	}
	e := v.(*hostEntry)
	snap := e.snap.Load()
	if snap == nil || e.fetching.Load() || s.cfg.Now().Sub(snap.CheckedAt) < OfferInterval {
		return nil, false
	}
	return e, true
}

// Offer hands the store resp, the site's answer to a GET of host's
// robots.txt that reached the caller another way, and reports whether the
// store took it as a fetch of that file. It takes only what says the same
// to every client, and only when Offerable:
//
//   - a complete 200 answer whose body passes the checks a fetched body
//     does (not an HTML page, not binary). A site may answer one client
//     with an error or a challenge (a firewall's 403 to crawlers, say),
//     which says nothing about its file; redirects and errors are left to
//     the store's own fetch, which follows and retries them by the RFC.
//   - read up to the store's size limit plus one octet, as a fetch is:
//     Truncated says the body went on.
//
// Only the caller can tell whether an answer is whole and as every client
// gets it: it offers only the answer to a plain GET, with no query, range
// or condition, and not a body with a Content-Encoding.
func (s *Store) Offer(host string, resp Response) bool {
	if resp.StatusCode != http.StatusOK {
		return false
	}
	e, ok := s.offerable(strings.ToLower(host))
	if !ok || !e.fetching.CompareAndSwap(false, true) {
		return false
	}
	defer e.fetching.Store(false)
	o := classifyResponse(e.url, resp, s.life.maxSize+1)
	if o.access != AccessAvailable {
		return false
	}
	prev := e.snap.Load()
	s.publish(e, prev, s.life.next(prev, e.url, o, s.cfg.Now()))
	return true
}
