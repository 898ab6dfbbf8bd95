package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Reverse DNS bounds, each with its reason.
const (
	// lookupTimeout bounds one address's lookups (PTR and forward): a
	// resolver that has not answered by then will not. Claims wait for it
	// as Pending only for PendingBound; the answer still counts when it
	// comes.
	lookupTimeout = 5 * time.Second
	// dnsQueueSize bounds lookups waiting for a worker; past it, claims are
	// refused as rate limited rather than queued without end.
	dnsQueueSize = 256
	// coarseTick is how often the coarse clock is advanced: an answer is
	// served at most this long past its TTL, and reading an atomic instead
	// of the clock saves a third of a cached lookup's time.
	coarseTick = 100 * time.Millisecond
	// maxStaleFactor: a done entry is served past its TTL while it is
	// looked up again, up to this many TTLs, then it counts as missing.
	maxStaleFactor = 2
)

// checkDNS answers a claim of e from the cache, starting a lookup when the
// cache has no current answer. Only the warm path (a cached, current
// answer) matters for speed; it takes a read lock and allocates nothing.
//
// A claim is Pending only while the first lookup of its address is under
// way, for at most PendingBound: that is an answer on its way. A lookup
// that failed, that the rate limit refused, that runs past the bound, or
// that repeats one whose answer ran out, leaves the claim Unconfirmed, so
// that a forger whose reverse zone never answers, or a flood of claims
// from new addresses, gets no crawler's rights meanwhile.
func (v *Verifier) checkDNS(e *tokenEntry, addr netip.Addr) Outcome {
	ent := v.dns.get(addr)
	if ent != nil && ent.state == dnsDone {
		// The fast path: a current answer by the coarse clock (kept only
		// with the real clock; 0 otherwise) needs no clock read.
		if c := v.coarse.Load(); c != 0 && c < ent.expires {
			return ent.outcome(e)
		}
	}
	now := v.cfg.Now()
	nowNs := now.UnixNano()
	if ent != nil {
		switch ent.state {
		case dnsPending:
			if ent.retry || nowNs-ent.started > int64(v.cfg.PendingBound) {
				return Unconfirmed
			}
			return Pending
		case dnsFailed:
			if nowNs < ent.expires {
				return Unconfirmed
			}
		case dnsDone:
			if nowNs < ent.expires {
				return ent.outcome(e)
			}
			ttl := v.cfg.DNSNegativeTTL
			if len(ent.names) > 0 {
				ttl = v.cfg.DNSPositiveTTL
			}
			if nowNs < ent.expires+int64(maxStaleFactor-1)*int64(ttl) {
				// Serve the stale answer while one lookup refreshes it.
				if ent.refreshing.CompareAndSwap(false, true) {
					if !v.startLookup(addr, now, ent) {
						ent.refreshing.Store(false)
					}
				}
				return ent.outcome(e)
			}
		}
	}
	switch v.tryLookup(addr, now, nil) {
	case lookupLimited:
		return Unconfirmed
	case lookupUnder:
		// Another claim's lookup of the address is under way: its entry
		// says how long, at the next claim.
		return Pending
	}
	if ent != nil {
		return Unconfirmed // a repeat lookup: its answer was due before
	}
	return Pending
}

// outcome judges e's claim by the entry's confirmed names.
func (ent *dnsEntry) outcome(e *tokenEntry) Outcome {
	for _, n := range ent.names {
		for _, s := range e.suffixes {
			if matchSuffix(n, s) {
				return Verified
			}
		}
	}
	return Forged
}

// startLookup queues a lookup of addr when the rate limit allows it. With
// stale set, the stale entry stays in the cache until the answer replaces
// it; otherwise a pending entry marks the lookup, so that concurrent claims
// from one address cause one lookup.
func (v *Verifier) startLookup(addr netip.Addr, now time.Time, stale *dnsEntry) bool {
	return v.tryLookup(addr, now, stale) == lookupStarted
}

// What tryLookup did.
type lookupStart uint8

const (
	lookupStarted lookupStart = iota // queued
	lookupUnder                      // another lookup of the address is under way, or the verifier is closed
	lookupLimited                    // refused by the rate limit or a full queue
)

