package audit

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The evidence of one crawler: what a site sends a crawler's operator to
// show that the crawler broke the site's robots.txt. It is built from a
// report of that crawler's records alone (Options for it: EvidenceOptions)
// and the versions' texts, and holds everything a reader needs to check
// each claim with nothing else at hand: who the crawler was and how that
// was proven, each robots.txt version it was served or judged against
// with the version's text and SHA-256, and each violation with the line
// of each version's text that disallows it (read from the quoted text
// with package rules, as the handler reads it); each grace denial with
// the line of the version that still allowed it, and the fetches that
// put the crawler in grace.

// EvidenceOptions returns the options of an Auditor whose report an
// Evidence is built from: the records of the product token agent only,
// with f's other bounds, each violation and grace denial listed up to
// MaxEvidenceRequests, and the texts.
func EvidenceOptions(agent string, f Filter, texts *Texts) Options {
	f.Agent = agent
	return Options{Filter: f, MaxRequests: MaxEvidenceRequests, ListGrace: true, Texts: texts}
}

// Evidence is the evidence of one crawler over a period. Its JSON form is
// the evidence's JSON twin; package render writes it for a person
// (EvidenceHTML).
type Evidence struct {
	// Agent is the product token, as asked for; FetcherClass its class
	// (record.FetcherUserTriggered: see the package documentation,
	// "Fetcher classes").
	Agent        string `json:"agent"`
	FetcherClass string `json:"fetcher_class"`
	// Since, Until and Host are the period and site asked for (zero and
	// "" for none); First and Last the times of the earliest and latest
	// record counted.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	Host  string    `json:"host,omitempty"`
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Sites are what it did on each site.
	Sites []EvidenceSite `json:"sites"`
	// Forged counts, per site, the requests that claimed its token and
	// failed the identity check: not its, and left out.
	Forged []ForgedCount `json:"forged"`
	// Inputs are the logs read; Merge what reading them together changed.
	Inputs []InputStats `json:"inputs"`
	Merge  MergeStats   `json:"merge"`
	// Notes are the report's caveats.
	Notes []string `json:"notes"`
}

// ForgedCount counts forged claims of the token on one site.
type ForgedCount struct {
	Site     string `json:"site"`
	Requests int64  `json:"requests"`
	Denied   int64  `json:"denied"`
}

// EvidenceSite is what the crawler did on one site.
type EvidenceSite struct {
	Site string `json:"site"`
	// Rows are its rows on the site, one per identity: how it was proven,
	// what it did, where from and under which User-Agents.
	Rows []EvidenceRow `json:"rows"`
	// Versions are the robots.txt versions it was served or judged
	// against, with their texts.
	Versions []EvidenceVersion `json:"versions"`
	// Violations and Grace are its violations and grace denials, each
	// with what every version it was judged against says of it.
	Violations     []EvidenceRequest `json:"violations"`
	ViolationsMore int64             `json:"violations_more,omitempty"`
	Grace          []EvidenceRequest `json:"grace"`
	GraceMore      int64             `json:"grace_more,omitempty"`
	// Fetches are the robots.txt serves linked to it.
	Fetches []Fetch `json:"fetches"`
}

// EvidenceRow is one row of the crawler on a site: an identity (see
// Crawler for each field).
type EvidenceRow struct {
	Identity             string           `json:"identity"`
	IdentityMethods      []string         `json:"identity_methods,omitempty"`
	Proven               string           `json:"proven"`
	Mode                 string           `json:"mode"`
	Requests             int64            `json:"requests"`
	Allowed              int64            `json:"allowed"`
	Violations           int64            `json:"violations"`
	Grace                int64            `json:"grace"`
	Protective           int64            `json:"protective"`
	ViolationsAfterFetch int64            `json:"violations_after_fetch"`
	FetchedLink          string           `json:"fetched_link,omitempty"`
	FetchedBy            time.Time        `json:"fetched_by,omitzero"`
	FirstSeen            time.Time        `json:"first_seen,omitzero"`
	LastSeen             time.Time        `json:"last_seen,omitzero"`
	ClientAddresses      []AddressCount   `json:"client_addresses"`
	UserAgents           []UserAgentCount `json:"user_agents"`
}

func evidenceRow(c *Crawler) EvidenceRow {
	return EvidenceRow{
		Identity: c.Identity, IdentityMethods: c.IdentityMethods, Proven: c.Proven(), Mode: c.Mode,
		Requests: c.Requests, Allowed: c.Allowed, Violations: c.Violations, Grace: c.Grace, Protective: c.Protective,
		ViolationsAfterFetch: c.ViolationsAfterFetch, FetchedLink: c.FetchedLink, FetchedBy: c.FetchedBy,
		FirstSeen: c.FirstSeen, LastSeen: c.LastSeen, ClientAddresses: c.ClientAddresses, UserAgents: c.UserAgents,
	}
}

