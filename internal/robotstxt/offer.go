package robotstxt

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"time"
)

// A site's robots.txt can reach a client through the handler: the site's
// answer to the client's own GET /robots.txt. The store never takes that
// answer as the file: a site may answer crawlers differently (by
// User-Agent, say, or a firewall's challenge), and one client's answer
// must not replace the file for everyone. It is a hint: when the version
// a client was served is not the one in force, the file may have changed,
// and the store fetches it again with its own request, so that a crawler
// that has just read a new file soon meets that file here, and is not
// denied (and recorded) for following the file it was given.

// OfferInterval is the shortest time between a host's last fetch and a
// fetch a hint starts. Clients may ask for robots.txt as often as they
// like, and may be served versions that differ from the store's (a site
// that varies the file by client); each such hint could cost a fetch
// through the site's route, so hints start one at most about once a
// second per host.
const OfferInterval = time.Second

// VersionHash returns the name of a robots.txt version, as Snapshot.Hash
// gives it: the first 16 hex digits of the SHA-256 of body, read up to one
// octet past the parse limit as a fetch reads it.
func VersionHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])[:hashLen]
}

// A VersionHasher names a version whose octets come in pieces, as
// VersionHash names a whole body: of a body passing through to a client,
// say, without keeping it.
type VersionHasher struct {
	h    hash.Hash
	left int
}

// NewVersionHasher returns a VersionHasher that reads the first limit
// octets written to it, as a fetch with that limit reads a body.
func NewVersionHasher(limit int) *VersionHasher {
	return &VersionHasher{h: sha256.New(), left: limit}
}

// Write adds p to the version, as far as the limit allows.
func (v *VersionHasher) Write(p []byte) {
	if n := min(len(p), v.left); n > 0 {
		v.h.Write(p[:n])
		v.left -= n
	}
}

// Name returns the version's name, as VersionHash gives it.
func (v *VersionHasher) Name() string {
	return hex.EncodeToString(v.h.Sum(nil))[:hashLen]
}

// Hint tells the store that a client was just served the robots.txt of
// host in the version hash (see VersionHash; "" when the answer was no
// file), and reports whether that started a fetch. It does when the host
// was fetched before, the version is not the one in force, no fetch of it
// is in flight, the store is open, and the copy in force was last checked
// at least OfferInterval ago. The fetch is the store's own, and what it
// finds replaces the snapshot as any refresh's result does.
func (s *Store) Hint(host, hash string) bool {
	e, ok := s.hosts.peek(strings.ToLower(host))
	if !ok || s.closed.Load() {
		return false
	}
	snap := e.snap.Load()
	if snap == nil || snap.Hash == hash || e.fetching.Load() || s.cfg.Now().Sub(snap.CheckedAt) < OfferInterval {
		return false
	}
	return s.refresh(e)
}
