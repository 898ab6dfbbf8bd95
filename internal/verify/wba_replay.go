package verify

import (
	"container/heap"
	"crypto/sha256"
	"net/netip"
	"sync"
	"time"
)

// Replay of Web Bot Auth signatures. A signature that verifies proves
// that the agent signed the request it covers, not that whoever sends it
// is the agent: anyone who sees one (a proxy, a log, the wire) can send it
// again until it expires, and a signature covering only @authority
// verifies on any path of the site. RFC 9421 §7.2.2 leaves replay to the
// verifier, with the nonce parameter as its tool, and
// draft-ietf-webbotauth-httpsig-protocol-01 ("Freshness and Replay") asks
// a verifier that rejects duplicates to check and record atomically, to
// bound what it keeps and admits, and not to take a signature as proof
// that replay was ruled out when it could not record it.
//
// So each signature that verifies is remembered, under its nonce (with
// the agent and key, since a nonce is unique per signer) or, without one,
// under its signature bytes, with the client it first came from, until it
// is no longer valid. The same signature from the same client again (a
// retry, a new connection, an agent that reuses its signature) verifies;
// from another client it is Replayed. A client is its address, an IPv6
// address its /64 (one host's privacy addresses change within it).

// Bounds of the replay cache, each with its reason.
const (
	// defaultReplayCacheSize bounds the signatures remembered at once:
	// 65,536 entries, about 9 MiB at most (TestReplayCacheMemory), hold
	// an hour of fresh signatures at 18 a second, or a minute of them at
	// 1,000 a second, far more than the agents that visit one server
	// send. Only signatures that verify enter, so a forger cannot fill it.
	defaultReplayCacheSize = 1 << 16
	// maxSignatureAge bounds how long after its created a signature
	// verifies, whatever its expires: the draft recommends that expires
	// be no more than 24 hours after created, and asks verifiers not to
	// accept freshness windows their risk model does not permit. It is
	// also how long a signature is remembered at most, so that a replay
	// can never outlive the memory of the first use.
	maxSignatureAge = 24 * time.Hour
	// replayReportInterval spaces the reports that the cache is full.
	replayReportInterval = time.Minute
)

// replayKey names a signature: the first 16 octets of a SHA-256 over its
// nonce (with the agent and key) or over its signature bytes.
type replayKey [16]byte

// clientKey names a client: its address as 16 octets (IPv4 mapped), an
// IPv6 address masked to its /64; the zero value when it has none.
type clientKey [16]byte

// admission is what the replay cache makes of a verified signature.
type admission uint8

const (
	// admitFirst: first seen; remembered with this client.
	admitFirst admission = iota
	// admitSame: seen before, from this client.
	admitSame
	// admitReplay: seen before, from another client.
	admitReplay
	// admitFull: not seen before, and no room to remember it.
	admitFull
)

// replayKeyOf names the signature si, whose bytes are sig, by the agent
// at origin. The label is not part of it: RFC 9421 §7.2.5 lets an
// intermediary relabel a signature, and so can a replayer.
func replayKeyOf(origin string, si sigInput, sig []byte) replayKey {
	h := sha256.New()
	if si.nonce != "" {
		h.Write([]byte("nonce\x00" + origin + "\x00" + si.keyid + "\x00" + si.nonce))
	} else {
		h.Write([]byte("signature\x00"))
		h.Write(sig)
	}
	var k replayKey
	copy(k[:], h.Sum(nil))
	return k
}

// clientOf returns addr's clientKey.
func clientOf(addr netip.Addr) clientKey {
	if !addr.IsValid() {
		return clientKey{}
	}
	addr = unmap(addr)
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		addr = p.Addr()
	}
	return addr.As16()
}

// replayCache remembers the signatures that verified, each with the
// client it first came from, until it is no longer valid. It holds at
// most size entries; when full, a new signature is not remembered and
// admit says so (admitFull): the caller must then not take it as proof,
// since its replay could not be told. An entry is never evicted before
// its time, so filling the cache cannot make a replay pass. Its methods
// are safe for concurrent use; only the first verification of a
// signature takes its lock (the remembered path reads the client from
// its sigEntry).
type replayCache struct {
	mu      sync.Mutex
	size    int
	entries map[replayKey]replayEntry
	ends    replayHeap // every entry's key, by its until
	// reported is when the cache last reported being full (Unix
	// seconds), for replayReportInterval.
	reported int64
}

// replayEntry is one remembered signature.
type replayEntry struct {
	client clientKey
	until  int64 // Unix seconds: the last second it may be seen again
}

func newReplayCache(size int) *replayCache {
	return &replayCache{size: size, entries: make(map[replayKey]replayEntry)}
}

// admit records that the signature k came from client at now, valid
// until until (Unix seconds), and says what that makes it. Expired
// entries are forgotten first, oldest first, each in O(log n).
func (c *replayCache) admit(k replayKey, client clientKey, until, now int64) admission {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.ends) > 0 && c.ends[0].until < now {
		end := heap.Pop(&c.ends).(replayEnd)
		if e, ok := c.entries[end.key]; ok && e.until == end.until {
			delete(c.entries, end.key)
		}
	}
	if e, ok := c.entries[k]; ok {
		if e.client == client {
			return admitSame
		}
		return admitReplay
	}
	if len(c.entries) >= c.size {
		return admitFull
	}
	c.entries[k] = replayEntry{client: client, until: until}
	heap.Push(&c.ends, replayEnd{until: until, key: k})
	return admitFirst
}

// fullReport reports whether the cache being full at now should be told
// (at most once per replayReportInterval), and how many it holds.
func (c *replayCache) fullReport(now int64) (bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now-c.reported < int64(replayReportInterval/time.Second) && c.reported != 0 {
		return false, len(c.entries)
	}
	c.reported = now
	return true, len(c.entries)
}

// len returns how many signatures are remembered.
func (c *replayCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// replayEnd is an entry's key by the time it may be forgotten.
type replayEnd struct {
	until int64
	key   replayKey
}

// replayHeap is a min-heap of replayEnds by until (container/heap).
type replayHeap []replayEnd

func (h replayHeap) Len() int           { return len(h) }
func (h replayHeap) Less(i, j int) bool { return h[i].until < h[j].until }
func (h replayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *replayHeap) Push(x any)        { *h = append(*h, x.(replayEnd)) }
func (h *replayHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}