// EvidenceVersion is a robots.txt version, with its text.
type EvidenceVersion struct {
	// Name is the version as records name it: the first 16 hex digits of
	// SHA256, or a word for no file ("unavailable", "unreachable",
	// "disallow_all").
	Name   string `json:"name"`
	SHA256 string `json:"sha256,omitempty"`
	// Text is the file, when it is UTF-8; TextBase64 is the file's exact
	// octets, whose SHA-256 is SHA256.
	Text       string `json:"text,omitempty"`
	TextBase64 string `json:"text_base64,omitempty"`
	// Missing says why there is no text: TextMissing, TextAmbiguous,
	// TextNoFile, TextNotLoaded.
	Missing string `json:"missing,omitempty"`
	// ServedFirst and ServedLast bound its serves to the crawler (zero
	// when none is linked); HeldUntil is a day after the last, until when
	// the crawler may use it (RFC 9309 §2.4).
	ServedFirst time.Time `json:"served_first,omitzero"`
	ServedLast  time.Time `json:"served_last,omitzero"`
	HeldUntil   time.Time `json:"held_until,omitzero"`
	Serves      int64     `json:"serves"`
}

// EvidenceRequest is a request, with what each version it was judged
// against says of it.
type EvidenceRequest struct {
	Request
	// Identity is the identity of its record.
	Identity string `json:"identity"`
	// Readings are what each version of JudgedVersions says of it.
	Readings []Reading `json:"readings"`
}

// Reading is what one version's text says of a request, by RFC 9309's
// reading of it for the crawler's product token.
type Reading struct {
	Version string `json:"version"`
	// Verdict is "allow", "deny", or "unknown" (no text, or the "*" group
	// applies and the record does not show that it binds the client).
	Verdict string `json:"verdict"`
	// Group is the group that applies: "User-agent: <token>" (its first
	// line GroupLine) or "User-agent: *"; "" for none.
	Group     string `json:"group,omitempty"`
	GroupLine int    `json:"group_line,omitempty"`
	// Line is the line of the deciding rule (0 when none matched), and
	// LineText that line as the file has it.
	Line     int    `json:"line,omitempty"`
	LineText string `json:"line_text,omitempty"`
	// Why says why the verdict is unknown.
	Why string `json:"why,omitempty"`
}

// NewEvidence builds the evidence of agent from r, the report of an
// Auditor made with EvidenceOptions, and the texts.
func NewEvidence(agent string, r *Report, texts *Texts) *Evidence {
	ev := &Evidence{
		Agent: agent, FetcherClass: "crawler", Since: r.Filter.Since, Until: r.Filter.Until, Host: r.Filter.Host,
		First: r.First, Last: r.Last, Sites: []EvidenceSite{}, Forged: []ForgedCount{},
		Inputs: r.Inputs, Merge: r.Merge, Notes: r.Notes(),
	}
	if ev.Notes == nil {
		ev.Notes = []string{}
	}
	bySite := map[string]*EvidenceSite{}
	rowsOf := map[string][]*Crawler{}
	var order []string
	for _, rows := range [][]Crawler{r.Crawlers, r.UserTriggered} {
		for _, c := range rows {
			if c.Agent == OtherAgent && c.Host == OtherHost {
				continue
			}
			key := strings.ToLower(c.Host)
			s := bySite[key]
			if s == nil {
				s = &EvidenceSite{Site: c.Host, Rows: []EvidenceRow{}, Violations: []EvidenceRequest{}, Grace: []EvidenceRequest{}, Fetches: []Fetch{}}
				bySite[key] = s
				order = append(order, key)
			}
			if c.FetcherClass != "" {
				ev.FetcherClass = c.FetcherClass
			}
			s.Rows = append(s.Rows, evidenceRow(&c))
			rowsOf[key] = append(rowsOf[key], &c)
		}
	}
	slices.Sort(order)
	for _, k := range order {
		ev.Sites = append(ev.Sites, newEvidenceSite(agent, bySite[k], rowsOf[k], texts))
	}
	for _, c := range r.Forgeries {
		ev.Forged = append(ev.Forged, ForgedCount{Site: c.Host, Requests: c.Requests, Denied: c.Denied})
	}
	ev.Merge.Texts = texts.stats() // with the versions the evidence quotes
	return ev
}

