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

// Records of version 2 from two Caddy instances. ExampleBot fetched
// robots.txt on instance b with a browser's User-Agent, then crawled
// /private/ on instance a; a forger claimed GPTBot; bingbot's alternate
// spelling of a disallowed path was denied only by the decoded reading.
const exampleV2a = `{"ts":1795341609.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":2,"site":"https://example.com","uri":"/private/a","agent":"ExampleBot","verdict":"deny","mode":"enforce","compliance":"violation","identity":"unverified","client_ip":"198.51.100.7","served_robots":false}
{"ts":1795341610.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":2,"site":"https://example.com","uri":"/private/b","agent":"GPTBot","verdict":"deny","mode":"enforce","compliance":"violation","identity":"forged","client_ip":"203.0.113.66","served_robots":false}
{"ts":1795341611.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":2,"site":"https://example.com","uri":"/pub/..%2Fprivate/c","agent":"bingbot","verdict":"deny","mode":"enforce","compliance":"protective","identity":"verified","client_ip":"157.55.39.1","served_robots":true,"served_link":"token"}
`

const exampleV2b = `{"ts":1795341608.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":2,"site":"https://example.com","agents":["Mozilla","Chrome"],"client_ip":"198.51.100.7"}
`

func Example_instances() {
	a := audit.New(audit.Options{})
	for name, log := range map[string]string{"a.log": exampleV2a, "b.log": exampleV2b} {
		if _, err := a.Read(name, strings.NewReader(log)); err != nil {
			fmt.Println(err)
			return
		}
	}
	r := a.Report()
	for _, c := range r.Crawlers {
		fmt.Printf("%s (%s) at %s: %d violations, %d protective; fetched robots.txt: %v (%s)\n",
			c.Agent, c.Identity, c.Host, c.Violations, c.Protective, c.FetchedRobots, c.FetchedLink)
	}
	for _, c := range r.Forgeries {
		fmt.Printf("forged %s at %s: %d requests\n", c.Agent, c.Host, c.Requests)
	}
	// Output:
	// ExampleBot (unverified) at https://example.com: 1 violations, 0 protective; fetched robots.txt: true (ip)
	// bingbot (verified) at https://example.com: 0 violations, 1 protective; fetched robots.txt: true (token)
	// forged GPTBot at https://example.com: 1 requests
}
