package enforce

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// JudgeConfig configures a Judge.
type JudgeConfig struct {
	// Policy is whom the "*" group binds, and whom nothing binds.
	Policy Policy
	// Classifier tells crawlers from other clients; nil means a new one.
	Classifier *agent.Classifier
	// Source gives the robots.txt in force.
	Source robotstxt.Source
	// FixedKey, when set, is the key of a source that serves every site
	// the same file ("file", "inline", a url source's host); otherwise
	// the source is asked for each request's Site.
	FixedKey string
	// Identity verifies claims; nil takes every claim as made.
	Identity       Identity
	IdentityPolicy IdentityPolicy
	// Served is what each crawler was served; nil knows of no serve.
	Served *Served
	// Usage finds the usage preference of allowed requests.
	Usage bool
	// LogAllowed records allowed requests of the clients the rules bind,
	// not only denials.
	LogAllowed bool
	// Enforce denies what is disallowed; otherwise it only records it
	// (log mode).
	Enforce bool
	// Undeclared judges a client whose header names no crawler a group
	// names, but whose address is in a crawler's published range list, as
	// that crawler (see decideUndeclared). It needs Identity.
	Undeclared bool
	// Violators, with Escalation, escalate a crawler once it is recorded
	// with a violation, for EscalationFor (DefaultEscalation when 0).
	Violators     *Violators
	Escalation    EscalationMode
	EscalationFor time.Duration
}

// A Judge makes the whole judgement of a request, in one call: which
// robots.txt is in force for its site, whom the rules bind and whether
// they may, whether the client is the crawler it claims to be, what the
// headers that redirect some origins would make it read, the usage
// preference of the response, and, for a record, what the crawler was
// served and whether a denial is evidence against it. The handler and
// "caddy robots check" both judge through it; nothing else orders these
// steps. It is safe for concurrent use.
type Judge struct {
	cfg     JudgeConfig
	decider *Decider
	store   *robotstxt.Store // Source, when it keeps a file per site
	mode    string
	pool    sync.Pool // of *Judgement
}

// NewJudge returns a Judge for cfg.
func NewJudge(cfg JudgeConfig) *Judge {
	j := &Judge{cfg: cfg, decider: NewDecider(cfg.Policy, cfg.Classifier), mode: "log"}
	j.store, _ = cfg.Source.(*robotstxt.Store)
	if cfg.Enforce {
		j.mode = "enforce"
	}
	j.pool.New = func() any { return new(Judgement) }
	return j
}

// A Judgement is the whole outcome of one request. It owns the memory the
// judgement worked in (the decision's Path points into it): call Release
// when done with it, and keep nothing of it after.
type Judgement struct {
	// Decision is the verdict, with why: the reason, the client's class,
	// the group, the deciding rule, the reading of the path, the
	// robots.txt version, after identity (a forged claim is judged without
	// its token) and the rewrite headers.
	Decision
	// Identity is the outcome of the client's claim, when one was checked.
	Identity verify.Result
	// Usage is the usage preference of an allowed request's response.
	Usage rules.Usage
	// Record says a compliance record is due (a denial, or an allowed
	// request under LogAllowed, of a client the rules bind); Evidence is
	// then what it was judged against.
	Record   bool
	Evidence Evidence
	// Deny says the request is to be refused: enforce mode, or an
	// escalated crawler.
	Deny bool
	// Escalation is the escalation in force for the crawler, nil when
	// none; Escalated says this request's violation began one.
	Escalation *Escalation
	Escalated  bool
	// RobotsTxt says the request asks for /robots.txt, which always
	// passes: see NoteServed.
	RobotsTxt bool

	req     Request
	judge   *Judge
	rd, alt Readings
	rec     record.Decision // see RecordContent
	// listed are the tokens an undeclared crawler's address proves, and
	// built whether rd holds the target's readings.
	listed []string
	built  bool
}

// Judge judges req. ctx bounds the first fetch of a site's robots.txt,
// which the judgement waits for. The Judgement is the caller's until it
// calls Release; req is not kept.
func (j *Judge) Judge(ctx context.Context, req *Request) *Judgement {
	jd := j.NewJudgement()
	jd.req = *req
	return j.JudgeIn(ctx, jd)
}

// NewJudgement returns a Judgement whose Request (see Judgement.Request)
// the caller writes, then judges with JudgeIn: the request is gathered
// where it is judged, not on the caller's stack and then copied.
func (j *Judge) NewJudgement() *Judgement {
	jd := j.pool.Get().(*Judgement)
	jd.judge = j
	return jd
}

