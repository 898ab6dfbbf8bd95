package audit

import (
	"encoding/binary"
	"hash/maphash"
)

// Linking robots.txt fetches to crawlers. The handler writes a line
// "robots.txt served" for each robots.txt it saw served, with the site,
// the client IP, the User-Agent and its product tokens (agents), and,
// from record version 3, the tokens the fetch counts for wherever the
// crawler asks from (credited_agents: those the client proved, and those
// no method can prove). A row counts as having fetched its site's
// robots.txt only on evidence that ties the fetch to it:
//
//   - "token": a serve credited the row's product token, and the row's
//     identity is one a token's fetch may be credited to (verified,
//     unverified, or none recorded). A serve without credited_agents
//     (version 2) credits no token: any client could have claimed it.
//   - "client": a serve came from one of the row's clients: the same
//     client IP with the row's product token among its agents, or, for a
//     row without a token, the same client IP and the same User-Agent.
//
// A serve is never credited to another crawler at the same address:
// clients behind one NAT, or a CDN whose address Caddy was not told to
// look past, share it. The records' own served_link says the same of the
// serves one Caddy saw; the serve lines add those of every instance whose
// logs are read together.
//
// Serves are kept by key, not in order, and matched against the rows when
// the report is made, so that the result does not depend on the order in
// which logs, or lines, are read (within MaxFetchKeys and MaxClientIPs).

// Kinds of client key: the byte after the address says what follows it.
const (
	clientByToken = 't' // a product token, lower-case
	clientByUA    = 'u' // the hash of a User-Agent
	clientNoUA    = 'n' // a record without a User-Agent: links nothing
)

// fetchIndex holds the serves of each (site, credited token) and of each
// (site, client key): the earliest, in Unix ns (-1 for a serve without a
// time), to link fetches to rows, and which version was served, by which
// instance, to which address and when (serveEntry), to list a crawler's
// fetches and to judge its denials again against every version it was
// served on any instance (see rejudge.go).
type fetchIndex struct {
	byToken  map[string]*serveKey
	byClient map[string]*serveKey
	lines    int64 // serves kept
	dropped  int64 // serves not kept: the index was full
	// seed hashes User-Agents into client keys: a key holds 8 octets for
	// a User-Agent of up to record.MaxUserAgent, and a client that cannot
	// know the seed cannot make its User-Agent collide with another's.
	seed maphash.Seed
	key  []byte
	// versions interns the names of the versions served.
	versions map[string]string
}

func newFetchIndex() fetchIndex {
	return fetchIndex{seed: maphash.MakeSeed(), versions: make(map[string]string)}
}

// appendClient appends the key of a client to dst: its address, compared
// case-insensitively, then the product token it claimed (clientByToken)
// or, without one, its User-Agent's hash (clientByUA; clientNoUA when the
// line has none).
func (x *fetchIndex) appendClient(dst, ip, token, ua []byte, hasUA bool) []byte {
	dst = x.appendRowClient(dst, ip, token, ua, hasUA)
	if len(token) > 0 {
		dst = appendLower(dst, cut(token, MaxAgentLength))
	}
	return dst
}

// appendRowClient appends the part of a client's key that a row keeps:
// all of it but the product token, which is the row's own.
func (x *fetchIndex) appendRowClient(dst, ip, token, ua []byte, hasUA bool) []byte {
	dst = appendLower(dst, ip)
	dst = append(dst, 0)
	switch {
	case len(token) > 0:
		return append(dst, clientByToken)
	case hasUA:
		dst = append(dst, clientByUA)
		return binary.LittleEndian.AppendUint64(dst, maphash.Bytes(x.seed, ua))
	}
	return append(dst, clientNoUA)
}

// splitClient returns the address of a client key and the rest, whose
// first byte is its kind.
func splitClient[K string | []byte](key K) (ip, rest K) {
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return key[:i], key[i+1:]
		}
	}
	return key, key[len(key):]
}

