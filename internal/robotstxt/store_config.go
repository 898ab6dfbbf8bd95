package robotstxt

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// Limits and defaults of a Store; each says why it has its value.
const (
	// DefaultFetchTimeout bounds one access, redirects included: long
	// enough for a slow origin, short enough that a request waiting on a
	// host's first fetch is not held for long.
	DefaultFetchTimeout = 10 * time.Second
	// DefaultMaxHosts bounds the hosts a Store tracks, so that requests
	// with random Host headers cannot grow its memory without limit.
	DefaultMaxHosts = 1024
	// DefaultMaxMemory bounds the octets the sites a Store tracks hold
	// (see StoreConfig.MaxMemory). It holds DefaultMaxHosts sites of
	// 256 KiB each: every file of testdata/robots but the 500 KiB
	// synthetic one holds less than 310 KB with its index, the median
	// 14 KB, so for sites of ordinary size DefaultMaxHosts binds first,
	// while 1,024 sites answering files at the size limit, which hold
	// 1.7 MB each, would take 1.7 GB. Go's collector lets the heap grow
	// to twice what it keeps live (GOGC=100), so this costs a process up
	// to about 550 MB of resident memory (docs/internals.md).
	DefaultMaxMemory = 256 << 20
	// MinMaxMemory is the least MaxMemory: a site holds at most a quarter
	// of it (see StoreConfig.MaxMemory), and a quarter of this holds any
	// file read to 500 KiB, the least RFC 9309 §2.5 has crawlers read, so
	// that no file is read less far: the files made to hold the most hold
	// about 10 times their size (TestMinMaxMemory).
	MinMaxMemory = 64 << 20
	// MaxMaxMemory bounds MaxMemory: the table weighs sites in KiB in 32
	// bits, and a terabyte is more than one process holds.
	MaxMaxMemory = 1 << 40
	// maxHostLen bounds a host name (253 octets for DNS, with room for a
	// port or an IPv6 literal): longer Host headers are not tracked.
	MaxHostLen = 300
	// DefaultNewHosts and DefaultNewHostsPer are the budget of first
	// fetches: at most DefaultNewHosts hosts not seen before start a fetch
	// in any DefaultNewHostsPer, on average, with bursts of as many. A
	// server's real hosts arrive a few at a time; a client inventing Host
	// headers must not turn each into a fetch through the site's route.
	DefaultNewHosts    = 100
	DefaultNewHostsPer = 10 * time.Second
	// waitSlack lets a first fetch, bounded by the same timeout as its
	// waiters, report its own outcome before they give up on it.
	waitSlack = 100 * time.Millisecond
)

// StoreConfig configures a Store. Every field but Fetcher has a default,
// selected by its zero value.
type StoreConfig struct {
	// Fetcher sends the robots.txt requests. Required.
	Fetcher Fetcher
	// Now returns the current time; nil means time.Now. Fetch timeouts
	// run on real timers whatever it returns.
	Now func() time.Time
	// Scheme is the scheme of the robots.txt URLs: "https" (the default)
	// or "http".
	Scheme string
	// URL, when set, is where every host's robots.txt is fetched from,
	// instead of Scheme://host/robots.txt: one file shared by the sites
	// behind a handler. Callers then usually ask for one host only.
	URL string
	// MaxSize is how many octets of a robots.txt are parsed; the rest is
	// dropped and reported. The default is rules.DefaultMaxSize, 500 KiB;
	// less is refused, since RFC 9309 §2.5 has crawlers parse at least as
	// much, and the enforcer must not judge them by less.
	MaxSize int
	// FetchTimeout bounds one access, redirects included; the default is
	// DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Refresh is how long a fetched robots.txt is used before it is
	// fetched again; the response's Cache-Control max-age or Expires can
	// shorten it. The default and the maximum is MaxRefresh, 24 hours.
	Refresh time.Duration
	// MinRefresh is the shortest time between fetches for one host; the
	// default is DefaultMinRefresh. It may not exceed Refresh.
	MinRefresh time.Duration
	// MaxHosts bounds the hosts tracked; the default is DefaultMaxHosts.
	// Past it a host is forgotten: one not asked for again since its
	// first fetch, or else the one least likely to be asked for again, by
	// how often and how recently each was (see store_table.go). A host
	// whose fetch is in flight is never forgotten; such hosts are
	// bounded by MaxHosts too, which makes the most tracked twice it.
	MaxHosts int
	// MaxMemory bounds the octets the sites tracked hold, beside
	// MaxHosts; the default is DefaultMaxMemory, the least MinMaxMemory.
	// A site holds its snapshot in force and its earlier versions (see
	// Snapshot.Earlier), counted as the heap holds them
	// (rules.Robots.HeldSize), and a small overhead. Past the bound, a
	// site is forgotten as past MaxHosts, by the same policy: the sites in
	// regular use last. A site that alone holds more than a quarter of
	// MaxMemory (the least every new site has room for) keeps fewer
	// earlier versions, the oldest dropped first, and when the file in
	// force alone holds more, it is read only as far as fits, as a file
	// past MaxSize is (RFC 9309 §2.5): the rest is not read and
	// Snapshot.Truncated says so. A body kept with KeepBody counts, but
	// is never cut. Sites whose fetch is in flight count at their weight
	// before it, beyond the bound (see MaxHosts).
	MaxMemory int64
	// NewHosts and NewHostsPer are the budget of first fetches: hosts not
	// tracked yet start a fetch at most NewHosts times in any NewHostsPer,
	// on average (a token bucket holding NewHosts). A host over budget is
	// not tracked, and its snapshot refuses it (RefusalHostBudget): complete
	// disallow, whatever Unreachable says, since nothing is known of it.
	// The defaults are DefaultNewHosts and DefaultNewHostsPer.
	NewHosts    int
	NewHostsPer time.Duration
	// Unreachable applies while a host's robots.txt is unreachable and no
	// earlier answer was ever fetched: UnreachableDisallow (the default,
	// as RFC 9309 §2.3.1.4 requires of crawlers) or UnreachableAllow.
	Unreachable UnreachablePolicy
	// LongUnreachable applies once a host's robots.txt has been unreachable
	// for UnreachableExpiry: UnreachableAllow (the default), UnreachableKeep
	// or UnreachableDisallow. RFC 9309 §2.3.1.4 then lets a crawler either
	// treat the file as unavailable or keep its cached copy; the default
	// allows, so that no crawler is blocked for doing what the RFC permits.
	LongUnreachable UnreachablePolicy
	// OnChange, when set, is told of each snapshot that says something
	// new about a host: its first, a change of access or of file, a new
	// error and the end of one (a failure repeating the last one is not
	// news). old is nil for the first. It is called from the goroutine that fetched, or
	// that offered (see Offer), after the snapshot is in force, and must
	// not block.
	OnChange func(host string, old, new *Snapshot)
	// KeepBody keeps the body of the file in force in its snapshot
	// (Snapshot.Body), for a caller that serves the file it enforces. It
	// costs up to the parse limit per host: meant for a Store with a URL,
	// which tracks one.
	KeepBody bool
	// OnVersion, when set, is given the body of each new version of a
	// site's robots.txt the store fetches (read up to the parse limit plus
	// one octet), named by its hex SHA-256: a caller that saves the
	// store's state (Save) keeps the bodies it names, to give them back to
	// Restore. It is called from the goroutine that fetched, before the
	// version is in force, and must not block for long.
	OnVersion func(sum string, body []byte)
	// OnSite, when set, is told what the store's bounds do to sites (see
	// SiteEvent), with the site's key, or for SiteCut its robots.txt URL.
	// It is called with the store's locks held, and must not block.
	OnSite func(ev SiteEvent, site string)
}

