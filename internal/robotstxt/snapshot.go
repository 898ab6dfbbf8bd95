package robotstxt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// GraceWindow is how long a replaced robots.txt stays in Snapshot.Earlier.
// RFC 9309 §2.4 lets a crawler use a cached robots.txt for up to 24 hours,
// so for that long after a change a crawler that still obeys the old file
// is not at fault.
const GraceWindow = 24 * time.Hour

// hashLen is the number of hex digits of SHA-256 kept in Snapshot.Hash: 64
// bits, enough to tell the versions of one host's file apart in logs while
// staying short. It names a version; it is not a security check, and
// snapshots compare the full digest.
const hashLen = 16

// A Source says which robots.txt is in force for a host.
//
// Snapshot returns the snapshot in force for host (an authority such as
// "example.com" or "example.com:8443"); it never returns nil, and callers
// must not modify the result. It may wait for a first fetch, no longer than
// ctx allows. Implementations are safe for concurrent use; Close releases
// their resources and waits for their goroutines, after which Snapshot still
// answers but never fetches.
type Source interface {
	Snapshot(ctx context.Context, host string) *Snapshot
	Close() error
}

// AccessResult is the result of fetching a robots.txt, as RFC 9309 §2.3.1
// names them.
type AccessResult uint8

const (
	// AccessAvailable: the file was fetched with a 2xx response, or read
	// from a static source, and parsed: its rules apply (RFC 9309 §2.3.1.1).
	AccessAvailable AccessResult = iota + 1
	// AccessUnavailable: the server said there is no file (a 4xx status
	// other than 429, or redirects that lead nowhere): no rules apply and
	// every target is allowed (RFC 9309 §2.3.1.3).
	AccessUnavailable
	// AccessUnreachable: server or network errors, and no earlier answer to
	// keep: the file is undefined, and crawlers must assume complete
	// disallow (RFC 9309 §2.3.1.4) unless the unreachable policy allows.
	AccessUnreachable
	// AccessLongUnreachable: unreachable for UnreachableExpiry or longer;
	// the long-unreachable policy decides (RFC 9309 §2.3.1.4, second
	// paragraph).
	AccessLongUnreachable
)

var accessNames = [...]string{
	AccessAvailable:       "available",
	AccessUnavailable:     "unavailable",
	AccessUnreachable:     "unreachable",
	AccessLongUnreachable: "long_unreachable",
}

