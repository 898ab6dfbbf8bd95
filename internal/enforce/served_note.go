package enforce

import (
	"slices"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// NoteServed notes that the client was served version of the site's
// robots.txt, whole (its octets all written, none refused), with the
// HTTP status status, at at, and returns the line that records the serve,
// ready to write. The serve counts for the client itself (its address,
// an IPv6 /64, and each of its names, or its address and User-Agent) and
// for the product tokens it proved (by its signature or reverse DNS, or
// by an address in a range list, whatever its header says) wherever
// those crawlers ask from; never for a token it only claims, which
// anyone can claim. A version other than the one in
// force, served by the site itself (the upstream source), is a hint that
// the file changed: the store fetches it again (robotstxt.Store.Hint).
func (jd *Judgement) NoteServed(version string, status int, at time.Time) *record.Served {
	j, req := jd.judge, &jd.req
	h := j.decider.readHeader(req.UserAgent)
	addr := jd.clientAddr()
	var proven, provenKeys []string
	prove := func(tok string) {
		key := h.key(tok)
		if !slices.Contains(provenKeys, key) {
			proven, provenKeys = append(proven, tok), append(provenKeys, key)
		}
	}
	if id := j.cfg.Identity; id != nil {
		for _, name := range h.names {
			if id.HasMethod(name) && id.Verify(name, addr, req.HTTP).Outcome == verify.Verified {
				prove(name)
			}
		}
		for _, tok := range id.ListedTokens(addr) { // proven by the address, whatever the header says
			prove(tok)
		}
	}
	if j.cfg.Served != nil {
		j.cfg.Served.Note(&Serving{Site: req.Site, Addr: addr, Names: h.keys, Proven: provenKeys, Agent: h.agent,
			Version: version, At: at})
	}
	if j.store != nil && j.cfg.FixedKey == "" && version != robotstxt.VersionUnavailable && req.Site != "" {
		j.store.Hint(req.Site, version)
	}
	line := &record.Served{
		Site: req.Site, Host: req.Host, Method: req.Method, URI: req.URI, UserAgent: req.UserAgent,
		Agents: h.names, CreditedAgents: proven, ClientIP: req.ClientIP, RemoteIP: req.RemoteIP,
		HTTPStatus: status, RobotsHash: version, Instance: j.cfg.Instance,
	}
	if len(h.names) > 0 {
		user := false
		for _, name := range h.names {
			user = user || agent.UserTriggered(name)
		}
		line.FetcherClass = fetcherClass(user)
	}
	return line
}