// checkMaxSize returns the parse limit for a configured MaxSize.
func checkMaxSize(n int) (int, error) {
	switch {
	case n == 0:
		return rules.DefaultMaxSize, nil
	case n < rules.DefaultMaxSize:
		return 0, fmt.Errorf("max size %d is less than %d octets, the 500 KiB RFC 9309 §2.5 requires", n, rules.DefaultMaxSize)
	}
	return n, nil
}

// withDefaults returns cfg with its defaults filled in, or the reasons it is
// invalid.
func (cfg StoreConfig) withDefaults() (StoreConfig, error) {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Fetcher == nil {
		fail("a fetcher is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	switch cfg.Scheme {
	case "":
		cfg.Scheme = "https"
	case "http", "https":
	default:
		fail("scheme %q: want http or https", cfg.Scheme)
	}
	var err error
	if cfg.MaxSize, err = checkMaxSize(cfg.MaxSize); err != nil {
		errs = append(errs, err)
	}
	cfg.FetchTimeout = cmp.Or(cfg.FetchTimeout, DefaultFetchTimeout)
	cfg.Refresh = cmp.Or(cfg.Refresh, MaxRefresh)
	cfg.MinRefresh = cmp.Or(cfg.MinRefresh, DefaultMinRefresh)
	cfg.NewHosts = cmp.Or(cfg.NewHosts, DefaultNewHosts)
	cfg.NewHostsPer = cmp.Or(cfg.NewHostsPer, DefaultNewHostsPer)
	if cfg.NewHosts < 0 || cfg.NewHostsPer < 0 {
		fail("new hosts %d per %v: want a positive count and duration", cfg.NewHosts, cfg.NewHostsPer)
	}
	if cfg.FetchTimeout < 0 {
		fail("fetch timeout %v is negative", cfg.FetchTimeout)
	}
	if cfg.Refresh < 0 || cfg.Refresh > MaxRefresh {
		fail("refresh %v is not between 0 and 24h: RFC 9309 §2.4 has crawlers fetch robots.txt again within 24 hours", cfg.Refresh)
	}
	if cfg.MinRefresh <= 0 || cfg.MinRefresh > cfg.Refresh {
		fail("min refresh %v must be positive and at most refresh %v", cfg.MinRefresh, cfg.Refresh)
	}
	if cfg.MaxHosts == 0 {
		cfg.MaxHosts = DefaultMaxHosts
	} else if cfg.MaxHosts < 0 {
		fail("max hosts %d is negative", cfg.MaxHosts)
	}
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = DefaultMaxMemory
	} else if cfg.MaxMemory < MinMaxMemory || cfg.MaxMemory > MaxMaxMemory {
		fail("max memory %d: want between %d (%d MiB) and %d octets", cfg.MaxMemory, MinMaxMemory, MinMaxMemory>>20, int64(MaxMaxMemory))
	}
	switch cfg.Unreachable {
	case UnreachableDefault:
		cfg.Unreachable = UnreachableDisallow
	case UnreachableDisallow, UnreachableAllow:
	default:
		fail("unreachable policy %v: want disallow or allow", cfg.Unreachable)
	}
	switch cfg.LongUnreachable {
	case UnreachableDefault:
		cfg.LongUnreachable = UnreachableAllow
	case UnreachableDisallow, UnreachableAllow, UnreachableKeep:
	default:
		fail("long unreachable policy %v: want allow, keep or disallow", cfg.LongUnreachable)
	}
	if err := errors.Join(errs...); err != nil {
		return cfg, fmt.Errorf("robots.txt store config: %w", err)
	}
	return cfg, nil
}
