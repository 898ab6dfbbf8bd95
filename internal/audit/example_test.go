package audit_test

import (
	"fmt"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// A log holds compliance records among other entries. GPTBot fetched
// robots.txt and then asked for a disallowed path twice; Applebot asked for
// a path that a robots.txt change had just disallowed (grace).
const exampleLog = `{"level":"info","ts":1795294383.2,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"example.com","uri":"/private/a?x=1","agent":"GPTBot","verdict":"deny","grace":false,"robots_hash":"088849e3edc5eed7","agent_fetched_robots":true}
{"level":"info","ts":1795294384.2,"logger":"http.log.access.log0","msg":"handled request","request":{"uri":"/private/a"}}
{"level":"info","ts":1795294385.2,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"example.com","uri":"/private/a","agent":"GPTBot","verdict":"deny","grace":false,"robots_hash":"088849e3edc5eed7","agent_fetched_robots":true}
{"level":"info","ts":1795294386.2,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"example.com","uri":"/archive/","agent":"Applebot","verdict":"deny","grace":true,"robots_hash":"5e1f0c2b7a9d3e44","agent_fetched_robots":true}
{"level":"info","ts":1795294387.2,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"example.com","uri":"/blog/","agent":"Applebot","verdict":"allow","grace":false,"robots_hash":"5e1f0c2b7a9d3e44","agent_fetched_robots":true}
`

func Example() {
	a := audit.New(audit.Options{Filter: audit.Filter{Host: "example.com"}})
	if _, err := a.Read("robots.log", strings.NewReader(exampleLog)); err != nil {
		fmt.Println(err)
		return
	}
	r := a.Report()
	fmt.Printf("%d records, %d other lines\n", r.Total.Records, r.Total.Skipped["other_logger"])
	for _, c := range r.Crawlers {
		fmt.Printf("%s: %d requests, %d violations (%d after fetching robots.txt), %d grace, rate %.0f%%\n",
			c.Agent, c.Requests, c.Violations, c.ViolationsAfterFetch, c.Grace, c.ViolationRate*100)
		for _, p := range c.TopPaths {
			fmt.Printf("  %d %s\n", p.Count, p.Path)
		}
	}
	// Output:
	// 4 records, 1 other lines
	// GPTBot: 2 requests, 2 violations (2 after fetching robots.txt), 0 grace, rate 100%
	//   2 /private/a
	// Applebot: 2 requests, 0 violations (0 after fetching robots.txt), 1 grace, rate 0%
}

// Records of version 3 from two Caddy instances. ExampleBot crawled
// /private/ on instance a; on instance b, a browser at its address had
// fetched robots.txt, and so had the real GPTBot, whose token a forger
// claimed on a; bingbot's alternate spelling of a disallowed path was
// denied only by the decoded reading.
const exampleA = `{"ts":1795341609.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":3,"site":"https://example.com","uri":"/private/a","user_agent":"ExampleBot/1.0","agent":"ExampleBot","verdict":"deny","mode":"enforce","compliance":"violation","rfc9309_verdict":"deny","google_verdict":"deny","identity":"unverified","client_ip":"198.51.100.7","served_robots":false}
{"ts":1795341610.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":3,"site":"https://example.com","uri":"/private/b","user_agent":"GPTBot/1.2","agent":"GPTBot","verdict":"deny","mode":"enforce","compliance":"violation","rfc9309_verdict":"deny","google_verdict":"deny","identity":"forged","client_ip":"203.0.113.66","served_robots":false}
{"ts":1795341611.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":3,"site":"https://example.com","uri":"/pub/..%2Fprivate/c","user_agent":"bingbot/2.0","agent":"bingbot","verdict":"deny","mode":"enforce","compliance":"protective","rfc9309_verdict":"allow","google_verdict":"allow","identity":"verified","client_ip":"157.55.39.1","served_robots":true,"served_link":"token"}
`

const exampleB = `{"ts":1795341607.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":3,"site":"https://example.com","user_agent":"GPTBot/1.2","agents":["GPTBot"],"credited_agents":["GPTBot"],"client_ip":"20.171.207.10"}
{"ts":1795341608.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":3,"site":"https://example.com","user_agent":"Mozilla/5.0 Chrome/131.0","agents":["Mozilla","Chrome"],"credited_agents":["Mozilla","Chrome"],"client_ip":"198.51.100.7"}
`

func Example_instances() {
	a := audit.New(audit.Options{})
	for name, log := range map[string]string{"a.log": exampleA, "b.log": exampleB} {
		if _, err := a.Read(name, strings.NewReader(log)); err != nil {
			fmt.Println(err)
			return
		}
	}
	r := a.Report()
	fetched := func(c audit.Crawler) string {
		if c.FetchedRobots {
			return "yes (" + c.FetchedLink + ")"
		}
		return "no"
	}
	for _, c := range r.Crawlers {
		fmt.Printf("%s (%s) at %s: %d violations, %d protective; fetched robots.txt: %s\n",
			c.Agent, c.Identity, c.Host, c.Violations, c.Protective, fetched(c))
	}
	for _, c := range r.Forgeries {
		fmt.Printf("forged %s at %s: %d requests; fetched robots.txt: %s\n", c.Agent, c.Host, c.Requests, fetched(c))
	}
	// Output:
	// ExampleBot (unverified) at https://example.com: 1 violations, 0 protective; fetched robots.txt: no
	// bingbot (verified) at https://example.com: 0 violations, 1 protective; fetched robots.txt: yes (token)
	// forged GPTBot at https://example.com: 1 requests; fetched robots.txt: no
}
