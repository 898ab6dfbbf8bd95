package audit

// Linking robots.txt fetches to crawlers. The handler writes a line
// "robots.txt served" for each robots.txt it saw served, with the site,
// the client IP and the User-Agent's product tokens. A crawler counts as
// having fetched a site's robots.txt when a serve of that site carried its
// product token (link "token"), or came from a client IP its requests came
// from (link "ip"): a crawler that reads robots.txt under a browser's
// User-Agent and crawls under its own is still seen to have read it. The
// records' own served_link says the same of the serves one Caddy saw; the
// serve lines add those of every instance whose logs are read together.
//
// Serves are kept by key, not in order, and matched against the rows when
// the report is made, so that the result does not depend on the order in
// which logs, or lines, are read (within MaxFetchKeys and MaxClientIPs).

// fetchIndex holds the earliest serve of each (site, client IP) and
// (site, product token), in Unix ns (-1 for a serve without a time).
type fetchIndex struct {
	byIP    map[string]int64
	byToken map[string]int64
	lines   int64 // serves kept
	dropped int64 // serves not kept: the index was full
	key     []byte
}

// add keeps a serve: its site (or host), client IP and tokens.
func (x *fetchIndex) add(rec *rawRecord, ns int64, timed bool) {
	if !timed {
		ns = -1
	}
	site := rec.host
	if rec.has&hasSite != 0 && len(rec.site) > 0 {
		site = rec.site
	}
	site = cut(site, MaxHostLength)
	kept := false
	if rec.has&hasClientIP != 0 && len(rec.clientIP) > 0 {
		x.byIP, kept = x.put(x.byIP, site, rec.clientIP, ns)
	}
	for _, tok := range rec.agents.all() {
		var ok bool
		x.byToken, ok = x.put(x.byToken, site, cut(tok, MaxAgentLength), ns)
		kept = kept || ok
	}
	if kept {
		x.lines++
	} else {
		x.dropped++
	}
}

// put notes a serve under (site, v), both compared case-insensitively,
// and reports whether it was kept.
func (x *fetchIndex) put(m map[string]int64, site, v []byte, ns int64) (map[string]int64, bool) {
	x.key = appendKey(x.key[:0], site, v)
	if old, ok := m[string(x.key)]; ok {
		m[string(x.key)] = earliest(old, ns, true)
		return m, true
	}
	if len(x.byIP)+len(x.byToken) >= MaxFetchKeys {
		return m, false
	}
	if m == nil {
		m = make(map[string]int64)
	}
	m[string(x.key)] = ns
	return m, true
}

// byIPOf returns the earliest serve of a site (lower-case) to a client IP.
func (x *fetchIndex) byIPOf(site string, ip []byte) (int64, bool) {
	x.key = appendKey(x.key[:0], site, ip)
	t, ok := x.byIP[string(x.key)]
	return t, ok
}

func appendKey[S, V string | []byte](dst []byte, site S, v V) []byte {
	dst = appendLower(dst, site)
	dst = append(dst, 0)
	return appendLower(dst, v)
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
	if c.lateIPKnown {
		note(linkIP, c.lateIP)
	}
	for ip := range c.ips {
		if t, ok := x.byIPOf(c.hostKey, []byte(ip)); ok {
			note(linkIP, t)
		}
	}
	// A forger's row is not linked by its claimed token: a serve under
	// the token may as well have been the real crawler's.
	x.key = appendKey(x.key[:0], c.hostKey, c.agentKey)
	if t, ok := x.byToken[string(x.key)]; ok && c.agentKey != "" && c.identity != IdentityForged {
		note(linkToken, t)
	}
	return link, at, known
}
