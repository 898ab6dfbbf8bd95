package audit

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"time"
)

// Escalated crawlers. With the handler's violators option, a crawler
// recorded with a violation is escalated for a while: "enforce" denies
// what its group disallows even in log mode, "block" everything but
// /robots.txt. The record of the violation that began an escalation says
// escalation_began; it, and every record of the crawler while the
// escalation lasts, carry the escalation's mode, bounds and the target
// that began it.
//
// The handler keys its table by site and crawler: the product token when
// the client was verified as it, else the token and the client address,
// so that no one can get another crawler escalated by claiming its name.
// The audit keys each escalation the same way, with the time it began:
// the same crawler escalated again once the first ended, or by another
// instance with a table of its own, is another escalation. Every record
// carries its escalation's key, so a denial is counted for its
// escalation whether its beginning was read first or last.

// DefaultMaxEscalations bounds the escalations an Auditor keeps: the
// handler's table holds at most 10,000 crawlers (its own bound) for up
// to a day each, and an escalation kept costs at most some 1.5 KiB (a
// site, a token and a target of the lengths kept), 15 MiB for all.
// Past it, the escalations that began latest are kept (see escalations).
const DefaultMaxEscalations = 10000

// maxEscalationMode cuts an escalation's mode the audit does not know
// ("enforce" and "block" are the handler's).
const maxEscalationMode = 16

// Kinds of escalation key: the byte after the token says whether an
// address follows it.
const (
	escByToken   = 't' // a verified token, wherever it asks from
	escByAddress = 'a' // a claim at one address
)

// maxClientIPLength cuts a client address: an IPv6 address with a zone
// is well within it.
const maxClientIPLength = 64

// Escalation is one escalation of a crawler, read from the record of the
// violation that began it (escalation_began), with the requests refused
// while it lasted.
type Escalation struct {
	// Site is the origin whose robots.txt the crawler broke; Agent its
	// product token (of several spellings, the least is shown).
	Site  string `json:"site"`
	Agent string `json:"agent"`
	// Identity is the identity of the beginning record (IdentityNone
	// when it had none). A verified crawler is escalated wherever it
	// asks from; any other claim only from ClientIP, its address.
	Identity string `json:"identity"`
	ClientIP string `json:"client_ip,omitempty"`
	// Mode is "enforce" (what its group disallows is denied, in log mode
	// too) or "block" (everything but /robots.txt is denied).
	Mode string `json:"mode"`
	// Since and Until bound the escalation (escalated_since,
	// escalated_until); zero when the record gave none that could be
	// read.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// EscalatedBy is the target of the violation that began it, and
	// StartedAt the time of that violation's record.
	EscalatedBy string    `json:"escalated_by"`
	StartedAt   time.Time `json:"started_at,omitzero"`
	// Instance is the instance whose record began it (the record's
	// instance, or, without one, the log it was read from).
	Instance string `json:"instance,omitempty"`
	// Denied counts the requests refused while it lasted (records with
	// escalation and verdict deny, the beginning's own left out: it was
	// judged before the escalation was in force); Violations those of
	// them that were violations too, the rest being what its group
	// allows, blocked (reason "escalated", compliance "protective").
	Denied     int64 `json:"denied"`
	Violations int64 `json:"violations"`
}

// EscalationStats says what of the escalated crawlers' records the list
// of escalations does not show.
type EscalationStats struct {
	// Dropped counts the beginnings not listed: past
	// Options.MaxEscalations, those that began earliest.
	Dropped int64 `json:"dropped"`
	// DeniedUnlisted counts the escalated denials of escalations not
	// listed: their beginning is not among the records read (it is in an
	// earlier log, or the filter left it out), or was dropped.
	DeniedUnlisted int64 `json:"denied_unlisted"`
	// Max is Options.MaxEscalations, how many escalations were kept.
	Max int `json:"max"`
}

// escalations holds the escalations read, by key, up to max. Past max it
// keeps those whose keys are greatest, as a min-heap by key: a key is
// its escalation's beginning (big-endian Unix ns) then its site, token
// and address, so the escalations that began latest stay. Which are kept
// depends only on the set of keys read, not on their order, and a key
// kept has been kept since its first record, so its counts are whole: a
// key that falls out ranks below all kept from then on, and its later
// records are counted as dropped too.
type escalations struct {
	max     int
	m       map[string]*escEntry
	heap    []*escEntry // by key, least first
	dropped int64       // beginnings not kept
	denied  int64       // denials of keys not kept
	key     []byte
	lower   []byte
}

// escEntry is one escalation kept.
type escEntry struct {
	key string
	ip  string // "" for a verified crawler
	// began counts its beginning records: one, or the same one read
	// twice (two copies of a log). Of two, the least of each text is
	// kept, so the report does not depend on which came first.
	began                           int64
	site, agent, identity, mode, by string
	instance                        string
	until, at                       int64 // Unix ns; 0 when unknown
	denied, violations              int64
}

