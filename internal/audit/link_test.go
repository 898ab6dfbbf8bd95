package audit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"time"
)

// serve writes a robots.txt serve of site to ip, with the tokens given,
// at second sec after 2026-11-22 10:00:00 UTC.
func serve(site, ip string, sec float64, tokens ...string) string {
	return logLine(record.Msg, record.MsgServed, "record_version", 2, "site", site, "client_ip", ip, "agents", tokens, "ts", 1795341600+sec, "uri", "/robots.txt")
}

// crawl writes a version 2 violation of agent on site from ip, at second
// sec, not served robots.txt as far as its Caddy knows.
func crawl(agent, site, ip string, sec float64, more ...any) string {
	return v2(agent, "deny", "violation", append([]any{"site", site, "client_ip", ip, "ts", 1795341600 + sec}, more...)...)
}

// TestLink checks how robots.txt fetches are tied to crawlers: by a serve
// carrying the crawler's token, by a serve to one of its client IPs, or
// by its records; per site; whatever the order of the lines.
func TestLink(t *testing.T) {
	const (
		www   = "https://www.example.com"
		ip    = "198.51.100.7"
		chrom = "Chrome"
	)
	at := func(sec float64) time.Time {
		return time.Unix(1795341600, 0).Add(time.Duration(sec * float64(time.Second))).UTC()
	}
	tests := []struct {
		name       string
		log        string
		filter     Filter
		row        int // in Crawlers; -1 for the first forgery
		fetched    string
		by         time.Time
		afterFetch int64
	}{
		{"token", serve(www, "203.0.113.1", 1, "Mozilla", "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "yes (token)", at(1), 1},
		{"token, read after the crawl", crawl("ExampleBot", www, ip, 2) + serve(www, "203.0.113.1", 3, "examplebot"), Filter{}, 0, "yes (token)", at(3), 0},
		{"ip, under a browser's User-Agent", serve(www, ip, 1, "Mozilla", chrom) + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "yes (ip)", at(1), 1},
		{"ip, read after the crawl", crawl("ExampleBot", www, ip, 2) + serve(www, ip, 1, "Mozilla", chrom), Filter{}, 0, "yes (ip)", at(1), 1},
		{"another ip", serve(www, "198.51.100.8", 1, chrom) + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"another site", serve("https://blog.example.com", ip, 1, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"another scheme", serve("http://www.example.com", ip, 1, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"token and ip: token, the earliest time", serve(www, ip, 1, chrom) + serve(www, "203.0.113.1", 5, "ExampleBot") + crawl("ExampleBot", www, ip, 9), Filter{}, 0, "yes (token)", at(1), 1},
		{"the record's own ip link", crawl("ExampleBot", www, ip, 9, "served_robots", true, "served_link", "ip", "served_at", 1795341604.5), Filter{}, 0, "yes (ip)", at(4.5), 1},
		{"the record's own link, unnamed", crawl("ExampleBot", www, ip, 9, "served_robots", true), Filter{}, 0, "yes", at(9), 1},
		{"served_robots false beats agent_fetched_robots", crawl("ExampleBot", www, ip, 9, "agent_fetched_robots", true), Filter{}, 0, "no", time.Time{}, 0},
		{"version 1, agent_fetched_robots", v1("ExampleBot", "deny", "agent_fetched_robots", true), Filter{}, 0, "yes (token)", time.Unix(1795341600, 5e8).UTC(), 1},
		{"a forger is not linked by its claimed token", serve(www, "20.171.207.10", 1, "GPTBot") + crawl("GPTBot", www, ip, 2, "identity", "forged"), Filter{}, -1, "no", time.Time{}, 0},
		{"a forger is linked by its own ip", serve(www, ip, 1, chrom) + crawl("GPTBot", www, ip, 2, "identity", "forged"), Filter{}, -1, "yes (ip)", at(1), 1},
		{"the agent filter leaves serves alone", serve(www, ip, 1, chrom) + crawl("ExampleBot", www, ip, 2), Filter{Agent: "examplebot"}, 0, "yes (ip)", at(1), 1},
		{"a serve a day before since counts", serve(www, ip, -86000, chrom) + crawl("ExampleBot", www, ip, 2), Filter{Since: at(0)}, 0, "yes (ip)", at(-86000), 1},
		{"a serve over a day before since does not", serve(www, ip, -86500, chrom) + crawl("ExampleBot", www, ip, 2), Filter{Since: at(0)}, 0, "no", time.Time{}, 0},
		{"a serve after until does not", serve(www, ip, 5, chrom) + crawl("ExampleBot", www, ip, 2), Filter{Until: at(4)}, 0, "no", time.Time{}, 0},
		{"a serve of another host is filtered", serve("https://blog.example.com", ip, 1, chrom) + crawl("ExampleBot", "https://blog.example.com", ip, 2), Filter{Host: "www.example.com"}, -2, "", time.Time{}, 0},
	}
	for _, tt := range tests {
		a := New(Options{Filter: tt.filter})
		if _, err := a.Read("link.log", strings.NewReader(tt.log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		var c *Crawler
		switch {
		case tt.row == -2:
			if len(r.Crawlers) != 0 || r.Fetches.Serves != 0 || r.Total.FetchesFiltered != 1 {
				t.Errorf("%s: rows %d, serves %+v, %+v", tt.name, len(r.Crawlers), r.Fetches, r.Total)
			}
			continue
		case tt.row == -1 && len(r.Forgeries) == 1:
			c = &r.Forgeries[0]
		case tt.row >= 0 && tt.row < len(r.Crawlers):
			c = &r.Crawlers[tt.row]
		default:
			t.Errorf("%s: no row %d: %+v", tt.name, tt.row, r.Crawlers)
			continue
		}
		if got := fetchedText(c); got != tt.fetched || !c.FetchedBy.Equal(tt.by) || c.ViolationsAfterFetch != tt.afterFetch {
			t.Errorf("%s: fetched %q by %v, %d after fetch; want %q by %v, %d", tt.name, got, c.FetchedBy, c.ViolationsAfterFetch, tt.fetched, tt.by, tt.afterFetch)
		}
	}
}

// TestLinkPastClientIPs checks a row of more client IPs than it keeps: an
// address past MaxClientIPs links a serve read before its record, and the
// report says that later ones may not.
func TestLinkPastClientIPs(t *testing.T) {
	var b strings.Builder
	for i := range MaxClientIPs {
		b.WriteString(crawl("Spider", "https://example.com", fmt.Sprintf("192.0.2.%d", i), 2))
	}
	crawls := b.String()
	last := crawl("Spider", "https://example.com", "198.51.100.99", 3)
	fetch := serve("https://example.com", "198.51.100.99", 1, "Chrome")
	for _, tt := range []struct {
		name string
		log  string
		want string
	}{
		{"serve read first", fetch + crawls + last, "yes (ip)"},
		{"serve read last", crawls + last + fetch, "no"},
	} {
		a := New(Options{})
		if _, err := a.Read("ips.log", strings.NewReader(tt.log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		c := &r.Crawlers[0]
		if got := fetchedText(c); got != tt.want || c.ClientIPs != MaxClientIPs || !c.ClientIPsMore || r.Fetches.RowsPastIPs != 1 || ipsText(c) != "64+" {
			t.Errorf("%s: fetched %q (want %q), %d IPs (more %v), rows past %d", tt.name, got, tt.want, c.ClientIPs, c.ClientIPsMore, r.Fetches.RowsPastIPs)
		}
	}
}

// TestSiteFilter checks the Host filter against sites and hosts.
func TestSiteFilter(t *testing.T) {
	tests := []struct {
		filter, site, host string
		want               bool
	}{
		{"example.com", "https://example.com", "", true},
		{"example.com", "https://example.com:8443", "", true},
		{"example.com", "http://example.com", "", true},
		{"example.com", "", "example.com:8443", true},
		{"example.com", "https://www.example.com", "", false},
		{"EXAMPLE.com", "https://example.com", "", true},
		{"example.com:443", "https://example.com", "", true},
		{"example.com:443", "http://example.com", "", false},
		{"example.com:80", "http://example.com", "", true},
		{"example.com:443", "https://example.com:8443", "", false},
		{"https://example.com", "https://example.com", "", true},
		{"https://example.com", "https://example.com:443", "", true},
		{"https://example.com:443", "https://example.com", "", true},
		{"https://example.com/", "https://example.com", "", true},
		{"https://example.com", "http://example.com", "", false},
		{"https://example.com", "https://example.com:8443", "", false},
		{"https://example.com", "", "example.com", true},
		{"http://localhost:8081", "http://localhost:8081", "", true},
		{"HTTP://LOCALHOST:8081", "http://localhost:8081", "", true},
		{"http://localhost:8081", "https://localhost:8081", "", false},
		{"localhost:8081", "http://localhost:8081", "", true},
		{"localhost", "http://localhost:8081", "", true},
		{"localhost:8081", "", "localhost:8081", true},
		{"[::1]:8081", "http://[::1]:8081", "", true},
		{"[::1]", "http://[::1]:8081", "", true},
	}
	for _, tt := range tests {
		rec := &rawRecord{}
		rec.host = []byte(tt.host)
		if tt.site != "" {
			rec.site, rec.has = []byte(tt.site), hasSite
			rec.host = []byte("ignored.example")
		}
		if got := siteMatches(rec, tt.filter); got != tt.want {
			t.Errorf("siteMatches(site %q, host %q; %q) = %v, want %v", tt.site, tt.host, tt.filter, got, tt.want)
		}
	}
}

// TestModeFilter checks --mode: records of the other mode, and records
// without a mode, are left out.
func TestModeFilter(t *testing.T) {
	log := v2("A", "deny", "violation", "mode", "log") + v2("A", "deny", "violation", "mode", "enforce") +
		v2("A", "allow", "allowed", "mode", "enforce") + v2("A", "allow", "allowed", "mode", nil)
	for _, tt := range []struct {
		mode           string
		kept, filtered int64
		rowMode        string
	}{
		{"", 4, 0, "enforce+log"},
		{"log", 1, 3, "log"},
		{"enforce", 2, 2, "enforce"},
	} {
		a := New(Options{Filter: Filter{Mode: tt.mode}})
		if _, err := a.Read("mode.log", strings.NewReader(log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		if r.Total.Records-r.Total.Filtered != tt.kept || r.Total.Filtered != tt.filtered || r.Crawlers[0].Mode != tt.rowMode {
			t.Errorf("mode %q: kept %d, filtered %d, row mode %q; want %d, %d, %q", tt.mode, r.Total.Records-r.Total.Filtered, r.Total.Filtered, r.Crawlers[0].Mode, tt.kept, tt.filtered, tt.rowMode)
		}
	}
}

// TestAfterFetchPastTimes checks AFTER FETCH for a row with more
// violations without a fetch on record than it keeps times of: exact when
// the fetch came before them all, a lower bound, said so, otherwise.
func TestAfterFetchPastTimes(t *testing.T) {
	var b strings.Builder
	for i := range MaxViolationTimes + 10 {
		b.WriteString(crawl("Spider", "https://example.com", "192.0.2.1", 10+float64(i)/1000))
	}
	crawls := b.String()
	for _, tt := range []struct {
		name       string
		fetch      float64
		afterFetch int64
		bound      int
	}{
		{"fetched before", 5, MaxViolationTimes + 10, 0},
		{"fetched after", 100, 0, 0},
		// Violations at 10.000 to 11.033; the times kept are the first
		// 1,024 read, up to 11.023.
		{"fetched between", 11, 24, 1},
	} {
		a := New(Options{})
		log := crawls + serve("https://example.com", "192.0.2.1", tt.fetch, "Chrome")
		if _, err := a.Read("times.log", strings.NewReader(log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		c := &r.Crawlers[0]
		if c.ViolationsAfterFetch != tt.afterFetch || r.Fetches.RowsPastTimes != tt.bound || c.Violations != MaxViolationTimes+10 {
			t.Errorf("%s: %d of %d after fetch, %d rows past times; want %d, %d", tt.name, c.ViolationsAfterFetch, c.Violations, r.Fetches.RowsPastTimes, tt.afterFetch, tt.bound)
		}
	}
}
