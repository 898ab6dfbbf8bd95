package audit

import (
	"bytes"
	"strings"
	"time"
)

// Filter restricts which records a report counts. Its zero value counts
// all.
type Filter struct {
	// Since and Until bound the records' times: Since inclusive, Until
	// exclusive; zero is no bound. With either, records without a time are
	// left out. A robots.txt serve counts from a day before Since (a
	// crawler may use its copy that long, RFC 9309 §2.4) up to Until.
	Since, Until time.Time
	// Host keeps the records of one site or host, compared
	// case-insensitively: a site ("http://localhost:8081") matches a
	// record's site of that scheme, host and port (a scheme's default port
	// may be left out); a host ("example.com", "localhost:8081") matches
	// the host of the record's site, ignoring the port when Host has none:
	// "example.com" keeps "https://example.com:8443" too. A record that
	// names no site (record version 1) is matched by its Host, against
	// the host of either form.
	Host string
	// Agent keeps the records of one product token, case-insensitively.
	// It does not apply to robots.txt serves, which name several tokens
	// and link by the rules of the package documentation ("Fetches").
	Agent string
	// Mode keeps the records of one mode, "enforce" or "log"; records
	// without a mode are left out. "" keeps all.
	Mode string
}

// keep applies the filter to a decision record.
func (a *Auditor) keep(rec *rawRecord, ns int64, timed bool) bool {
	f := &a.opts.Filter
	if (a.since != 0 || a.until != 0) && !timed {
		return false
	}
	if a.since != 0 && ns < a.since || a.until != 0 && ns >= a.until {
		return false
	}
	if f.Agent != "" && !bytes.EqualFold(rec.agent, []byte(f.Agent)) {
		return false
	}
	if f.Mode != "" && !bytes.EqualFold(rec.mode, []byte(f.Mode)) {
		return false
	}
	return f.Host == "" || siteMatches(rec, f.Host)
}

// keepServed applies the filter to a robots.txt serve: its site or host,
// and its time, from a day before Since (fetchCacheTime) up to Until.
func (a *Auditor) keepServed(rec *rawRecord, ns int64, timed bool) bool {
	if (a.since != 0 || a.until != 0) && !timed {
		return false
	}
	if a.since != 0 && ns < a.since-int64(fetchCacheTime) || a.until != 0 && ns >= a.until {
		return false
	}
	return a.opts.Filter.Host == "" || siteMatches(rec, a.opts.Filter.Host)
}

// fetchCacheTime is how long a fetched robots.txt may be used: RFC 9309
// §2.4 lets crawlers cache it for up to 24 hours.
const fetchCacheTime = 24 * time.Hour

// siteMatches compares a record's site (or, without one, its Host) with
// the Host filter.
func siteMatches(rec *rawRecord, filter string) bool {
	fScheme, fHost, fSite := splitSite(filter)
	if rec.has&hasSite == 0 || len(rec.site) == 0 {
		return hostMatches(rec.host, fHost)
	}
	scheme, host, _ := splitSite(string(rec.site))
	if fSite {
		return strings.EqualFold(scheme, fScheme) && strings.EqualFold(withPort(host, scheme), withPort(fHost, fScheme))
	}
	if hasPort(fHost) {
		host = withPort(host, scheme) // a site leaves out its scheme's port
	}
	return hostMatches([]byte(host), fHost)
}

// withPort returns host with the scheme's default port when it names none.
func withPort(host, scheme string) string {
	if hasPort(host) {
		return host
	}
	if strings.EqualFold(scheme, "http") {
		return host + ":80"
	}
	return host + ":443"
}

// splitSite splits "scheme://host[:port]" into its scheme and host; a
// string without "://" is a host alone.
func splitSite(s string) (scheme, host string, isSite bool) {
	if scheme, host, ok := strings.Cut(s, "://"); ok {
		return scheme, strings.TrimSuffix(host, "/"), true
	}
	return "", s, false
}

// hostMatches compares a record's host with a filter's, ignoring the
// record's port when the filter names none.
func hostMatches(host []byte, filter string) bool {
	if bytes.EqualFold(host, []byte(filter)) {
		return true
	}
	if hasPort(filter) {
		return false
	}
	return hasPort(string(host)) && bytes.EqualFold(host[:bytes.LastIndexByte(host, ':')], []byte(filter))
}

// hasPort reports whether a Host value ends in a port: "h:1", "[::1]:1".
func hasPort(h string) bool {
	i := len(h) - 1
	for i >= 0 && isDigit(h[i]) {
		i--
	}
	if i < 0 || i == len(h)-1 || h[i] != ':' {
		return false
	}
	if h[0] == '[' {
		return i > 0 && h[i-1] == ']'
	}
	for j := range i { // a bare IPv6 address has no port
		if h[j] == ':' {
			return false
		}
	}
	return true
}