// tryLookup is startLookup, telling why it started none.
func (v *Verifier) tryLookup(addr netip.Addr, now time.Time, stale *dnsEntry) lookupStart {
	if v.closed.Load() {
		return lookupUnder
	}
	nowNs := now.UnixNano()
	marker := stale
	if marker == nil {
		marker = &dnsEntry{state: dnsPending, expires: nowNs + int64(lookupTimeout), started: nowNs}
		if !v.dns.insertIfAbsent(addr, marker, nowNs) {
			return lookupUnder
		}
	}
	if !v.dnsLimit.allow(now) {
		if stale == nil {
			v.dns.remove(addr, marker)
		}
		v.emit(Event{Kind: EventDNSLookup, Result: "rate_limited"})
		return lookupLimited
	}
	select {
	case v.dnsQueue <- dnsJob{addr: addr, marker: marker}:
		return lookupStarted
	default:
		if stale == nil {
			v.dns.remove(addr, marker)
		}
		v.emit(Event{Kind: EventDNSLookup, Result: "rate_limited"})
		return lookupLimited
	}
}

// dnsJob is one queued lookup; marker is the cache entry it replaces.
type dnsJob struct {
	addr   netip.Addr
	marker *dnsEntry
}

// dnsWorker runs queued lookups until ctx is done.
func (v *Verifier) dnsWorker(ctx context.Context) {
	defer v.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-v.dnsQueue:
			v.runLookup(ctx, j)
		}
	}
}

// runLookup does one job, recovering its own panic (a resolver's bug must
// not end the process) and recording the answer.
func (v *Verifier) runLookup(ctx context.Context, j dnsJob) {
	var ent *dnsEntry
	defer func() {
		if p := recover(); p != nil {
			v.reportErr(fmt.Errorf("reverse dns lookup of %s: panic: %v", j.addr, p))
			ent = &dnsEntry{state: dnsFailed, expires: v.cfg.Now().Add(errorTTL).UnixNano()}
		}
		if ent != nil {
			v.dns.replace(j.addr, j.marker, ent)
			v.broadcast()
		}
	}()
	names, err := v.lookup(ctx, j.addr)
	now := v.cfg.Now()
	switch {
	case ctx.Err() != nil:
		v.dns.remove(j.addr, j.marker)
		return
	case err != nil:
		v.emit(Event{Kind: EventDNSLookup, Result: "error", Err: err})
		ent = &dnsEntry{state: dnsFailed, expires: now.Add(errorTTL).UnixNano()}
	case len(names) > 0:
		v.emit(Event{Kind: EventDNSLookup, Result: "confirmed"})
		ent = &dnsEntry{state: dnsDone, names: names, expires: now.Add(v.cfg.DNSPositiveTTL).UnixNano()}
	default:
		v.emit(Event{Kind: EventDNSLookup, Result: "refuted"})
		ent = &dnsEntry{state: dnsDone, expires: now.Add(v.cfg.DNSNegativeTTL).UnixNano()}
	}
}

// lookup does forward-confirmed reverse DNS for addr: the PTR names that
// lie under some configured suffix and whose A/AAAA records contain addr.
// A PTR answer of "no such name" is an answer (no names); other failures
// are errors, and the claim stays Pending.
func (v *Verifier) lookup(ctx context.Context, addr netip.Addr) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	ptrs, err := v.cfg.Resolver.LookupAddr(ctx, addr.String())
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("ptr %s: %w", addr, err)
	}
	var confirmed []string
	var lastErr error
	for i, name := range ptrs {
		if i == maxPTRNames {
			break
		}
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		if !v.anySuffix(name) {
			continue // cannot prove anything: spare the query
		}
		ips, err := v.cfg.Resolver.LookupIPAddr(ctx, name)
		if err != nil {
			var de *net.DNSError
			if !errors.As(err, &de) || !de.IsNotFound {
				lastErr = fmt.Errorf("forward %s: %w", name, err)
			}
			continue
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip.IP); ok && unmap(a) == addr {
				confirmed = append(confirmed, name)
				break
			}
		}
	}
	if len(confirmed) == 0 && lastErr != nil {
		return nil, lastErr
	}
	return confirmed, nil
}

// anySuffix reports whether name lies under a suffix of any token.
func (v *Verifier) anySuffix(name string) bool {
	for _, s := range v.allSuffixes {
		if matchSuffix(name, s) {
			return true
		}
	}
	return false
}

// coarseClock keeps v.coarse within coarseTick of the real clock until ctx
// is done, then zeroes it so that the fast path stops trusting it.
func (v *Verifier) coarseClock(ctx context.Context) {
	defer v.wg.Done()
	defer v.coarse.Store(0)
	t := time.NewTicker(coarseTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			v.coarse.Store(now.UnixNano())
		}
	}
}

// unixNow is the time in Unix seconds, from the coarse clock when there is
// one (no clock read), else from the configured clock.
func (v *Verifier) unixNow() int64 {
	if c := v.coarse.Load(); c != 0 {
		return c / int64(time.Second)
	}
	return v.cfg.Now().Unix()
}
