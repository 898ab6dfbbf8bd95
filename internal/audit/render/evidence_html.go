package render

import (
	_ "embed"
	"encoding/base64"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The evidence as one self-contained HTML page: no script, no style or
// resource fetched, links only to places in the page (each cited line of
// a quoted robots.txt). html/template escapes all text from the records.

//go:embed evidence.html
var evidenceHTML string

var evidenceTemplate = template.Must(template.New("evidence").Parse(evidenceHTML))

type evView struct {
	E        *audit.Evidence
	Title    string
	Period   string
	Inputs   string
	Sites    []evSiteView
	Notes    []string
	Forged   []string
	UT       bool
	Addr, UA []string
}

type evSiteView struct {
	Site       string
	Rows       []evRowView
	Versions   []evVersionView
	Violations []evRequestView
	ViolMore   string
	Grace      []evRequestView
	GraceMore  string
	Fetches    []htmlCells
	FetchTitle []string
}

type evRowView struct {
	Identity, Proven, Mode               string
	Requests, Violations, Grace, Protect string
	AfterFetch, Fetched, Seen            string
	Addresses, UserAgents                []htmlCells
}

type evVersionView struct {
	ID, Name, SHA256, Missing string
	Served, Held              string
	Lines                     []evLine
	Base64                    string
	Invalid                   bool // not UTF-8: the lines show U+FFFD
}

type evLine struct {
	ID, N, Text string
	Cited       bool
}

type evRequestView struct {
	Time, Instance, Client, Method, Target string
	Identity, Compliance, UserAgent        string
	RuleInForce                            string
	Readings                               []evReadingView
}

type evReadingView struct {
	Version, Verdict, Href, Line, Group, Why string
}

// EvidenceHTML writes the evidence as one self-contained HTML page.
func EvidenceHTML(w io.Writer, ev *audit.Evidence) error {
	v := evView{E: ev, Title: "robots.txt evidence: " + words.Clean(ev.Agent), Notes: ev.Notes, UT: ev.FetcherClass == record.FetcherUserTriggered}
	v.Period = periodText(ev)
	v.Inputs = words.Plural(int64(len(ev.Inputs)), "log") + " read: " + inputNames(ev.Inputs)
	v.Addr, v.UA = titlesOf(addressColumns), titlesOf(userAgentColumns)
	for _, f := range ev.Forged {
		v.Forged = append(v.Forged, words.Clean(f.Site)+": "+words.Plural(f.Requests, "request")+" ("+words.Commas(f.Denied)+" denied)")
	}
	for si := range ev.Sites {
		v.Sites = append(v.Sites, siteView(ev, si))
	}
	return evidenceTemplate.Execute(w, &v)
}

func periodText(ev *audit.Evidence) string {
	var parts []string
	if !ev.Since.IsZero() {
		parts = append(parts, "since "+timeText(ev.Since)+" UTC")
	}
	if !ev.Until.IsZero() {
		parts = append(parts, "until "+timeText(ev.Until)+" UTC")
	}
	if ev.Host != "" {
		parts = append(parts, "site "+words.Clean(ev.Host))
	}
	s := "Records"
	if len(parts) > 0 {
		s += " " + strings.Join(parts, ", ")
	}
	if !ev.First.IsZero() {
		s += "; the first at " + timeText(ev.First) + " UTC, the last at " + timeText(ev.Last) + " UTC"
	} else {
		s += "; none counted"
	}
	return s + "."
}

func inputNames(in []audit.InputStats) string {
	var names []string
	for _, i := range in {
		names = append(names, words.InputName(i.Name))
	}
	return strings.Join(names, ", ")
}

// siteView prepares site si of ev.
func siteView(ev *audit.Evidence, si int) evSiteView {
	s := &ev.Sites[si]
	sv := evSiteView{Site: words.Clean(s.Site), FetchTitle: titlesOf(fetchColumns)}
	ids := map[string]string{} // version name to its id
	for vi, ver := range s.Versions {
		ids[ver.Name] = "s" + strconv.Itoa(si+1) + "-v" + strconv.Itoa(vi+1)
	}
	cited := map[string]bool{} // line ids
	requests := func(list []audit.EvidenceRequest) []evRequestView {
		var out []evRequestView
		for i := range list {
			q := &list[i]
			rv := evRequestView{
				Time: timeOrUnknown(q.Time), Instance: words.Clean(q.Instance), Client: words.Clean(q.ClientIP), Method: words.Clean(q.Method),
				Target: targetText(&q.Request), Identity: words.Clean(q.Identity), Compliance: complianceText(&q.Request), UserAgent: words.Clean(q.UserAgent),
				RuleInForce: "line " + itoa(q.RuleLine) + " of " + words.Clean(q.RobotsHash) + ": " + words.Clean(q.Rule),
			}
			for _, rd := range q.Readings {
				r := evReadingView{Version: words.Clean(rd.Version), Verdict: rd.Verdict, Group: words.Clean(rd.Group), Why: rd.Why}
				if rd.Line > 0 {
					id := ids[rd.Version] + "-L" + strconv.Itoa(rd.Line)
					r.Href, r.Line = "#"+id, "line "+strconv.Itoa(rd.Line)+": "+words.Clean(rd.LineText)
					cited[id] = true
				} else if rd.Verdict == "allow" && rd.Group != "" {
					r.Line = "no rule matches"
				}
				rv.Readings = append(rv.Readings, r)
			}
			out = append(out, rv)
		}
		return out
	}
	sv.Violations, sv.Grace = requests(s.Violations), requests(s.Grace)
	if s.ViolationsMore > 0 {
		sv.ViolMore = words.Plural(s.ViolationsMore, "more violation") + " not listed: the earliest are."
	}
	if s.GraceMore > 0 {
		sv.GraceMore = words.Plural(s.GraceMore, "more grace denial") + " not listed: the earliest are."
	}
	for _, r := range s.Rows {
		fetched := noText
		if r.FetchedLink != "" {
			fetched = yesText + " (" + r.FetchedLink + ")"
			if !r.FetchedBy.IsZero() {
				fetched += ", " + timeText(r.FetchedBy)
			}
		}
		sv.Rows = append(sv.Rows, evRowView{
			Identity: words.Clean(r.Identity), Proven: r.Proven, Mode: words.Clean(r.Mode),
			Requests: words.Commas(r.Requests), Violations: words.Commas(r.Violations), Grace: words.Commas(r.Grace), Protect: words.Commas(r.Protective),
			AfterFetch: words.Commas(r.ViolationsAfterFetch), Fetched: fetched, Seen: timeText(r.FirstSeen) + " to " + timeText(r.LastSeen),
			Addresses: cellsOf(addressColumns, r.ClientAddresses), UserAgents: cellsOf(userAgentColumns, r.UserAgents),
		})
	}
	for vi := range s.Versions {
		ver := &s.Versions[vi]
		vv := evVersionView{ID: ids[ver.Name], Name: words.Clean(ver.Name), SHA256: ver.SHA256, Missing: missingText(ver), Base64: ver.TextBase64}
		if ver.Serves > 0 {
			vv.Served = "served to the crawler " + words.Plural(ver.Serves, "time")
			if !ver.ServedFirst.IsZero() {
				vv.Served += ", from " + timeText(ver.ServedFirst) + " to " + timeText(ver.ServedLast) + " UTC"
				vv.Held = timeText(ver.HeldUntil) + " UTC"
			}
		} else {
			vv.Served = "not served to the crawler through the handler (judged against as a version in force)"
		}
		if ver.TextBase64 != "" {
			text := ver.Text
			if text == "" {
				vv.Invalid = true
				text = strings.ToValidUTF8(string(mustBase64(ver.TextBase64)), "\uFFFD")
			}
			for n, line := range splitLines(text) {
				id := vv.ID + "-L" + strconv.Itoa(n+1)
				vv.Lines = append(vv.Lines, evLine{ID: id, N: strconv.Itoa(n + 1), Text: line, Cited: cited[id]})
			}
		}
		sv.Versions = append(sv.Versions, vv)
	}
	sv.Fetches = cellsOf(fetchColumns, s.Fetches)
	return sv
}

// missingText says why a version has no text.
func missingText(v *audit.EvidenceVersion) string {
	switch v.Missing {
	case "":
		return ""
	case audit.TextNoFile:
		switch v.Name {
		case audit.VersionUnavailable:
			return "No file: robots.txt answered with a client error (4xx), and no rules apply: everything is allowed (RFC 9309 §2.3.1.3)."
		default:
			return "No file: robots.txt could not be fetched, and everything was disallowed (RFC 9309 §2.3.1.4)."
		}
	case audit.TextAmbiguous:
		return "Text not quoted: two files of the storage share this version's 16 hex digits, and neither can be said to be it."
	case audit.TextNotLoaded:
		return "Text not quoted: past the texts the audit holds at once."
	}
	return "Text not found: no file of the storage directory given hashes to this version (give a copy of Caddy's storage with --storage)."
}

// mustBase64 decodes what fill encoded.
func mustBase64(s string) []byte {
	b, _ := base64.StdEncoding.DecodeString(s)
	return b
}

// splitLines splits text into lines as package rules numbers them.
func splitLines(text string) []string {
	var out []string
	for {
		i := strings.IndexAny(text, "\r\n")
		if i < 0 {
			if text != "" {
				out = append(out, text)
			}
			return out
		}
		out = append(out, text[:i])
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
}