// newEvidenceSite fills a site's requests, fetches and versions from its
// rows.
func newEvidenceSite(agent string, s *EvidenceSite, rows []*Crawler, texts *Texts) EvidenceSite {
	for _, c := range rows {
		for _, q := range c.ViolatingRequests {
			s.Violations = append(s.Violations, EvidenceRequest{Request: q, Identity: c.Identity})
		}
		for _, q := range c.GraceRequests {
			s.Grace = append(s.Grace, EvidenceRequest{Request: q, Identity: c.Identity})
		}
		s.ViolationsMore += c.ViolatingRequestsMore
		s.GraceMore += c.GraceRequestsMore
		s.Fetches = append(s.Fetches, c.RobotsFetches...)
	}
	byTime := func(x, y EvidenceRequest) int {
		return cmp.Or(x.Time.Compare(y.Time), cmp.Compare(x.Target, y.Target), cmp.Compare(x.Instance, y.Instance))
	}
	slices.SortFunc(s.Violations, byTime)
	slices.SortFunc(s.Grace, byTime)
	slices.SortFunc(s.Fetches, func(x, y Fetch) int {
		return cmp.Or(x.First.Compare(y.First), cmp.Compare(x.Version, y.Version), cmp.Compare(x.Instance, y.Instance), cmp.Compare(x.ClientIP, y.ClientIP))
	})
	s.Fetches = slices.Compact(s.Fetches)

	versions := map[string]*EvidenceVersion{}
	version := func(name string) *EvidenceVersion {
		if name == "" {
			return nil
		}
		v := versions[name]
		if v == nil {
			v = &EvidenceVersion{Name: name}
			versions[name] = v
		}
		return v
	}
	for _, f := range s.Fetches {
		v := version(f.Version)
		if v == nil || otherVersionName(f.Version) {
			continue
		}
		v.Serves += f.Count
		if !f.First.IsZero() {
			if v.ServedFirst.IsZero() || f.First.Before(v.ServedFirst) {
				v.ServedFirst = f.First
			}
			if f.Last.After(v.ServedLast) {
				v.ServedLast = f.Last
				v.HeldUntil = f.Last.Add(fetchCacheTime)
			}
		}
	}
	for _, list := range [][]EvidenceRequest{s.Violations, s.Grace} {
		for i := range list {
			q := &list[i]
			version(q.RobotsHash)
			q.Readings = []Reading{}
			for _, name := range q.JudgedVersions {
				version(name)
				q.Readings = append(q.Readings, readingOf(texts, name, agent, &q.Request))
			}
		}
	}
	for _, v := range versions {
		v.fill(texts)
	}
	for _, v := range versions {
		s.Versions = append(s.Versions, *v)
	}
	slices.SortFunc(s.Versions, func(x, y EvidenceVersion) int {
		return cmp.Or(cmp.Compare(untimed(x.ServedFirst), untimed(y.ServedFirst)), x.ServedFirst.Compare(y.ServedFirst), cmp.Compare(x.Name, y.Name))
	})
	return *s
}

// fill sets a version's text, or why it has none.
func (v *EvidenceVersion) fill(texts *Texts) {
	vt, why := texts.Text(v.Name)
	if vt == nil {
		v.Missing = why
		return
	}
	v.SHA256 = vt.SHA256
	v.TextBase64 = base64.StdEncoding.EncodeToString(vt.Body)
	if utf8.Valid(vt.Body) {
		v.Text = string(vt.Body)
	}
}

// readingOf reads the request q under version name.
func readingOf(texts *Texts, name, agent string, q *Request) Reading {
	rd := Reading{Version: name}
	if name == VersionUnavailable {
		rd.Verdict, rd.Why = "allow", "no robots.txt: every path is allowed (RFC 9309 §2.3.1.3)"
		return rd
	}
	vt, why := texts.Text(name)
	if vt == nil {
		rd.Verdict, rd.Why = knowUnknown.String(), "no text: "+why
		return rd
	}
	j := judgeText(vt, agent, q.Target, bindsWildcard([]byte(q.Reason)))
	rd.Verdict = j.rfc.String()
	switch {
	case j.none:
		rd.Why = "no group names the token, and there is no \"*\" group"
		return rd
	case j.wildcard:
		rd.Group = "User-agent: *"
	default:
		rd.Group = "User-agent: " + agent
	}
	rd.GroupLine = j.verdict.GroupLine
	if j.verdict.Rule.Line > 0 {
		rd.Line = j.verdict.Rule.Line
		rd.LineText = vt.Line(rd.Line)
	}
	if j.rfc == knowUnknown {
		rd.Why = "the \"*\" group applies, and the record does not show that it binds this client"
	}
	return rd
}

// WriteJSON writes the evidence as indented JSON: its JSON twin.
func (ev *Evidence) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ev)
}