// add keeps a serve, by instance inst: its site (or host), and the tokens
// and client keys it may link.
func (x *fetchIndex) add(rec *rawRecord, ns int64, timed bool, inst uint32) {
	if !timed {
		ns = -1
	}
	site := siteOf(rec)
	sv := serving{at: ns, instance: inst, version: x.version(rec)}
	var kept, full bool
	note := func(m *map[string]*serveKey, client []byte) {
		sv.client = client
		if x.put(m, &sv) {
			kept = true
		} else {
			full = true
		}
	}
	ip := cut(rec.clientIP, maxClientIPLength)
	for _, tok := range rec.credited.all() {
		if len(tok) > 0 {
			x.key = appendKey(x.key[:0], site, cut(tok, MaxAgentLength))
			note(&x.byToken, ip)
		}
	}
	if rec.has&hasClientIP != 0 && len(rec.clientIP) > 0 {
		for _, tok := range rec.agents.all() {
			if len(tok) > 0 {
				x.key = x.appendClient(appendSite(x.key[:0], site), rec.clientIP, tok, nil, false)
				note(&x.byClient, nil)
			}
		}
		if rec.has&hasUserAgent != 0 {
			x.key = x.appendClient(appendSite(x.key[:0], site), rec.clientIP, nil, rec.userAgent, true)
			note(&x.byClient, nil)
		}
	}
	// A serve that names no credited token and no client links nothing,
	// and is neither kept nor dropped.
	switch {
	case kept:
		x.lines++
	case full:
		x.dropped++
	}
}

// version returns the interned name of the version a serve line names,
// "" for none; names past maxServedNames are not told apart.
func (x *fetchIndex) version(rec *rawRecord) string {
	if rec.has&hasHash == 0 || len(rec.hash) == 0 {
		return ""
	}
	h := cut(rec.hash, maxVersionName)
	if v, ok := x.versions[string(h)]; ok {
		return v
	}
	if len(x.versions) >= maxServedNames {
		return OtherVersions
	}
	v := string(h)
	x.versions[v] = v
	return v
}

// internVersion returns a version's name as a string, kept once for all
// records that name it (up to maxServedNames names).
func (x *fetchIndex) internVersion(b []byte) string {
	if v, ok := x.versions[string(b)]; ok {
		return v
	}
	v := string(cut(b, maxVersionName))
	if len(x.versions) < maxServedNames {
		x.versions[v] = v
	}
	return v
}

// put notes a serve under x.key in *m, and reports whether it was kept.
func (x *fetchIndex) put(m *map[string]*serveKey, sv *serving) bool {
	if k, ok := (*m)[string(x.key)]; ok {
		k.add(sv)
		return true
	}
	if len(x.byToken)+len(x.byClient) >= MaxFetchKeys {
		return false
	}
	if *m == nil {
		*m = make(map[string]*serveKey)
	}
	k := &serveKey{at: sv.at}
	k.add(sv)
	(*m)[string(x.key)] = k
	return true
}

// servedTo returns the earliest serve of a site (lower-case) to a client
// (a key of appendClient).
func servedTo[C string | []byte](x *fetchIndex, site string, client C) (int64, bool) {
	x.key = append(appendSite(x.key[:0], site), client...)
	if k, ok := x.byClient[string(x.key)]; ok {
		return k.at, true
	}
	return 0, false
}

func appendSite[S string | []byte](dst []byte, site S) []byte {
	return append(appendLower(dst, site), 0)
}

func appendKey[S, V string | []byte](dst []byte, site S, v V) []byte {
	return appendLower(appendSite(dst, site), v)
}

// link returns how and by when a row is known to have fetched its site's
// robots.txt, from its records and from the serves: the strongest link,
// and the earliest time of any (-1 when none had a time).
func (x *fetchIndex) link(c *crawler) (linkKind, int64, bool) {
	link, at, known := c.recordLink, c.fetchedAt, c.fetchedAt != 0
	note := func(k linkKind, t int64) {
		link = max(link, k)
		at = earliest(at, t, known)
		known = true
	}
	if c.lateClientKnown {
		note(linkClient, c.lateClient)
	}
	for k := range c.clients {
		x.key = append(appendSite(x.key[:0], c.hostKey), k...)
		if _, rest := splitClient(k); rest == string(clientByToken) {
			if c.agentKey == "" { // the row past MaxCrawlers
				continue
			}
			x.key = append(x.key, c.agentKey...)
		}
		if k, ok := x.byClient[string(x.key)]; ok {
			note(linkClient, k.at)
		}
	}
	// A credited fetch counts for the token wherever it asks from, but a
	// row whose claim failed or is not settled (forged, pending,
	// unconfirmed) may not be that crawler at all.
	if c.agentKey != "" && c.creditable() {
		x.key = appendKey(x.key[:0], c.hostKey, c.agentKey)
		if k, ok := x.byToken[string(x.key)]; ok {
			note(linkToken, k.at)
		}
	}
	return link, at, known
}
