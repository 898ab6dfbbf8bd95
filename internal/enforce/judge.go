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
	// RecordAll gives every judgement its record, not only those a
	// compliance record is due for: "caddy robots check" prints each.
	RecordAll bool
	// Instance names the instance that judges, in each record it writes,
	// so that the audit of several instances' logs tells them apart.
	Instance string
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
	j.pool.New = func() any { return &Judgement{scratch: new(scratch)} }
	return j
}

// A Judgement is the whole outcome of one request. It owns the memory the
// judgement worked in (the decision's Path and the record's lists point
// into it): call Release when done with it, and keep nothing of it after.
type Judgement struct {
	// Decision is the verdict, with why: the reason, the client's class,
	// the group, the deciding rule, the reading of the path, the
	// robots.txt version, after identity (a forged claim is judged without
	// its token) and the rewrite headers.
	Decision
	// Identity is the outcome of the client's claim, when one was checked;
	// Unproven is the product token it claimed and could not prove, which
	// the decision was made without (see IdentityPolicy), "" when none.
	Identity verify.Result
	Unproven string
	// Usage is the usage preference of an allowed request's response.
	Usage rules.Usage
	// Record is the compliance record of the judgement, ready to write
	// (package record has its schema), when one is due: a denial, or an
	// allowed request under LogAllowed, of a client the rules bind (every
	// judgement under RecordAll); nil otherwise. Evidence is what a due
	// record was judged against.
	Record   *record.Decision
	Evidence Evidence
	// Deny says the request is to be refused: enforce mode, or an
	// escalated crawler.
	Deny bool
	// Escalation is the escalation in force for the crawler, nil when
	// none; Escalated says this request's violation began one.
	Escalation *Escalation
	Escalated  bool
	// UserTriggered says the crawler is a user-triggered fetcher
	// (agent.UserTriggered): it acts for a person, its denials are
	// reported apart from crawlers', and it never escalates.
	UserTriggered bool
	// RobotsTxt says the request asks for /robots.txt, which always
	// passes: see NoteServed.
	RobotsTxt bool

	judge *Judge
	req   Request
	// q is what the decision read of req: its target, its User-Agent and
	// the claim it could not prove.
	q Query
	// now is when req arrived, read once (see clock); addr the client's
	// address, read once (see clientAddr).
	now      time.Time
	addr     netip.Addr
	addrRead bool
	// listed are the tokens an undeclared crawler's address proves, and
	// built whether the scratch's rd holds the target's readings.
	listed []string
	built  bool
	// scratch is the memory the judgement works in, kept across the
	// judgements a pooled Judgement makes: everything else is made anew
	// for each.
	scratch *scratch
}

// scratch is the room a Judgement works in: large (a Readings holds a few
// kilobytes of buffers), and overwritten before it is read, so it is kept
// from one judgement to the next rather than cleared.
type scratch struct {
	rd, alt Readings
	ev      evidenceRooms
	rec     record.Decision
}

// Judge judges req. ctx bounds the first fetch of a site's robots.txt,
// which the judgement waits for. The Judgement is the caller's until it
// calls Release; req is not kept, and not written.
func (j *Judge) Judge(ctx context.Context, req *Request) *Judgement {
	jd := j.pool.Get().(*Judgement)
	*jd = Judgement{judge: j, req: *req, scratch: jd.scratch}
	j.judge(ctx, jd)
	return jd
}

// judge makes jd's judgement of the request it holds.
func (j *Judge) judge(ctx context.Context, jd *Judgement) {
	req, sc := &jd.req, jd.scratch
	target, readable := TargetOf(req.Method, req.URL, req.URI)
	jd.q = Query{Target: target, Unreadable: !readable, UserAgent: req.UserAgent}
	q := &jd.q

	built := readable && sc.rd.Build(target)
	jd.built = built
	if built && isRobotsTxtPath(sc.rd.Path()) && !hasRewriteHeader(req.Header) {
		// Always allowed (RFC 9309 §2.2.2), whoever asks: no robots.txt
		// is needed to say so.
		jd.Allowed, jd.Reason, jd.Path, jd.RobotsTxt = true, ReasonRobotsTxt, sc.rd.Path(), true
		if j.cfg.FixedKey != "" {
			jd.Snapshot = j.snapshot(ctx, req) // a lookup: the file the handler may answer with
		}
		if j.cfg.RecordAll {
			jd.Record = jd.fillRecord()
		}
		return
	}
	j.decider.decideBuilt(j.snapshot(ctx, req), q, &jd.Decision, &sc.rd, built)
	jd.RobotsTxt = jd.Reason == ReasonRobotsTxt
	named := jd.Named
	j.identify(jd, q, &jd.Decision, &sc.rd)
	if !named && j.cfg.Undeclared {
		j.undeclared(jd)
	}
	// A client robots.txt does not bind is allowed whatever path a
	// rewrite header leads to: only those it binds, and requests for
	// /robots.txt (decided before the client is read), pay for looking.
	if jd.Allowed && (jd.Bound || jd.RobotsTxt) && hasRewriteHeader(req.Header) {
		j.judgeRewrites(jd)
	}
	if j.cfg.Escalation != EscalateOff && !jd.RobotsTxt {
		j.escalation(jd)
	}
	jd.UserTriggered = jd.Bound && userTriggered(jd)
	if j.cfg.Usage && !jd.RobotsTxt {
		jd.Usage = usageOf(&jd.Decision)
	}
	due := jd.Bound && (!jd.Allowed || j.cfg.LogAllowed)
	if due {
		j.gatherEvidence(jd)
		j.escalate(jd)
	}
	if due || j.cfg.RecordAll {
		jd.Record = jd.fillRecord()
	}
	jd.Deny = !jd.Allowed && (j.cfg.Enforce || jd.Escalation != nil)
}