func newEscalations(max int) escalations {
	return escalations{max: max, m: make(map[string]*escEntry)}
}

// add counts a record that carries an escalation, written by instance:
// the beginning of one, or a request refused while it lasted. Requests it
// let through count in the crawler's row only.
func (t *escalations) add(rec *rawRecord, ns int64, timed bool, instance string) {
	began := rec.escalationBegan == triTrue
	if !began && rec.outcome == outAllowed {
		return
	}
	var since int64
	if rec.has&hasEscalatedSince != 0 {
		since, _ = timeOf(rec.escSince, rec.escSinceString)
	}
	site, agent := siteOf(rec), cut(rec.agent, MaxAgentLength)
	t.lower = appendLower(t.lower[:0], cut(rec.identity, maxIdentityLength))
	identity := identityOf(t.lower)
	// The handler escalates a verified token wherever it asks from, any
	// other claim at its address.
	ip, by := cut(rec.clientIP, maxClientIPLength), byte(escByAddress)
	if identity == IdentityVerified {
		ip, by = nil, escByToken
	}
	t.key = binary.BigEndian.AppendUint64(t.key[:0], uint64(since))
	t.key = append(appendLower(t.key, site), 0)
	t.key = append(appendLower(t.key, agent), 0, by)
	t.key = appendLower(t.key, ip)
	e := t.m[string(t.key)]
	if e == nil {
		if len(t.heap) >= t.max {
			if string(t.key) <= t.heap[0].key {
				t.drop(began)
				return
			}
			t.evict()
		}
		e = &escEntry{key: string(t.key), ip: string(bytes.ToLower(ip))}
		t.m[e.key] = e
		t.push(e)
	}
	if !began {
		e.denied++
		if rec.outcome == outViolation {
			e.violations++
		}
		return
	}
	first := e.began == 0
	e.began++
	e.site = least(e.site, site, first)
	e.agent = least(e.agent, agent, first)
	e.identity = least(e.identity, identity, first)
	e.mode = least(e.mode, cut(rec.escalation, maxEscalationMode), first)
	e.by = least(e.by, cut(rec.escalatedBy, MaxPathLength), first)
	e.instance = least(e.instance, instance, first)
	if rec.has&hasEscalatedUntil != 0 {
		if until, ok := timeOf(rec.escUntil, rec.escUntilString); ok {
			e.until = max(e.until, until)
		}
	}
	if timed && (e.at == 0 || ns < e.at) {
		e.at = ns
	}
}

// drop counts a record whose escalation is not kept: a beginning, or a
// denial.
func (t *escalations) drop(began bool) {
	if began {
		t.dropped++
	} else {
		t.denied++
	}
}

// least returns the lesser of old and s, or s when first; it copies s
// only when it is kept.
func least[S string | []byte](old string, s S, first bool) string {
	if first || string(s) < old {
		return string(s)
	}
	return old
}

// evict drops the escalation of the least key, counting what it held.
func (t *escalations) evict() {
	e := t.heap[0]
	t.dropped += e.began
	t.denied += e.denied
	delete(t.m, e.key)
	last := len(t.heap) - 1
	t.swap(0, last)
	t.heap[last] = nil
	t.heap = t.heap[:last]
	t.down(0)
}

func (t *escalations) push(e *escEntry) {
	t.heap = append(t.heap, e)
	for i := len(t.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if t.heap[p].key <= t.heap[i].key {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *escalations) down(i int) {
	for {
		l, small := 2*i+1, i
		if l < len(t.heap) && t.heap[l].key < t.heap[small].key {
			small = l
		}
		if r := l + 1; r < len(t.heap) && t.heap[r].key < t.heap[small].key {
			small = r
		}
		if small == i {
			return
		}
		t.swap(i, small)
		i = small
	}
}

func (t *escalations) swap(i, j int) {
	t.heap[i], t.heap[j] = t.heap[j], t.heap[i]
}

// report returns the escalations whose beginning was read, by when they
// began, then site, token and address; and what the list leaves out.
func (t *escalations) report() ([]Escalation, EscalationStats) {
	st := EscalationStats{Dropped: t.dropped, DeniedUnlisted: t.denied, Max: t.max}
	kept := slices.Clone(t.heap)
	slices.SortFunc(kept, func(x, y *escEntry) int { return strings.Compare(x.key, y.key) })
	out := []Escalation{}
	for _, e := range kept {
		if e.began == 0 {
			st.DeniedUnlisted += e.denied
			continue
		}
		out = append(out, Escalation{
			Site: e.site, Agent: e.agent, Identity: e.identity, ClientIP: e.ip, Mode: e.mode,
			Since: unixTime(int64(binary.BigEndian.Uint64([]byte(e.key[:8])))), Until: unixTime(e.until),
			EscalatedBy: e.by, StartedAt: unixTime(e.at), Instance: e.instance,
			Denied: e.denied, Violations: e.violations,
		})
	}
	return out, st
}

// unixTime returns Unix ns as a time in UTC; zero for 0.
func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
