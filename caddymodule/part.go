package caddymodule

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
)

// Each instance writes its own part of the state, and only its own, under
// robots_enforce/fleet/<state>/<part>/ in Caddy's storage: the state is
// the handler's source settings (see stateKey), the part names the
// instance. A part's name is the host name and Caddy's instance id (the
// file instance.uuid in the data directory): the same across restarts of
// one instance, so that it restores its own state, and different for
// replicas that mount one data directory (a shared volume gives them one
// instance id), since their host names differ.
//
// Who holds a part is its lease (lease.json beside the document): a nonce
// of the holder's, its host and process id, when it started and when it
// last renewed the lease, which it does at every write. An instance that
// starts takes the first of its part names (the name, then the name with
// _2 … _8) that no live process holds: one whose lease is given back, or
// stale, or held on this host by a process that no longer runs (a crash,
// and its restart) is taken over with its state. One held by a live
// process is another's: the two share one identity, which is logged as an
// error with what to do, and the instance takes another name. Before each
// write it reads its lease back: when another process has taken its part,
// it logs so and moves to a part of its own, never writing over another's.

// Bounds and settings of parts, each with its reason.
const (
	// maxPartNames is how many names an instance tries before taking one
	// of its own making: as many processes sharing one identity as anyone
	// runs by mistake.
	maxPartNames = 8
	// maxHostName bounds the host name in a part's name: a DNS label.
	maxHostName = 63
	// leaseSlack is added to three renewal periods before a lease is
	// stale: a holder whose writes are slow is not taken over for it.
	leaseSlack = 10 * time.Second
	// maxLease bounds a lease read back: a few hundred octets.
	maxLease = 4 << 10
	// claimTimeout bounds the claim of a part at start.
	claimTimeout = 10 * time.Second
)

// Keys of the state in Caddy's storage.
const (
	fleetPrefix  = "robots_enforce/fleet"
	bodiesPrefix = "robots_enforce/bodies"
)

// partPrefix returns the prefix of the keys of a part of a state.
func partPrefix(state, part string) string { return path.Join(fleetPrefix, state, part) }
func partDocKey(state, part string) string { return partPrefix(state, part) + "/state.json" }
func leaseKey(state, part string) string   { return partPrefix(state, part) + "/lease.json" }
func bodyKey(sum string) string            { return bodiesPrefix + "/" + sum }

// validPartName reports whether name, read from a listing of the
// storage, can name a state or a part: letters, digits, '.', '-' and '_',
// not "." or "..", at most 255 octets. Any other is left alone: a key
// built from it could name another place.
func validPartName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// A lease says which process holds a part.
type lease struct {
	Nonce   string    `json:"nonce"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Renewed time.Time `json:"renewed"`
	// Period is how often the holder renews it, in milliseconds.
	Period int64 `json:"period_ms"`
	// Written is when the holder last wrote the part's document: a reader
	// whose copy is as new reads it no more.
	Written time.Time `json:"written,omitzero"`
	// Released says the holder gave the part back when it stopped.
	Released bool `json:"released,omitempty"`
}

// life returns how long after its renewal the lease is held.
func (l *lease) life() time.Duration {
	return 3*time.Duration(l.Period)*time.Millisecond + leaseSlack
}

// liveElsewhere reports whether l is held, at now, by a live process other
// than self: not given back, renewed within its life, and not held on
// self's host by self's process or by a process that no longer runs there.
func (l *lease) liveElsewhere(self *lease, now time.Time) bool {
	switch {
	case l.Nonce == self.Nonce, l.Released, now.Sub(l.Renewed) > l.life():
		return false
	case l.Host == self.Host && (l.PID == self.PID || !pidAlive(l.PID)):
		// This process held it in a state gone since, or its
		// predecessor did and ended (a crash, then a restart).
		return false
	}
	return true
}

// newLease returns this process's lease, renewed every period.
func newLease(period time.Duration, now time.Time) lease {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	return lease{Nonce: hex.EncodeToString(nonce[:]), Host: hostName(), PID: os.Getpid(), Started: now,
		Period: period.Milliseconds()}
}

// hostName returns this host's name as a part's name holds it: letters,
// digits, '.' and '-', at most maxHostName octets.
func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "host"
	}
	b := []byte(h)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b[:min(len(b), maxHostName)])
}

// partBaseName returns the first part name of the instance of Caddy
// instance id id on this host: the host name and the id ("default" when
// there is none).
func partBaseName(id string) string {
	if id == "" {
		id = "default"
	}
	return hostName() + "_" + id
}

// partNames returns the names an instance with base tries, in order.
func partNames(base string) []string {
	names := []string{base}
	for i := 2; i <= maxPartNames; i++ {
		names = append(names, fmt.Sprintf("%s_%d", base, i))
	}
	return names
}

// loadLease reads the lease of a part; fs.ErrNotExist when there is none.
func loadLease(ctx context.Context, storage certmagic.Storage, state, part string) (*lease, error) {
	b, err := storage.Load(ctx, leaseKey(state, part))
	if err != nil {
		return nil, err
	}
	if len(b) > maxLease {
		return nil, fmt.Errorf("lease of %d octets, more than %d", len(b), maxLease)
	}
	var l lease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("not a lease: %w", err)
	}
	return &l, nil
}

// storeLease writes l as the lease of a part.
func storeLease(ctx context.Context, storage certmagic.Storage, state, part string, l *lease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return storage.Store(ctx, leaseKey(state, part), b)
}

// A claim is the outcome of taking a part.
type claim struct {
	part string
	// held are the leases of live processes on the names tried before.
	held []*lease
	// err says why the names could not be read: the part is taken
	// without knowing who held it, and the first write checks.
	err error
}

// claimPart takes the first of the part names of base that no live
// process holds, at now, for self, writing self's lease on it; past
// maxPartNames, one of its own making. Names it skips, and who holds
// them, are in the claim. A part whose lease is not live is taken over
// with its state: the caller restores it.
func claimPart(ctx context.Context, storage certmagic.Storage, state, base string, self *lease, skip map[string]bool, now time.Time) claim {
	var c claim
	for _, name := range partNames(base) {
		if skip[name] {
			continue
		}
		l, err := loadLease(ctx, storage, state, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil && len(c.held) == 0:
			// Unreadable: taken, and the first write will tell.
			c.err = err
		case err != nil:
			continue
		case l.liveElsewhere(self, now):
			c.held = append(c.held, l)
			continue
		}
		c.part = name
		break
	}
	if c.part == "" {
		c.part = base + "_" + self.Nonce[:8]
	}
	self.Renewed = now
	if err := storeLease(ctx, storage, state, c.part, self); err != nil && c.err == nil {
		c.err = err
	}
	return c
}

// logShared logs, at error level, that live processes hold the part
// names this instance shares with them, and what to do.
func logShared(log *zap.Logger, state string, held []*lease, self *lease, part string) {
	for _, l := range held {
		log.Error("another live caddy holds this instance's robots_enforce state part: two instances share one identity",
			zap.String("state", state), zap.String("part_taken", part),
			zap.String("other_host", l.Host), zap.Int("other_pid", l.PID), zap.Time("other_started", l.Started),
			zap.Time("other_renewed", l.Renewed), zap.String("host", self.Host), zap.Int("pid", self.PID),
			zap.String("fix", "give each instance a host name of its own, or a data directory of its own "+
				"(its instance.uuid names it); this instance writes the part "+part+
				" meanwhile, and neither restores nor writes the other's"))
	}
}
