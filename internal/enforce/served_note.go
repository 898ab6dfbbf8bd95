package enforce

import (
	"net/netip"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// NoteServed notes that the client was served version of the site's
// robots.txt, whole (its octets all written, none refused), with the
// HTTP status status, at at, and returns the line that records the serve,
// ready to write. The serve counts for the product tokens of its
// User-Agent that it proved, or that no method can prove, wherever those
// crawlers ask from; for itself (its address and each token, or its
// address and User-Agent) otherwise. A version other than the one in
// force, served by the site itself (the upstream source), is a hint that
// the file changed: the store fetches it again (robotstxt.Store.Hint).
func (jd *Judgement) NoteServed(version string, status int, at time.Time) *record.Served {
	j, req := jd.judge, &jd.req
	tokens := fetchTokens(req.UserAgent)
	var credited []string
	addr, _ := netip.ParseAddr(req.ClientIP)
	for _, tok := range tokens {
		if id := j.cfg.Identity; id == nil || !id.HasMethod(tok) || id.Verify(tok, addr, req.HTTP).Outcome == verify.Verified {
			credited = append(credited, tok)
		}
	}
	if j.cfg.Served != nil {
		j.cfg.Served.Note(&Serving{Site: req.Site, ClientIP: req.ClientIP, UserAgent: req.UserAgent,
			Tokens: tokens, Credited: credited, Version: version, At: at})
	}
	if j.store != nil && j.cfg.FixedKey == "" && version != robotstxt.VersionUnavailable && req.Site != "" {
		j.store.Hint(req.Site, version)
	}
	return &record.Served{
		Site: req.Site, Host: req.Host, Method: req.Method, URI: req.URI, UserAgent: req.UserAgent,
		Agents: tokens, CreditedAgents: credited, ClientIP: req.ClientIP, RemoteIP: req.RemoteIP,
		HTTPStatus: status, RobotsHash: version,
	}
}

// fetchTokens returns the product tokens a robots.txt fetch is noted
// under: the header's own, not the generic browser words.
func fetchTokens(ua string) []string {
	toks := agent.Tokenize(ua)
	var out []string
	for i := 0; i < toks.Len() && !toks.Generic(i); i++ {
		out = append(out, toks.At(i))
	}
	return out
}
