package verify

import (
	"hash/maphash"
	"net/http"
	"net/textproto"
	"strings"
	"sync/atomic"
	"time"
)

// sigCacheSize bounds the verified signatures remembered (a power of two).
// Only verified signatures enter, so a forger cannot fill it; an agent
// that signs every request afresh churns it, each new signature taking the
// slot of an older one.
const sigCacheSize = 4096

// sigCache remembers signatures that verified, so that a request carrying
// the same signature fields again (a signature is reusable until it
// expires) is judged by comparing the covered component values, without
// parsing or Ed25519. This is the key-cache-hit warm path: no allocation,
// no lock.
//
// It is direct-mapped: a signature lives in the slot its hash names, and a
// newer one with the same slot replaces it. A slot is an atomic pointer to
// an immutable entry, so a lookup is one atomic load, where the
// RWMutex-guarded map it replaces took two atomic read-modify-writes on a
// shared counter and a map probe: with @authority compared in place
// (authorityIs), the remembered path of BenchmarkVerifyWebBotAuth went
// from 68 to 56 ns, -18% (benchstat, 12 interleaved runs, -cpu 1; the
// table change alone from 68 to 63 ns; docs/verify.md).
type sigCache struct {
	seed  maphash.Seed
	slots [sigCacheSize]atomic.Pointer[sigEntry]
}

// sigEntry is one verified signature and what it covered.
type sigEntry struct {
	input, sig, agent string // the three fields, exactly as received
	token             *tokenEntry
	origin, keyid     string
	expires           int64     // the last second the signature is valid (validUntil)
	client            clientKey // the client it was first seen from (wba_replay.go)
	keyExp            int64     // the key's exp, 0 if none
	dir               *dirEntry
	dirGen            uint64 // dir.gen when the signature verified
	checks            []compCheck
}

// compCheck is one covered component and its value when verified.
type compCheck struct {
	name  string // a derived component, or a header's canonical key
	value string
}

func newSigCache() *sigCache {
	return &sigCache{seed: maphash.MakeSeed()}
}

// slot returns the slot of a Signature field: its hash alone, since it
// holds the signature bytes, unique to a signature base, and is the
// shortest of the three fields; a hit still compares all three in full.
// The seed is random, so a client cannot aim two signatures at one slot.
func (c *sigCache) slot(sig string) *atomic.Pointer[sigEntry] {
	return &c.slots[maphash.String(c.seed, sig)&(sigCacheSize-1)]
}

// cachedVerified judges r by a remembered signature: Verified when r
// carries a signature that verified for e, still holds at now (Unix
// seconds) and was first seen from client; Replayed when it was first
// seen from another client; None when no remembered signature decides.
// in and ag are r's Signature-Input and Signature-Agent field lines.
func (w *wbaState) cachedVerified(e *tokenEntry, r *http.Request, in, ag []string, now int64, client clientKey) Outcome {
	sg := r.Header["Signature"]
	if len(in) != 1 || len(sg) != 1 || len(ag) != 1 {
		return None
	}
	ent := w.cache.slot(sg[0]).Load()
	skew := int64(maxClockSkew / time.Second)
	if ent == nil || ent.token != e || ent.input != in[0] || ent.sig != sg[0] || ent.agent != ag[0] ||
		now > ent.expires+skew || ent.keyExp != 0 && now > ent.keyExp+skew {
		return None
	}
	for _, ch := range ent.checks {
		if !ch.matches(r) {
			return None
		}
	}
	// The key must still be in the agent's directory: while the directory
	// is the one it was verified with and current, it is; otherwise look
	// (a refetch that dropped the key revokes it; a stale directory gets
	// refreshed).
	if ent.dir.gen.Load() != ent.dirGen || now >= ent.dir.fresh.Load() {
		keys, _ := w.directory(ent.origin, time.Unix(now, 0))
		if _, ok := keys[ent.keyid]; !ok {
			return None
		}
	}
	// The replay cache holds the signature's first client for as long as
	// the entry can match (until expires and the skew), so this is its
	// answer, read without its lock.
	if ent.client != client {
		return Replayed
	}
	return Verified
}

// remember stores a signature that verified, valid until until and first
// seen from client, when every covered component can be re-checked
// without allocating (single-line header fields).
func (w *wbaState) remember(e *tokenEntry, r *http.Request, si sigInput, origin string, k dirKey, d *dirEntry, gen uint64,
	until int64, client clientKey) {
	in, sg, ag := r.Header["Signature-Input"], r.Header["Signature"], r.Header["Signature-Agent"]
	if len(in) != 1 || len(sg) != 1 || len(ag) != 1 {
		return
	}
	ent := &sigEntry{input: in[0], sig: sg[0], agent: ag[0], token: e, origin: origin, keyid: si.keyid,
		expires: until, client: client, keyExp: k.exp, dir: d, dirGen: gen}
	for _, comp := range si.components {
		name := comp.Value.(string)
		switch name {
		case "@method", "@authority", "@scheme", "@target-uri", "@request-target", "@path", "@query":
			v, err := componentValue(r, comp)
			if err != nil {
				return
			}
			ent.checks = append(ent.checks, compCheck{name: name, value: v})
			continue
		case "signature-agent":
			continue // the whole field is part of the key
		}
		if strings.HasPrefix(name, "@") {
			return
		}
		if comp.Params != nil && len(comp.Params.Names()) > 0 {
			if _, isKey := comp.Params.Get("key"); !isKey || len(comp.Params.Names()) != 1 {
				return
			}
		}
		canon := textproto.CanonicalMIMEHeaderKey(name)
		vals := r.Header[canon]
		if len(vals) != 1 {
			return
		}
		ent.checks = append(ent.checks, compCheck{name: canon, value: vals[0]})
	}
	w.cache.slot(ent.sig).Store(ent)
}

// matches reports whether r's value of the component is the one verified.
// A header field compares as the whole single line it was: stricter than
// the signature (which trims, or reads one member), never looser.
func (ch compCheck) matches(r *http.Request) bool {
	switch ch.name {
	case "@method":
		return r.Method == ch.value
	case "@authority":
		return authorityIs(r, ch.value)
	case "@scheme":
		return scheme(r) == ch.value
	case "@request-target":
		return requestTarget(r) == ch.value
	case "@path":
		p := r.URL.EscapedPath()
		return p == ch.value || p == "" && ch.value == "/"
	case "@query":
		return len(ch.value) > 0 && ch.value[1:] == r.URL.RawQuery
	case "@target-uri":
		return matchTargetURI(r, ch.value)
	}
	vals := r.Header[ch.name]
	return len(vals) == 1 && vals[0] == ch.value
}

// matchTargetURI compares v with scheme://authority/path?query piece by
// piece, so as not to build the string.
func matchTargetURI(r *http.Request, v string) bool {
	for _, part := range [...]string{scheme(r), "://", authority(r), r.URL.EscapedPath()} {
		if !strings.HasPrefix(v, part) {
			return false
		}
		v = v[len(part):]
	}
	if r.URL.RawQuery == "" {
		return v == "" && !r.URL.ForceQuery
	}
	return len(v) > 0 && v[0] == '?' && v[1:] == r.URL.RawQuery
}
