package audit

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// The generated logs of the benchmarks: records as the handler writes them
// (every field, in its order), from 40 agents on 6 hosts over a day, with
// one line in ten an access log entry of another logger. Paths come from
// 2,000 common ones and, one time in ten, a path seen once, so that the
// path counters fill and evict. The same seed gives the same log.
//
// Version 1 records are those of the first record schema (the log the
// audit's speed was first measured on); version 2 records add every field
// of record version 2, from 250 client IPs (more than a row keeps, so
// that links past MaxClientIPs are looked up too), with one line in fifty
// a robots.txt serve. Version 3 records are those of version 2 with the
// fields version 3 adds: two of three serves credit the crawler's token,
// a denial gives the verdicts of both readings, and identities include
// "unconfirmed".

var genAgents = func() []string {
	names := []string{"GPTBot", "ClaudeBot", "CCBot", "Googlebot", "bingbot", "Applebot", "Bytespider",
		"PerplexityBot", "AhrefsBot", "SemrushBot", "YandexBot", "Baiduspider", "DuckDuckBot", "facebookexternalhit",
		"Amazonbot", "meta-externalagent", "curl", "python-requests", "Go-http-client", "Wget"}
	for i := len(names); i < 40; i++ {
		names = append(names, fmt.Sprintf("ExampleCrawler%d", i))
	}
	return names
}()

var genHosts = []string{"www.example.com", "blog.example.com", "shop.example.com", "example.org", "docs.example.net", "localhost:8081"}

// genLog writes records of the given record version (1, 2 or 3) to w until
// at least size octets are written. With escalated (version 3), the
// records of one agent in four carry a block escalation begun at the
// start of their minute, as the handler's violators option writes it, one
// violation in five of them its beginning: some 4,000 escalations (sites,
// addresses and minutes), more than a handler's day would begin.
func genLog(w io.Writer, size int64, seed uint64, version int, escalated bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	paths := make([]string, 2000)
	for i := range paths {
		paths[i] = fmt.Sprintf("/%s/%d/page-%d.html", []string{"blog", "private", "search", "shop", "docs", "archive"}[i%6], i/6, rng.IntN(1000))
	}
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	var written int64
	var line []byte
	for i := 0; written < size; i++ {
		ts := float64(start.UnixNano())/1e9 + float64(i)*0.0137
		line = line[:0]
		switch {
		case i%10 == 9:
			line = fmt.Appendf(line, `{"level":"info","ts":%.6f,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"203.0.113.9","proto":"HTTP/1.1","method":"GET","host":"www.example.com","uri":"/index.html","headers":{"User-Agent":["Mozilla/5.0"]}},"bytes_read":0,"user_id":"","duration":0.000412,"size":5120,"status":200}`+"\n", ts)
		case version >= 2 && i%50 == 7:
			agent := genAgents[rng.IntN(len(genAgents))]
			host := genHosts[rng.IntN(len(genHosts))]
			if version == 3 {
				line = genServedV3(line, rng, ts, agent, host)
				break
			}
			line = fmt.Appendf(line, `{"level":"info","ts":%.6f,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":2,"site":"https://%s","host":%q,"uri":"/robots.txt","user_agent":"Mozilla/5.0 (compatible; %s/1.2; +https://example.com/bot)","agents":["Mozilla","compatible","%s"],"client_ip":"198.51.100.%d","remote_ip":"198.51.100.%d","robots_hash":"088849e3edc5eed%d","http_status":200}`+"\n",
				ts, host, host, agent, agent, rng.IntN(250), rng.IntN(250), rng.IntN(3))
		default:
			ai := min(rng.IntN(len(genAgents)), rng.IntN(len(genAgents)))
			agent := genAgents[ai]
			host := genHosts[rng.IntN(len(genHosts))]
			path := paths[rng.IntN(len(paths))]
			if rng.IntN(10) == 0 {
				path = "/u/" + strconv.FormatUint(rng.Uint64(), 36)
			}
			verdict, grace, compliance := "allow", false, "allowed"
			switch r := rng.IntN(100); {
			case r < 25:
				verdict, compliance = "deny", "violation"
			case r < 30:
				verdict, compliance = "deny", "protective"
			case r < 31:
				verdict, grace, compliance = "deny", true, "grace"
			}
			if version == 1 { // the calls of rng as in the first generator: the same log
				line = fmt.Appendf(line, `{"level":"info","ts":%.6f,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":%q,"method":"GET","uri":"%s?ref=%d","user_agent":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; %s/1.2; +https://example.com/bot)","agent":%q,"bot_class":"named","verdict":%q,"mode":"log","reason":"named_group","reading":"as_sent","group_line":4,"rule":"/private/","rule_line":9,"grace":%t,"robots_hash":"088849e3edc5eed%d","robots_source":"https://%s/robots.txt","remote_ip":"198.51.100.%d","agent_fetched_robots":%t,"automation":"catalogue","robots_fetched_at":%.6f}`+"\n",
					ts, host, path, rng.IntN(100), agent, agent, verdict, grace, rng.IntN(3), host, rng.IntN(250), rng.IntN(2) == 0, ts-30)
				break
			}
			if version == 3 {
				esc := ""
				if escalated && ai%4 == 0 {
					since := float64(int64(ts) / 60 * 60)
					esc = fmt.Sprintf(`,"escalation":"block","escalated_since":%.6f,"escalated_until":%.6f,"escalated_by":"/private/0/page-1.html"`, since, since+86400)
					if compliance == "violation" && i%5 == 3 {
						esc += `,"escalation_began":true`
					}
				}
				line = genDecisionV3(line, rng, ts, agent, host, path, verdict, compliance, esc)
				break
			}
			ip := rng.IntN(250)
			identity := [...]string{"verified", "verified", "unverified", "pending", "forged"}[rng.IntN(5)]
			served := rng.IntN(2) == 0
			link := [...]string{"token", "ip"}[rng.IntN(2)]
			mode := [...]string{"log", "enforce"}[rng.IntN(2)]
			line = fmt.Appendf(line, `{"level":"info","ts":%.6f,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":2,"site":"https://%s","host":%q,"method":"GET","uri":"%s?ref=%d","user_agent":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; %s/1.2; +https://example.com/bot)","agent":%q,"bot_class":"named","verdict":%q,"mode":%q,"reason":"named_group","reading":"as_sent","group_line":4,"rule":"/private/","rule_line":9,"grace":%t,"compliance":%q,"judged_versions":["088849e3edc5eed%d","5f0c1e2d3a4b5c6d"],"robots_hash":"088849e3edc5eed%d","robots_source":"https://%s/robots.txt","robots_fetched_at":%.6f,"remote_ip":"10.0.0.1","client_ip":"198.51.100.%d","agent_fetched_robots":%t,"served_robots":%t,"served_at":%.6f,"served_hash":"088849e3edc5eed7","served_link":%q,"identity":%q,"identity_method":"ip_ranges","automation":"catalogue","content_usage":"train-ai=n"}`+"\n",
				ts, host, host, path, rng.IntN(100), agent, agent, verdict, mode, grace, compliance, rng.IntN(3), rng.IntN(3), host, ts-30, ip, served && link == "token", served, ts-60, link, identity)
		}
		n, err := bw.Write(line)
		if err != nil {
			return err
		}
		written += int64(n)
	}
	return bw.Flush()
}

