package caddymodule

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// Distributed makes the instances that share Caddy's storage (a volume
// mounted by each, or a storage module such as Redis) judge as one fleet,
// as caddy-ratelimit's distributed mode shares rate limits: each instance
// writes its own part of the state to the storage at WriteInterval, when
// it changed, and reads the others' parts at ReadInterval, off the
// request path. From the others' parts every instance knows each version
// of a site's robots.txt any of them had in force within the last 24
// hours, which crawler was served which version, and which crawlers are
// escalated (violators): a crawler that read robots.txt through one
// instance is judged by what it read on every other, and a violator
// escalated on one is escalated on all. A request judged within
// ReadInterval of another instance's news is judged without it (see
// docs/fleet.md). A storage that is slow or failing never slows or fails
// a request: the instance judges by what it has, and its metrics and logs
// say how stale that is.
//
// Only instances whose handlers have the same source settings (source,
// refresh, max_size, fetch_timeout, max_hosts, new_hosts, unreachable)
// share a fleet: configure the fleet alike.
type Distributed struct {
	// ReadInterval is how often the others' parts are read: an escalation
	// begun on another instance is in force here within it. Default 5s,
	// between 100ms and 10m.
	ReadInterval caddy.Duration `json:"read_interval,omitempty"`
	// WriteInterval is how often this instance's part is written when it
	// changed; an escalation is written at once. Default 5s, between
	// 100ms and 10m.
	WriteInterval caddy.Duration `json:"write_interval,omitempty"`
}

// Bounds of the fleet's intervals, each with its reason.
const (
	// defaultFleetInterval is caddy-ratelimit's: a fleet that agrees
	// within seconds, for a read of a few small documents per instance.
	defaultFleetInterval = 5 * time.Second
	// minFleetInterval bounds both intervals from below: every interval
	// costs a read of each instance's lease, and a storage such as Redis
	// answers in about a millisecond.
	minFleetInterval = 100 * time.Millisecond
	// maxFleetInterval bounds them from above: past ten minutes, an
	// escalation would let a violator through the other instances for
	// longer than it takes to crawl a site.
	maxFleetInterval = 10 * time.Minute
)

// intervals returns the read and write intervals, defaults filled in.
func (d *Distributed) intervals() (read, write time.Duration) {
	read, write = time.Duration(d.ReadInterval), time.Duration(d.WriteInterval)
	if read == 0 {
		read = defaultFleetInterval
	}
	if write == 0 {
		write = defaultFleetInterval
	}
	return read, write
}

// check checks the intervals.
func (d *Distributed) check() error {
	if d == nil {
		return nil
	}
	for _, iv := range []struct {
		name string
		d    caddy.Duration
	}{{"read_interval", d.ReadInterval}, {"write_interval", d.WriteInterval}} {
		if v := time.Duration(iv.d); v != 0 && (v < minFleetInterval || v > maxFleetInterval) {
			return fmt.Errorf("distributed %s %v: want between %v and %v", iv.name, v, minFleetInterval, maxFleetInterval)
		}
	}
	return nil
}