// JudgeIn judges the Request jd holds, as Judge does, and returns jd.
func (j *Judge) JudgeIn(ctx context.Context, jd *Judgement) *Judgement {
	jd.Decision, jd.Identity, jd.Usage = Decision{}, verify.Result{}, rules.Usage{}
	jd.Evidence.reset()
	jd.Record, jd.Deny, jd.RobotsTxt, jd.Escalation, jd.Escalated, jd.listed = false, false, false, nil, false, nil
	req := &jd.req
	req.Forged = ""

	built := !req.Unreadable && jd.rd.Build(req.Target)
	jd.built = built
	if built && isRobotsTxtPath(jd.rd.Path()) && !hasRewriteHeader(req.Header) {
		// Always allowed (RFC 9309 §2.2.2), whoever asks: no robots.txt
		// is needed to say so.
		jd.Allowed, jd.Reason, jd.Path, jd.RobotsTxt = true, ReasonRobotsTxt, jd.rd.Path(), true
		if j.cfg.FixedKey != "" {
			jd.Snapshot = j.snapshot(ctx, req) // a lookup: the file the handler may answer with
		}
		return jd
	}
	j.decider.decideBuilt(j.snapshot(ctx, req), req, &jd.Decision, &jd.rd, built)
	jd.RobotsTxt = jd.Reason == ReasonRobotsTxt
	named := jd.Named
	j.identify(jd, req, &jd.Decision, &jd.rd)
	if !named && j.cfg.Undeclared {
		j.undeclared(jd, req)
	}
	// A client robots.txt does not bind is allowed whatever path a
	// rewrite header leads to: only those it binds, and requests for
	// /robots.txt (decided before the client is read), pay for looking.
	if jd.Allowed && (jd.Bound || jd.RobotsTxt) && hasRewriteHeader(req.Header) {
		j.judgeRewrites(jd, req)
	}
	if j.cfg.Escalation != EscalateOff && jd.Bound && !jd.RobotsTxt {
		j.escalation(jd, req)
	}
	if j.cfg.Usage && !jd.RobotsTxt {
		jd.Usage = usageOf(&jd.Decision)
	}
	if jd.Bound && (!jd.Allowed || j.cfg.LogAllowed) {
		jd.Record = true
		j.gatherEvidence(jd)
		j.escalate(jd, req)
	}
	jd.Deny = !jd.Allowed && (j.cfg.Enforce || jd.Escalation != nil)
	return jd
}

// undeclared judges a client whose header named no crawler a group names
// as the crawlers its address proves, if it proves any (see
// decideUndeclared); its identity is then verified by their range lists.
func (j *Judge) undeclared(jd *Judgement, req *Request) {
	switch jd.Reason {
	case ReasonAllowListed, ReasonNoPath, ReasonRobotsTxt:
		return // the operator's own clients, and what no rule applies to
	}
	if j.cfg.Identity == nil {
		return
	}
	addr, _ := netip.ParseAddr(req.ClientIP)
	toks := j.cfg.Identity.ListedTokens(addr)
	if len(toks) == 0 {
		return
	}
	jd.listed = toks
	j.decider.decideUndeclared(&jd.Decision, jd.Snapshot, req, &jd.rd, jd.built, toks)
	jd.Identity = verify.Result{Outcome: verify.Verified, Method: verify.IPRanges}
}

// Release gives the Judgement's memory back for other requests. What it
// held is overwritten by the next judgement, not cleared here: clearing a
// struct of pointers costs a write barrier per pointer while the
// collector runs, on every request, and the pool lets go of what it holds
// at the collector's second cycle anyway.
func (jd *Judgement) Release() { jd.judge.pool.Put(jd) }

// Request returns the request judged, as the Judgement holds it.
func (jd *Judgement) Request() *Request { return &jd.req }

// Mode returns "enforce" or "log".
func (j *Judge) Mode() string { return j.mode }

// snapshot returns the robots.txt in force for req's site.
func (j *Judge) snapshot(ctx context.Context, req *Request) *robotstxt.Snapshot {
	switch {
	case j.cfg.FixedKey != "":
		return j.cfg.Source.Snapshot(ctx, j.cfg.FixedKey)
	case j.store != nil:
		return j.store.SnapshotWith(ctx, req.Site, req.Via)
	}
	return j.cfg.Source.Snapshot(ctx, req.Site)
}

// gatherEvidence finds what the crawler was served, and judges a denial
// against it.
func (j *Judge) gatherEvidence(jd *Judgement) {
	req := &jd.req
	now := j.now(req)
	if j.cfg.Served != nil {
		a := Asker{Token: jd.Token, Credited: jd.credited(), ClientIP: req.ClientIP, UserAgent: req.UserAgent}
		ev := &jd.Evidence
		ev.Served, ev.Link = j.cfg.Served.AppendLookup(ev.served[:0], req.Site, &a, now)
	}
	j.decider.assess(&jd.Evidence, &jd.Decision, req, jd.listed, now)
}

// NoteServed notes that the client was served version of the site's
// robots.txt, whole (its octets all written, none refused), at at: for
// the product tokens of its User-Agent that it proved, or that no method
// can prove, wherever those crawlers ask from; for itself (its address
// and each token, or its address and User-Agent) otherwise. It returns
// the tokens and those credited, for the line of the serve.
func (jd *Judgement) NoteServed(version string, at time.Time) (tokens, credited []string) {
	j, req := jd.judge, &jd.req
	tokens = fetchTokens(req.UserAgent)
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
	return tokens, credited
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
