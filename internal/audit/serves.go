package audit

import (
	"slices"
	"strings"
)

// What the audit keeps of the robots.txt serves under one key of the
// fetch index (a site and a credited token, or a site and a client): the
// earliest, to link the key's rows, and, by version served, instance and
// address, when and how often, and the times within which the client may
// still hold the version (RFC 9309 §2.4: a day after each fetch).

// Bounds of a key's serves, each with its reason.
const (
	// maxServeEntries is how many (version, instance, address) a key
	// tells apart: a crawler is served a few versions a day by a few
	// instances, and a token credited from many addresses is the case
	// past it. Past it, serves are counted in the key's last entry, whose
	// address is then OtherClients: what they cover is kept whole, not
	// who made them.
	maxServeEntries = 16
	// maxServeSpans is how many spans of time an entry keeps: serves less
	// than a day apart make one span, so a crawler that fetches every
	// day for a week has one. Past it, the two spans closest together
	// are joined, and the gap between them counts as covered: a
	// version may then be found to cover a request it did not, in the
	// crawler's favour (see rejudge.go).
	maxServeSpans = 8
	// maxVersionName cuts a version's name: the handler writes 16 hex
	// digits, or a word.
	maxVersionName = 64
	// maxServedNames bounds the names of versions kept: a site publishes
	// a few a month. Past it, versions served are not told apart
	// (OtherVersions), and judge as unknown.
	maxServedNames = 4096
)

// OtherClients names the addresses of a key's serves past
// maxServeEntries.
const OtherClients = "(others)"

// serving is one robots.txt serve, as add reads it.
type serving struct {
	at       int64 // Unix ns; -1 for none
	instance uint32
	version  string // "" when the line names none
	client   []byte // for a token key, the fetching address; nil for a client key
}

// serveKey is what a key of the fetch index keeps.
type serveKey struct {
	at      int64 // the earliest serve; -1 when none had a time
	entries []serveEntry
}

// serveEntry counts the serves of one version by one instance to one
// address (for a client key, the key's).
type serveEntry struct {
	version     string
	instance    uint32
	client      string
	first, last int64 // -1 when none had a time
	count       int64
	spans       []span
}

// span is a time within which a version served may be held: from a
// serve to a day after the last serve less than a day after it.
type span struct{ from, to int64 }

// add counts a serve under the key.
func (k *serveKey) add(sv *serving) {
	k.at = earliest(k.at, sv.at, true)
	if sv.version == "" {
		return // links, but says nothing of what was served
	}
	e := k.entry(sv)
	e.count++
	if sv.at < 0 {
		return
	}
	if e.first < 0 || sv.at < e.first {
		e.first = sv.at
	}
	e.last = max(e.last, sv.at)
	e.spans = addSpan(e.spans, span{sv.at, sv.at + int64(fetchCacheTime)})
}

// entry returns the entry of a serve's version, instance and address,
// adding it, or, past maxServeEntries, the key's last entry.
func (k *serveKey) entry(sv *serving) *serveEntry {
	for i := range k.entries {
		e := &k.entries[i]
		if e.version == sv.version && e.instance == sv.instance && e.client == string(sv.client) {
			return e
		}
	}
	if len(k.entries) < maxServeEntries {
		k.entries = append(k.entries, serveEntry{version: sv.version, instance: sv.instance, client: string(sv.client), first: -1, last: -1})
		return &k.entries[len(k.entries)-1]
	}
	// Past the bound, the last entry stands for every serve of the same
	// version (by any instance and address), so that what a version
	// covers is never lost; another version takes the last entry over,
	// keeping the spans of both, and judges as unknown.
	e := &k.entries[len(k.entries)-1]
	if e.version != sv.version {
		e.version = OtherVersions
	}
	e.client = OtherClients
	return e
}

// addSpan adds s to the spans, sorted by start, joining those that
// overlap; past maxServeSpans, the two closest are joined.
func addSpan(spans []span, s span) []span {
	if n := len(spans); n > 0 && s.from >= spans[n-1].from {
		// The common case, serves read in time order: the last span
		// grows, or a new one follows it.
		if s.from <= spans[n-1].to {
			spans[n-1].to = max(spans[n-1].to, s.to)
			return spans
		}
		if n < maxServeSpans {
			return append(spans, s)
		}
	}
	i, _ := slices.BinarySearchFunc(spans, s, func(a, b span) int { return cmpInt(a.from, b.from) })
	spans = slices.Insert(spans, i, s)
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.from <= last.to {
			last.to = max(last.to, sp.to)
			continue
		}
		out = append(out, sp)
	}
	for len(out) > maxServeSpans {
		j := 0
		for i := 1; i+1 < len(out); i++ {
			if out[i+1].from-out[i].to < out[j+1].from-out[j].to {
				j = i
			}
		}
		out[j].to = max(out[j].to, out[j+1].to)
		out = slices.Delete(out, j+1, j+2)
	}
	return out
}

// covers reports whether the entry's version may be held at ns: a serve
// at or before ns, no more than a day before it.
func (e *serveEntry) covers(ns int64) bool {
	for _, s := range e.spans {
		if s.from <= ns && ns <= s.to {
			return true
		}
	}
	return false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// otherVersionName reports whether a version's name stands for versions
// not told apart.
func otherVersionName(v string) bool {
	return v == OtherVersions || strings.TrimSpace(v) == ""
}