// undeclared judges a client whose header named no crawler a group names
// as the crawlers its address proves, if it proves any and its header
// names none of them (see decideUndeclared); its identity is then
// verified by their range lists.
func (j *Judge) undeclared(jd *Judgement) {
	switch jd.Reason {
	case ReasonAllowListed, ReasonNoPath, ReasonRobotsTxt:
		return // the operator's own clients, and what no rule applies to
	}
	if j.cfg.Identity == nil {
		return
	}
	toks := j.cfg.Identity.ListedTokens(jd.clientAddr())
	if len(toks) == 0 {
		return
	}
	h := j.decider.readHeader(jd.q.UserAgent)
	for _, tok := range toks {
		if h.tokens.Has(tok) {
			// It declares itself: a token its address proves is its own
			// name (Googlebot, from the list that proves
			// Google-CloudVertexBot too), and it is judged as that
			// crawler, never as another of its list.
			return
		}
	}
	jd.listed = toks
	j.decider.decideUndeclared(&jd.Decision, jd.Snapshot, &jd.q, &jd.scratch.rd, jd.built, toks)
	jd.Identity = verify.Result{Outcome: verify.Verified, Method: verify.IPRanges}
}

// Release gives the Judgement's memory back for other requests.
func (jd *Judgement) Release() { jd.judge.pool.Put(jd) }

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

// clientAddr returns the client's address, parsed once per request; the
// zero Addr when it does not parse.
func (jd *Judgement) clientAddr() netip.Addr {
	if !jd.addrRead {
		jd.addr, _ = netip.ParseAddr(jd.req.ClientIP)
		jd.addrRead = true
	}
	return jd.addr
}

// keepServed keeps of served the versions the site's own answer was
// within GraceWindow before now, as the store saw it (snap knows them):
// a version a client was served that the site never answered the
// handler's own fetch with (a 400 its oversized header provoked, a
// variant made for it) is not the site's robots.txt, and says nothing of
// what the crawler was told to obey.
func keepServed(served []ServedVersion, snap *robotstxt.Snapshot, now time.Time) []ServedVersion {
	kept := served[:0]
	for _, sv := range served {
		if snap != nil && snap.Version(sv.Hash, now) != nil {
			kept = append(kept, sv)
		}
	}
	return kept
}

// clock returns when the request arrived, reading the clock once per
// request.
func (jd *Judgement) clock() time.Time {
	if jd.now.IsZero() {
		jd.now = jd.req.Now
		if jd.now.IsZero() {
			jd.now = time.Now()
		}
	}
	return jd.now
}

// gatherEvidence finds what the crawler was served, and judges a denial
// against it.
func (j *Judge) gatherEvidence(jd *Judgement) {
	req, now := &jd.req, jd.clock()
	ev, rooms := &jd.Evidence, &jd.scratch.ev
	if j.cfg.Served != nil {
		h := j.decider.readHeader(req.UserAgent)
		a := Asker{Token: h.key(jd.Token), Proven: jd.Identity.Outcome == verify.Verified,
			Addr: jd.clientAddr(), Names: h.keys, Agent: h.agent}
		ev.Served, ev.Link = j.cfg.Served.AppendLookup(rooms.served[:0], req.Site, &a, now)
		ev.Served = keepServed(ev.Served, jd.Snapshot, now)
		if len(ev.Served) == 0 {
			ev.Link = LinkNone
		}
	}
	j.decider.assess(ev, rooms, &jd.Decision, &jd.q, jd.listed, now)
}
