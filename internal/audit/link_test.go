package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// serve writes a robots.txt serve of record version 2 of site to ip,
// with the tokens given, at second sec after 2026-11-22 10:00:00 UTC: no
// user_agent, no credited_agents.
func serve(site, ip string, sec float64, tokens ...string) string {
	return logLine(record.Msg, record.MsgServed, "record_version", 2, "site", site, "client_ip", ip, "agents", tokens, "ts", 1795341600+sec, "uri", "/robots.txt")
}

// serve3 writes a robots.txt serve of record version 3: with the
// User-Agent ua, its tokens, and those of them credited wherever the
// crawler asks from.
func serve3(site, ip, ua string, sec float64, credited []string, tokens ...string) string {
	if credited == nil {
		credited = []string{}
	}
	return logLine(record.Msg, record.MsgServed, record.RecordVersion, record.Version, record.Site, site, record.ClientIP, ip,
		record.UserAgent, ua, record.Agents, tokens, record.CreditedAgents, credited, record.TS, 1795341600+sec, record.URI, "/robots.txt")
}

// crawl writes a version 2 violation of agent on site from ip, at second
// sec, identity unverified, not served robots.txt as far as its Caddy
// knows.
func crawl(agent, site, ip string, sec float64, more ...any) string {
	return v2(agent, "deny", "violation", append([]any{"site", site, "client_ip", ip, "ts", 1795341600 + sec}, more...)...)
}