// String returns the result's stable name: "available", "unavailable",
// "unreachable" or "long_unreachable".
func (a AccessResult) String() string {
	if int(a) < len(accessNames) && accessNames[a] != "" {
		return accessNames[a]
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// A Snapshot is the robots.txt in force for a host at one moment, with what
// is needed to name that version in a verdict. It is immutable once
// published: sources replace it as a whole, never edit it.
//
// Robots decides when it is non-nil. When it is nil, DisallowAll tells
// whether every target but /robots.txt is disallowed (complete disallow) or
// every target is allowed.
type Snapshot struct {
	// Access is the result the content in force comes from. While fetches
	// fail, a source keeps serving its last available or unavailable
	// answer, and Access stays that answer's; see Failures.
	Access AccessResult
	// Robots is the parsed file when Access is AccessAvailable, and nil
	// otherwise.
	Robots *rules.Robots
	// DisallowAll, when Robots is nil, says every target but /robots.txt
	// is disallowed; when false, every target is allowed.
	DisallowAll bool
	// Refusal, when not RefusalNone, says why the source gave no answer
	// of the host's own; DisallowAll is then set.
	Refusal Refusal

	// Source is the robots.txt URL ("https://example.com/robots.txt"),
	// "file:" followed by a path, or "inline". After redirects, the rules
	// still apply to the host of this URL (RFC 9309 §2.3.1.2).
	Source string
	// FinalURL is the URL the body came from when redirects were followed,
	// and empty otherwise.
	FinalURL string
	// HTTPStatus is the status of the response that produced the content
	// in force; 0 when there was none (network error, static source).
	HTTPStatus int
	// Hash is the first 16 hex digits of the SHA-256 of the body, or empty
	// when there is no file. With Source and FetchedAt, it names the
	// version a verdict was made against.
	Hash string
	// Body holds the octets the rules were read from (up to the parse
	// limit plus one), for sources that serve the file they enforce: the
	// file and inline sources, and a Store with KeepBody. Nil otherwise,
	// and on the versions of Earlier.
	Body []byte
	// Truncated reports that the body was longer than the size limit and
	// its end was not read (RFC 9309 §2.5); Robots.Diagnostics says where.
	Truncated bool

	// FetchedAt is when the access that produced the content in force
	// ended: for a kept copy, the last successful access (see CheckedAt).
	FetchedAt time.Time
	// ChangedAt is when this content came into force, replacing the
	// newest of Earlier.
	ChangedAt time.Time
	// CheckedAt is when the latest access ended, successful or not.
	CheckedAt time.Time
	// RefreshAt is when the source will fetch again, on the first request
	// after it; zero for sources that do not refresh by time.
	RefreshAt time.Time

	// Err says why the latest access did not yield a robots.txt, or is
	// empty when it did.
	Err string
	// Failures counts the consecutive accesses that found the file
	// unreachable; 0 after a successful one.
	Failures int
	// FailingSince is when the first of those failures happened; zero when
	// Failures is 0.
	FailingSince time.Time

	// Earlier are the versions in force before this one that were
	// replaced less than GraceWindow ago, newest first, each without
	// Earlier of its own: a crawler may still use any of them (RFC 9309
	// §2.4 lets it cache robots.txt for a day). At most MaxVersions-1 are
	// kept; a site that publishes more versions in a day loses the oldest
	// first, and a crawler that was served one of those is given the
	// benefit of the doubt (see package enforce); a Store that holds a
	// site's versions within its share of MaxMemory drops the oldest
	// first too. Each holds what compliance reads alone: its Robots
	// decides allow and disallow as the file did, and finds no usage
	// preference, record or diagnostic (rules.Robots.DecisionsOnly).
	Earlier []*Snapshot
	// ReplacedAt, on a snapshot in Earlier, is when it stopped being in
	// force; zero on the snapshot in force.
	ReplacedAt time.Time

	// sum is the full digest behind Hash, so that versions never compare
	// equal by a collision of the short form.
	sum [sha256.Size]byte
	// groups indexes Robots for choosing groups, built with it.
	groups *GroupIndex
	// own, on a snapshot a Store published with the fleet's versions
	// among Earlier (see SetFleet), is the snapshot of its own that it
	// extends; nil otherwise.
	own *Snapshot
	// held is what it holds of its own, Earlier aside (see weigh).
	held int64
	// lean marks an earlier version, which keeps what compliance reads
	// alone (see forCompliance).
	lean bool
}

// MaxVersions bounds the versions of one site a Snapshot knows: the one
// in force and Earlier. Sites publish a few versions a day at most; a
// bound keeps a site that publishes one a minute from growing memory.
const MaxVersions = 16

// VersionsAt returns the versions of the site in force at some moment of
// the GraceWindow before t: s and those of Earlier replaced within it,
// newest first, each once (see sameVersion): a version that was in force
// twice is one version, and its newest place stands.
func (s *Snapshot) VersionsAt(t time.Time) []*Snapshot {
	return s.AppendVersionsAt(make([]*Snapshot, 0, 1+len(s.Earlier)), t)
}

// AppendVersionsAt is VersionsAt appending to dst, for a caller that
// keeps the room: a record's evidence, on every denial.
func (s *Snapshot) AppendVersionsAt(dst []*Snapshot, t time.Time) []*Snapshot {
	start := len(dst)
	dst = append(dst, s)
	for _, e := range s.Earlier {
		if t.Sub(e.ReplacedAt) < GraceWindow && !slices.ContainsFunc(dst[start:], e.sameVersion) {
			dst = append(dst, e)
		}
	}
	return dst
}

// Version returns the version named hash among those in force within the
// GraceWindow before t (see VersionsAt), or nil.
func (s *Snapshot) Version(hash string, t time.Time) *Snapshot {
	if s.VersionName() == hash {
		return s
	}
	for _, e := range s.Earlier {
		if t.Sub(e.ReplacedAt) < GraceWindow && e.VersionName() == hash {
			return e
		}
	}
	return nil
}

// NewVersion returns the snapshot in force once body, read from source at
// at, follows prev (nil for none), parsed with the default size limit:
// prev, when its content differs, becomes an earlier version, as when a
// fetch finds that the file changed. It is for callers that learn of a
// version otherwise than by fetching it.
func NewVersion(prev *Snapshot, source string, body []byte, at time.Time) *Snapshot {
	s := &Snapshot{Source: source, HTTPStatus: http.StatusOK, FetchedAt: at, CheckedAt: at}
	s.setFile(prev, body, false, rules.DefaultMaxSize)
	return s.follow(prev, at)
}

// NewUnavailable returns the snapshot in force once source answered a
// fetch at at with status, a 4xx other than 429 (no file: everything
// allowed, RFC 9309 §2.3.1.3), following prev (nil for none) as NewVersion
// does.
func NewUnavailable(prev *Snapshot, source string, status int, at time.Time) *Snapshot {
	s := &Snapshot{Access: AccessUnavailable, Source: source, HTTPStatus: status, FetchedAt: at, CheckedAt: at}
	return s.follow(prev, at)
}

// Groups returns the index of the groups of Robots, nil when there is no
// file.
func (s *Snapshot) Groups() *GroupIndex { return s.groups }

// GoogleAllows reports whether Google's reading of group g of this
// version allows target, the path and query as sent (see google.go).
func (s *Snapshot) GoogleAllows(g *rules.Group, target string) bool {
	return googleAllows(s.groups, g, target)
}

// VersionUnavailable names the version of no file: what a client is
// served with a 4xx answer other than 429, under which everything is
// allowed (RFC 9309 §2.3.1.3).
const VersionUnavailable = "unavailable"

// VersionName names the version s holds in records: its Hash for a file;
// "unavailable" when there is none (no rules apply) and "unreachable" or
// "disallow_all" when, for want of a file, everything is disallowed.
func (s *Snapshot) VersionName() string {
	switch {
	case s.Robots != nil:
		return s.Hash
	case !s.DisallowAll:
		return VersionUnavailable
	case s.Access == AccessUnreachable:
		return "unreachable"
	}
	return "disallow_all"
}

// sameContent reports whether s and o decide alike: same result, same
// fallback and, for a file, the same body.
func (s *Snapshot) sameContent(o *Snapshot) bool {
	return s.Access == o.Access && s.DisallowAll == o.DisallowAll && s.sum == o.sum
}

// sameVersion reports whether s and o are one version as records name it
// (see VersionName): the same file, compared by its full digest, or no
// file and the same fallback.
func (s *Snapshot) sameVersion(o *Snapshot) bool {
	switch {
	case (s.Robots == nil) != (o.Robots == nil):
		return false
	case s.Robots != nil:
		return s.sum == o.sum
	}
	return s.VersionName() == o.VersionName()
}

// setBody records the digest of body in s.
func (s *Snapshot) setBody(body []byte) {
	s.sum = sha256.Sum256(body)
	s.Hash = hex.EncodeToString(s.sum[:])[:hashLen]
}

// follow places s, a snapshot not yet published, after prev (nil for none)
// at time now. When the content is unchanged s carries on prev's ChangedAt
// and Earlier; otherwise prev joins s's Earlier, newest first. Earlier
// keeps each version once and never s's own: a site that goes v1, v2, v1
// has v1 in force and v2 earlier, whose grace then ends 24 hours after v1
// came back, not after v1 first went (see keepEarlier).
func (s *Snapshot) follow(prev *Snapshot, now time.Time) *Snapshot {
	var earlier []*Snapshot
	switch {
	case prev == nil:
		s.ChangedAt = now
	case s.sameContent(prev):
		s.ChangedAt = prev.ChangedAt
		earlier = prev.Earlier
	default:
		old := *prev.forCompliance()
		old.ReplacedAt = now
		s.ChangedAt = now
		earlier = append([]*Snapshot{&old}, prev.Earlier...)
	}
	s.Earlier = s.keepEarlier(earlier, now)
	s.weigh()
	return s
}

// keepEarlier returns the versions of candidates, newest first, that s,
// in force at now, keeps in Earlier: those replaced less than GraceWindow
// ago, each version once (its newest place), none the same version as s,
// and at most MaxVersions-1 of them, the oldest dropped first, each as
// compliance reads it (see forCompliance). This keeps memory bounded, and
// the records' judged versions free of repeats.
func (s *Snapshot) keepEarlier(candidates []*Snapshot, now time.Time) []*Snapshot {
	var kept []*Snapshot
	for _, e := range candidates {
		if len(kept) == MaxVersions-1 {
			break
		}
		if now.Sub(e.ReplacedAt) >= GraceWindow || s.sameVersion(e) || slices.ContainsFunc(kept, e.sameVersion) {
			continue
		}
		kept = append(kept, e.forCompliance())
	}
	return kept
}

// setFile makes s an available snapshot of body, parsed with the parse
// limit maxSize. The parse of prev is reused when the body is the same.
func (s *Snapshot) setFile(prev *Snapshot, body []byte, truncated bool, maxSize int) {
	s.Access = AccessAvailable
	s.setBody(body)
	if prev != nil && prev.Access == AccessAvailable && prev.sum == s.sum {
		s.Robots, s.groups = prev.Robots, prev.groups
	} else {
		s.Robots = parseRobotsBody(body, truncated, maxSize)
		s.groups = NewGroupIndex(s.Robots)
	}
	s.Truncated = truncated || s.Robots.Truncated()
}

// parseRobotsBody parses a body read with a limit of one octet past maxSize, so
// that the parser sees a body that goes on and drops the line the limit cuts
// (rules.Options). A body marked truncated that is no longer than maxSize
// was cut short by its reader: its last line may be cut too, and a cut rule
// can mean the opposite of the whole ("Disallow: /p" for "Disallow:
// /private"), so that line is dropped here.
func parseRobotsBody(body []byte, truncated bool, maxSize int) *rules.Robots {
	if truncated && len(body) <= maxSize {
		body = body[:bytes.LastIndexAny(body, "\r\n")+1]
	}
	return rules.ParseWith(body, rules.Options{MaxSize: maxSize})
}