// genServedV3 appends a robots.txt serve of record version 3.
func genServedV3(line []byte, rng *rand.Rand, ts float64, agent, host string) []byte {
	ip := rng.IntN(250)
	credited := `"Mozilla","compatible"`
	if rng.IntN(3) > 0 { // a client that proved the token, or one no method can prove
		credited += `,"` + agent + `"`
	}
	return fmt.Appendf(line, `{"level":"info","ts":%.6f,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":3,"site":"https://%s","host":%q,"method":"GET","uri":"/robots.txt","user_agent":"Mozilla/5.0 (compatible; %s/1.2; +https://example.com/bot)","agents":["Mozilla","compatible","%s"],"credited_agents":[%s],"client_ip":"198.51.100.%d","remote_ip":"198.51.100.%d","http_status":200,"robots_hash":"088849e3edc5eed%d"}`+"\n",
		ts, host, host, agent, agent, credited, ip, ip, rng.IntN(3))
}

// genDecisionV3 appends a compliance record of record version 3, with the
// fields esc (an escalation's, or "").
func genDecisionV3(line []byte, rng *rand.Rand, ts float64, agent, host, path, verdict, compliance, esc string) []byte {
	ip := rng.IntN(250)
	identity := [...]string{"verified", "verified", "unverified", "pending", "unconfirmed", "forged"}[rng.IntN(6)]
	served := rng.IntN(2) == 0
	link := [...]string{"token", "client"}[rng.IntN(2)]
	mode := [...]string{"log", "enforce"}[rng.IntN(2)]
	verdicts := ""
	switch compliance {
	case "violation":
		verdicts = `"rfc9309_verdict":"deny","google_verdict":"deny",`
	case "grace", "protective":
		verdicts = `"rfc9309_verdict":"allow","google_verdict":"allow",`
	}
	servedFields := ""
	if served {
		servedFields = fmt.Sprintf(`"served_at":%.6f,"served_hash":"088849e3edc5eed7","served_link":%q,`, ts-60, link)
	}
	return fmt.Appendf(line, `{"level":"info","ts":%.6f,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":3,"site":"https://%s","host":%q,"method":"GET","uri":"%s?ref=%d","user_agent":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; %s/1.2; +https://example.com/bot)","agent":%q,"bot_class":"named","verdict":%q,"mode":%q,"reason":"named_group","reading":"as_sent","group_line":4,"rule":"/private/","rule_line":9,"compliance":%q,"grace":%t,"judged_versions":["088849e3edc5eed%d","5f0c1e2d3a4b5c6d"],%s"robots_hash":"088849e3edc5eed%d","robots_source":"https://%s/robots.txt","robots_fetched_at":%.6f,"remote_ip":"10.0.0.1","client_ip":"198.51.100.%d","agent_fetched_robots":%t,"served_robots":%t,%s"automation":"catalogue","content_usage":"train-ai=n","identity":%q,"identity_method":"ip_ranges"%s}`+"\n",
		ts, host, host, path, rng.IntN(100), agent, agent, verdict, mode, compliance, compliance == "grace", rng.IntN(3), verdicts, rng.IntN(3), host, ts-30, ip, served, served, servedFields, identity, esc)
}

// The -genlog flag makes TestGenLog write a generated log to a file, to
// measure the command on logs too large for the repository, e.g.:
//
//	go test -run TestGenLog ./audit/ -genlog /tmp/robots-1g.log -genlog-size 1073741824 [-genlog-version 1]
//	/usr/bin/time -v caddy robots audit /tmp/robots-1g.log
var (
	genLogPath    = flag.String("genlog", "", "write a generated log to this file (TestGenLog)")
	genLogSize    = flag.Int64("genlog-size", 1<<30, "the generated log's size in octets")
	genLogVersion = flag.Int("genlog-version", 2, "the generated log's record version, 1, 2 or 3")
)

func TestGenLog(t *testing.T) {
	if *genLogPath == "" {
		t.Skip("writes a generated log; run with -genlog FILE [-genlog-size N]")
	}
	f, err := os.Create(*genLogPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := genLog(f, *genLogSize, 1, *genLogVersion, false); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