// TestLink checks how robots.txt fetches are tied to crawlers: by a serve
// that credited the crawler's token, when its identity lets it count; by
// a serve from the same client (address and token, or address and
// User-Agent without a token); or by its records; never by another
// client's serve at the same address; per site; whatever the order of
// the lines.
func TestLink(t *testing.T) {
	const (
		www   = "https://www.example.com"
		ip    = "198.51.100.7"
		other = "203.0.113.1"
		gUA   = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
		gptUA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
		exUA  = "ExampleBot/1.0 (+https://crawler.example.net/bot)"
		anon  = "Mozilla/5.0 (X11; Linux x86_64)"
		chrom = "Chrome"
	)
	at := func(sec float64) time.Time {
		return time.Unix(1795341600, 0).Add(time.Duration(sec * float64(time.Second))).UTC()
	}
	verified := []any{"identity", "verified"}
	tests := []struct {
		name       string
		log        string
		filter     Filter
		row        int // in Crawlers; -1 for the first forgery
		fetched    string
		by         time.Time
		afterFetch int64
	}{
		// By token: the serve credited it (the client proved it, or no
		// method can), and the row may count it as its own.
		{"token, a verified fetch", serve3(www, "66.249.66.1", gUA, 1, []string{"Googlebot"}, "Mozilla", "Googlebot") + crawl("Googlebot", www, "66.249.66.2", 2, verified...), Filter{}, 0, "yes (token)", at(1), 1},
		{"token, an unverifiable one", serve3(www, other, exUA, 1, []string{"ExampleBot"}, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "yes (token)", at(1), 1},
		{"token, case-insensitively, read after the crawl", crawl("ExampleBot", www, ip, 2) + serve3(www, other, exUA, 3, []string{"examplebot"}, "examplebot"), Filter{}, 0, "yes (token)", at(3), 0},
		{"token, no identity recorded", serve3(www, other, exUA, 1, []string{"ExampleBot"}, "ExampleBot") + crawl("ExampleBot", www, ip, 2, "identity", nil), Filter{}, 0, "yes (token)", at(1), 1},
		// A forger's fetch as Googlebot credits no one's token: not the
		// verified Googlebot's.
		{"a forger's serve, not credited, does not link the verified crawler", serve3(www, "203.0.113.66", gUA, 1, nil, "Mozilla", "Googlebot") + crawl("Googlebot", www, "66.249.66.1", 2, verified...), Filter{}, 0, "no", time.Time{}, 0},
		{"a serve credits only the tokens it names", serve3(www, "66.249.66.1", gUA, 1, []string{"Googlebot"}, "Mozilla", "Googlebot", "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"a pending claim is not credited a token's fetch", serve3(www, "20.171.207.10", gptUA, 1, []string{"GPTBot"}, "GPTBot") + crawl("GPTBot", www, ip, 2, "identity", "pending"), Filter{}, 0, "no", time.Time{}, 0},
		{"nor an unconfirmed one", serve3(www, "20.171.207.10", gptUA, 1, []string{"GPTBot"}, "GPTBot") + crawl("GPTBot", www, ip, 2, "identity", "unconfirmed"), Filter{}, 0, "no", time.Time{}, 0},
		{"nor a forged one", serve3(www, "20.171.207.10", gptUA, 1, []string{"GPTBot"}, "GPTBot") + crawl("GPTBot", www, ip, 2, "identity", "forged"), Filter{}, -1, "no", time.Time{}, 0},
		// By client: the same address and token.
		{"client, its own serve", serve3(www, ip, exUA, 1, nil, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "yes (client)", at(1), 1},
		{"client, read after the crawl", crawl("ExampleBot", www, ip, 2) + serve(www, ip, 1, "examplebot"), Filter{}, 0, "yes (client)", at(1), 1},
		{"GPTBot's serve does not link ExampleBot at its address", serve3(www, ip, gptUA, 1, []string{"GPTBot"}, "Mozilla", "GPTBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"nor does a browser's", serve(www, ip, 1, "Mozilla", chrom) + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"its own serve from another address, not credited", serve3(www, other, exUA, 1, nil, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"a forger is linked by its own serve", serve3(www, ip, gptUA, 1, nil, "GPTBot") + crawl("GPTBot", www, ip, 2, "identity", "forged"), Filter{}, -1, "yes (client)", at(1), 1},
		{"client and token: client, the earliest time", serve3(www, other, exUA, 1, []string{"ExampleBot"}, "ExampleBot") + serve3(www, ip, exUA, 5, []string{"ExampleBot"}, "ExampleBot") + crawl("ExampleBot", www, ip, 9), Filter{}, 0, "yes (client)", at(1), 1},
		// Without a token, by address and User-Agent.
		{"no token: the same User-Agent", serve3(www, ip, anon, 1, nil, "Mozilla") + crawl("", www, ip, 2, "user_agent", anon, "identity", nil), Filter{}, 0, "yes (client)", at(1), 1},
		{"no token: another User-Agent", serve3(www, ip, anon+" Firefox/1", 1, nil, "Mozilla", "Firefox") + crawl("", www, ip, 2, "user_agent", anon, "identity", nil), Filter{}, 0, "no", time.Time{}, 0},
		{"no token: another address", serve3(www, other, anon, 1, nil, "Mozilla") + crawl("", www, ip, 2, "user_agent", anon, "identity", nil), Filter{}, 0, "no", time.Time{}, 0},
		{"no token, no User-Agent recorded", serve3(www, ip, "", 1, nil) + crawl("", www, ip, 2, "identity", nil), Filter{}, 0, "no", time.Time{}, 0},
		// Version 2 serves credit no token; a version 2 record's "ip" is
		// not a link.
		{"version 2 serve: no token credit", serve(www, other, 1, "Mozilla", "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"version 2 serve: a client link", serve(www, ip, 1, "Mozilla", "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "yes (client)", at(1), 1},
		{"the record's own ip link (version 2)", crawl("ExampleBot", www, ip, 9, "served_robots", true, "served_link", "ip", "served_at", 1795341604.5), Filter{}, 0, "no", time.Time{}, 0},
		{"the record's own client link", crawl("ExampleBot", www, ip, 9, "served_robots", true, "served_link", "client", "served_at", 1795341604.5), Filter{}, 0, "yes (client)", at(4.5), 1},
		{"the record's own token link", crawl("ExampleBot", www, ip, 9, "served_robots", true, "served_link", "token", "served_at", 1795341604.5), Filter{}, 0, "yes (token)", at(4.5), 1},
		{"the record's own token link, pending", crawl("ExampleBot", www, ip, 9, "served_robots", true, "served_link", "token", "identity", "pending"), Filter{}, 0, "no", time.Time{}, 0},
		{"the record's own link, unnamed", crawl("ExampleBot", www, ip, 9, "served_robots", true), Filter{}, 0, "no", time.Time{}, 0},
		{"served_robots false beats agent_fetched_robots", crawl("ExampleBot", www, ip, 9, "agent_fetched_robots", true), Filter{}, 0, "no", time.Time{}, 0},
		{"version 1, agent_fetched_robots", v1("ExampleBot", "deny", "agent_fetched_robots", true), Filter{}, 0, "yes (token)", time.Unix(1795341600, 5e8).UTC(), 1},
		// Per site, and the filters.
		{"another site", serve("https://blog.example.com", ip, 1, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"another scheme", serve3("http://www.example.com", other, exUA, 1, []string{"ExampleBot"}, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{}, 0, "no", time.Time{}, 0},
		{"the agent filter leaves serves alone", serve(www, ip, 1, "Mozilla", "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{Agent: "examplebot"}, 0, "yes (client)", at(1), 1},
		{"a serve a day before since counts", serve(www, ip, -86000, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{Since: at(0)}, 0, "yes (client)", at(-86000), 1},
		{"a serve over a day before since does not", serve(www, ip, -86500, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{Since: at(0)}, 0, "no", time.Time{}, 0},
		{"a serve after until does not", serve(www, ip, 5, "ExampleBot") + crawl("ExampleBot", www, ip, 2), Filter{Until: at(4)}, 0, "no", time.Time{}, 0},
		{"a serve of another host is filtered", serve("https://blog.example.com", ip, 1, "ExampleBot") + crawl("ExampleBot", "https://blog.example.com", ip, 2), Filter{Host: "www.example.com"}, -2, "", time.Time{}, 0},
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
		if got := c.Fetched(); got != tt.fetched || !c.FetchedBy.Equal(tt.by) || c.ViolationsAfterFetch != tt.afterFetch {
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
	fetch := serve("https://example.com", "198.51.100.99", 1, "Spider")
	for _, tt := range []struct {
		name string
		log  string
		want string
	}{
		{"serve read first", fetch + crawls + last, "yes (client)"},
		{"serve read last", crawls + last + fetch, "no"},
	} {
		a := New(Options{})
		if _, err := a.Read("ips.log", strings.NewReader(tt.log)); err != nil {
			t.Fatal(err)
		}
		r := a.Report()
		c := &r.Crawlers[0]
		if got := c.Fetched(); got != tt.want || c.ClientIPs != MaxClientIPs || !c.ClientIPsMore || r.Fetches.RowsPastIPs != 1 {
			t.Errorf("%s: fetched %q (want %q), %d IPs (more %v), rows past %d", tt.name, got, tt.want, c.ClientIPs, c.ClientIPsMore, r.Fetches.RowsPastIPs)
		}
	}
}

// TestClientIPs checks that a row without a product token keeps its
// clients by address and User-Agent, and counts their addresses.
func TestClientIPs(t *testing.T) {
	var log string
	for i := range 3 {
		for _, ua := range []string{"A/1", "B/1"} {
			log += crawl("", "https://example.com", fmt.Sprintf("192.0.2.%d", i), 1, "user_agent", ua, "identity", nil)
		}
	}
	a := New(Options{})
	if _, err := a.Read("clients.log", strings.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	if c := &r.Crawlers[0]; c.ClientIPs != 3 || c.ClientIPsMore || len(a.pairs) != 1 {
		t.Errorf("%d client IPs (more %v), %d rows; want 3 of 6 clients, one row", c.ClientIPs, c.ClientIPsMore, len(a.pairs))
	}
	for _, c := range a.pairs {
		if len(c.clients) != 6 {
			t.Errorf("%d clients kept, want 6", len(c.clients))
		}
	}
}

// TestFetchIndexBound checks that the serves kept stop at MaxFetchKeys:
// a key already kept still takes an earlier time, a new one is dropped
// and counted.
func TestFetchIndexBound(t *testing.T) {
	x := newFetchIndex()
	var rec rawRecord
	rec.site, rec.has = []byte("https://example.com"), hasSite
	add := func(tok string, ns int64) {
		rec.credited.items[0], rec.credited.n = []byte(tok), 1
		x.add(&rec, ns, true, 0)
	}
	for i := range MaxFetchKeys {
		add(fmt.Sprintf("bot%d", i), 10)
	}
	add("bot0", 5)
	add("latecomer", 1)
	if len(x.byToken) != MaxFetchKeys || x.lines != MaxFetchKeys+1 || x.dropped != 1 {
		t.Fatalf("%d keys, %d serves kept, %d dropped; want %d, %d, 1", len(x.byToken), x.lines, x.dropped, MaxFetchKeys, MaxFetchKeys+1)
	}
	k0, k1 := x.byToken[string(appendKey(nil, "https://example.com", "bot0"))], x.byToken[string(appendKey(nil, "https://example.com", "latecomer"))]
	if k0 == nil || k0.at != 5 || k1 != nil {
		t.Errorf("bot0 %+v (want at 5), latecomer %+v (want none)", k0, k1)
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
		log := crawls + serve("https://example.com", "192.0.2.1", tt.fetch, "Spider")
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
