package render

import (
	_ "embed"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/words"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// The HTML report is one self-contained page: its style and its charts
// (inline SVG, drawn here, no script) are in the file, and it fetches
// nothing. html/template escapes all text that comes from the records.

//go:embed report.html
var reportHTML string

var reportTemplate = template.Must(template.New("report").Parse(reportHTML))

// Limits of the HTML charts, so that a log with thousands of crawlers
// still makes a page a browser draws at once; the tables list all.
const (
	// maxChartRows is how many crawlers the violations chart shows.
	maxChartRows = 40
	// maxTimelines is how many crawlers get a chart over time.
	maxTimelines = 40
)

// Geometry of the charts, in CSS pixels.
const (
	barLabelWidth = 400.0 // "ExampleBot (unverified) at https://www.example.com"
	// charWidth is the width a character of the charts' 12 px text takes
	// at most, in the fonts a browser picks for system-ui (digits and
	// lower case take 6 to 7 px): widths of text the SVG must hold are
	// reckoned with it, so that no label is cut.
	charWidth    = 7.5
	barWidth     = 480.0
	barRowHeight = 22.0
	barHeight    = 14.0
	barTop       = 28.0 // room for the legend

	tlWidth   = 340.0
	tlHeight  = 110.0
	tlLeft    = 36.0
	tlRight   = 8.0
	tlTop     = 8.0
	tlBottom  = 28.0
	tlBarGaps = 1.0
)

// htmlView is what the template draws.
type htmlView struct {
	R              *audit.Report
	Headline       string
	Skipped        string
	Notes          []string
	Rows           []htmlRow
	Forgeries      []htmlRow
	ForgeriesIntro string
	UserTriggered  []htmlRow
	UTIntro        string
	Detailed       []htmlRow // crawlers, user-triggered fetchers, forgeries
	// The titles of the detail tables' columns.
	AddressTitles, UATitles, RequestTitles, FetchTitles []string
	Escalations                                         []htmlEscalation
	EscalationsIntro                                    string
	Chart                                               htmlBarChart
	Timelines                                           []htmlTimeline
	MoreTL                                              int
	Width                                               string
}

type htmlRow struct {
	C                    *audit.Crawler
	Pair, Agent, Host    string
	Claimed              string
	Identity, Methods    string
	Mode, IPs            string
	Requests, Denied     string
	Grace, Violations    string
	Protective           string
	Rate, AfterFetch     string
	ViolationsText       string
	Fetched, First, Last string
	FetchedText          string // without the time
	FetchedAt            string
	Paths                []htmlPath
	Versions             []htmlVersion
	Judged               []htmlVersion
	// The row's detail.
	IdentityText  string
	Addresses     []htmlCells
	UserAgents    []htmlCells
	RequestCells  []htmlCells
	RequestsMore  string
	RequestsWhat  string
	Fetches       []htmlCells
	FetchesMore   string
	UserTriggered bool
}

// htmlCells is one row of a detail table, as text.
type htmlCells []string

// htmlEscalation is one row of the escalated crawlers' table.
type htmlEscalation struct {
	E                         *audit.Escalation
	Agent, Identity, IP, Site string
	Mode, Since, Until        string
	Denied, Violations        string
	StartedAt, StartedBy      string
}

type htmlPath struct{ Count, Path string }

type htmlVersion struct{ Hash, Count string }

type htmlBarChart struct {
	Width, Height string
	LabelX        string
	Keys          []htmlKey
	Rows          []htmlBarRow
	More          int
}

// htmlKey is one entry of a chart's legend.
type htmlKey struct{ Class, X, TextX, Label string }

type htmlBarRow struct {
	Agent, Host, Label string
	FullLabel          string // Label before fitText
	TextY, BarY, H     string
	ValueX             string
	Value              string
	Segs               []htmlRect
}

// htmlRect is one bar or bar segment; Class names what it counts.
type htmlRect struct {
	Class, X, Y, W, H, Title string
}

type htmlTimeline struct {
	Agent, Host, Pair string
	Width, Height     string
	Rects             []htmlRect
	Max               string
	AxisY, PlotBottom string
	StartLabel        string
	EndLabel          string
	EndX, MaxY        string
}

// HTML writes the report as one self-contained HTML page: a summary
// table, the forged claims, the escalated crawlers, a bar chart of denials per crawler, each
// crawler's requests over time by what they count as, its top disallowed
// paths, and the inputs read.
func HTML(w io.Writer, r *audit.Report) error {
	v := htmlView{R: r, Headline: headline(r), Skipped: skippedText(r.Total), Notes: r.Notes(), Width: widthText(r.Buckets.Width()), ForgeriesIntro: forgeriesIntro}
	for i := range r.Crawlers {
		v.Rows = append(v.Rows, htmlRowOf(&r.Crawlers[i]))
	}
	for i := range r.Forgeries {
		v.Forgeries = append(v.Forgeries, htmlRowOf(&r.Forgeries[i]))
	}
	v.UTIntro = userTriggeredIntro
	for i := range r.UserTriggered {
		v.UserTriggered = append(v.UserTriggered, htmlRowOf(&r.UserTriggered[i]))
	}
	v.Detailed = slices.Concat(v.Rows, v.UserTriggered, v.Forgeries)
	v.AddressTitles, v.UATitles = titlesOf(addressColumns), titlesOf(userAgentColumns)
	v.RequestTitles, v.FetchTitles = titlesOf(requestColumns), titlesOf(fetchColumns)
	v.EscalationsIntro = escalationsIntro
	for i := range r.Escalations {
		e := &r.Escalations[i]
		v.Escalations = append(v.Escalations, htmlEscalation{
			E: e, Agent: words.Clean(e.Agent), Identity: words.Clean(e.Identity), IP: escalationIPText(e), Site: words.Clean(e.Site),
			Mode: words.Clean(e.Mode), Since: timeOrUnknown(e.Since), Until: timeOrUnknown(e.Until),
			Denied: words.Commas(e.Denied), Violations: words.Commas(e.Violations),
			StartedAt: timeOrUnknown(e.StartedAt), StartedBy: words.Clean(e.EscalatedBy),
		})
	}
	v.Chart = barChart(r)
	for i := range r.Crawlers {
		if len(v.Timelines) == maxTimelines {
			v.MoreTL = len(r.Crawlers) - i
			break
		}
		if r.Buckets.Count > 0 {
			v.Timelines = append(v.Timelines, timelineChart(r, &r.Crawlers[i]))
		}
	}
	return reportTemplate.Execute(w, &v)
}

func htmlRowOf(c *audit.Crawler) htmlRow {
	row := htmlRow{
		C: c, Pair: c.String(), Agent: words.Clean(c.Agent), Host: words.Clean(c.Host), Claimed: c.Name(),
		Identity: words.Clean(c.Identity), Methods: strings.Join(c.IdentityMethods, ", "),
		Mode: modeText(c), IPs: ipsText(c),
		Requests: words.Commas(c.Requests), Denied: words.Commas(c.Denied), Grace: words.Commas(c.Grace),
		Violations: words.Commas(c.Violations), Protective: words.Commas(c.Protective), Rate: percent(c.ViolationRate),
		ViolationsText: words.Plural(c.Violations, "violation"),
		AfterFetch:     words.Commas(c.ViolationsAfterFetch), Fetched: fetchedDetail(c),
		FetchedText: c.Fetched(), FetchedAt: timeText(c.FetchedBy),
		First: timeText(c.FirstSeen), Last: timeText(c.LastSeen),
	}
	for _, p := range c.TopPaths {
		row.Paths = append(row.Paths, htmlPath{countText(p), words.Clean(p.Path)})
	}
	for _, ver := range c.RobotsVersions {
		row.Versions = append(row.Versions, htmlVersion{words.Clean(ver.Hash), words.Commas(ver.Count)})
	}
	for _, ver := range c.JudgedVersions {
		row.Judged = append(row.Judged, htmlVersion{words.Clean(ver.Hash), words.Commas(ver.Count)})
	}
	row.detail(c)
	return row
}

// detail fills the row's detail, as text cells in the columns of the
// table format's detail.
func (row *htmlRow) detail(c *audit.Crawler) {
	row.IdentityText = c.Proven()
	row.UserTriggered = c.FetcherClass == record.FetcherUserTriggered
	row.RequestsWhat = "Violating requests"
	if row.UserTriggered {
		row.RequestsWhat = "Disallowed requests"
	}
	row.Addresses = cellsOf(addressColumns, c.ClientAddresses)
	row.UserAgents = cellsOf(userAgentColumns, c.UserAgents)
	row.RequestCells = cellsOf(requestColumns, c.ViolatingRequests)
	if c.ViolatingRequestsMore > 0 {
		row.RequestsMore = words.Plural(c.ViolatingRequestsMore, "more violation") + " not listed (the earliest are)."
	}
	row.Fetches = cellsOf(fetchColumns, c.RobotsFetches)
	if c.RobotsFetchesMore > 0 {
		row.FetchesMore = words.Plural(int64(c.RobotsFetchesMore), "more fetch") + " not listed (the earliest are)."
	}
}

// titlesOf returns the columns' titles, as headings of an HTML table.
func titlesOf[T any](cols []column[T]) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.title
	}
	return out
}

// cellsOf writes rows as text cells in the columns given.
func cellsOf[T any](cols []column[T], rows []T) []htmlCells {
	var out []htmlCells
	for i := range rows {
		cells := make(htmlCells, len(cols))
		for j, col := range cols {
			cells[j] = col.cell(&rows[i])
		}
		out = append(out, cells)
	}
	return out
}

// barChart draws denials per crawler: one bar per crawler row with
// denials, split into violations after a known robots.txt fetch, other
// violations, protective denials and grace. Forgeries have
// no bar: they are no crawler's.
func barChart(r *audit.Report) htmlBarChart {
	var shown []*audit.Crawler
	var top int64
	more := 0
	for i := range r.Crawlers {
		c := &r.Crawlers[i]
		switch {
		case c.Denied == 0:
		case len(shown) == maxChartRows:
			more++
		default:
			shown = append(shown, c)
			top = max(top, c.Denied)
		}
	}
	ch := htmlBarChart{
		Height: px(barTop + barRowHeight*float64(len(shown)) + 4),
		LabelX: px(barLabelWidth - 8),
		More:   more,
	}
	right := barLabelWidth + barWidth // the rightmost point drawn
	x := barLabelWidth
	for _, k := range []struct{ class, label string }{
		{"after-fetch", "violations after fetching robots.txt"},
		{"before-fetch", "other violations"},
		{"protective", "protective"},
		{"grace", "grace"},
	} {
		ch.Keys = append(ch.Keys, htmlKey{Class: k.class, X: px(x), TextX: px(x + 15), Label: k.label})
		x += 15 + textWidth(k.label)
		right = max(right, x)
		x += 20
	}
	for i, c := range shown {
		y := barTop + barRowHeight*float64(i)
		row := htmlBarRow{
			Agent: c.Agent, Host: c.Host, Label: fitText(c.String(), barLabelWidth-16), FullLabel: c.String(),
			TextY: px(y + barHeight - 2), BarY: px(y), H: px(barHeight),
			Value: words.Commas(c.Violations),
		}
		x := barLabelWidth
		for _, s := range []struct {
			class string
			n     int64
			what  string
		}{
			{"bar after-fetch", c.ViolationsAfterFetch, "violations after fetching robots.txt"},
			{"bar before-fetch", c.Violations - c.ViolationsAfterFetch, "violations not known to follow a robots.txt fetch"},
			{"bar protective", c.Protective, "protective denials (not violations)"},
			{"bar grace", c.Grace, "grace denials (robots.txt changed within a day)"},
		} {
			if s.n == 0 {
				continue
			}
			wd := barWidth * float64(s.n) / float64(top)
			row.Segs = append(row.Segs, htmlRect{Class: s.class, X: px(x), Y: px(y), W: px(wd), H: px(barHeight),
				Title: c.String() + ": " + words.Commas(s.n) + " " + s.what})
			x += wd
		}
		row.ValueX = px(x + 6)
		var extra []string
		if c.Protective > 0 {
			extra = append(extra, "+"+words.Commas(c.Protective)+" protective")
		}
		if c.Grace > 0 {
			extra = append(extra, "+"+words.Commas(c.Grace)+" grace")
		}
		if len(extra) > 0 {
			row.Value += " (" + strings.Join(extra, ", ") + ")"
		}
		right = max(right, x+6+textWidth(row.Value))
		ch.Rows = append(ch.Rows, row)
	}
	ch.Width = px(right + 8)
	return ch
}

// textWidth is the most a text of the charts takes, in CSS pixels.
func textWidth(s string) float64 {
	return charWidth * float64(utf8.RuneCountInString(s))
}

// fitText cuts s to what fits in width, ending it with "…" when cut.
func fitText(s string, width float64) string {
	n := int(width / charWidth)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// timelineChart draws one crawler's records per time bucket, stacked by
// what they count as: allowed, grace, protective, violations. Each chart
// has its own scale.
func timelineChart(r *audit.Report, c *audit.Crawler) htmlTimeline {
	n := float64(r.Buckets.Count)
	plotW, plotH := tlWidth-tlLeft-tlRight, tlHeight-tlTop-tlBottom
	var top int64 = 1
	for i := range r.Buckets.Count {
		b := c.Series.At(i)
		top = max(top, b.Allowed+b.Violations+b.Grace+b.Protective)
	}
	t := htmlTimeline{
		Agent: c.Agent, Host: c.Host, Pair: c.String(),
		Width: px(tlWidth), Height: px(tlHeight), Max: words.Commas(top),
		AxisY: px(tlTop + plotH), PlotBottom: px(tlTop + plotH + 14),
		MaxY:       px(tlTop + 8),
		EndX:       px(tlWidth - tlRight),
		StartLabel: timeText(r.Buckets.Start),
		EndLabel:   timeText(r.Buckets.Start.Add(time.Duration(r.Buckets.Count) * r.Buckets.Width())),
	}
	slot := plotW / n
	bw := max(slot-tlBarGaps, 1)
	for i := range r.Buckets.Count {
		b := c.Series.At(i)
		x := tlLeft + slot*float64(i)
		y := tlTop + plotH
		start := r.Buckets.Start.Add(time.Duration(i) * r.Buckets.Width())
		for _, s := range []struct {
			class string
			n     int64
			what  string
		}{
			{"seg allowed", b.Allowed, "allowed"},
			{"seg grace", b.Grace, "grace"},
			{"seg protective", b.Protective, "protective"},
			{"seg violations", b.Violations, "violations"},
		} {
			if s.n == 0 {
				continue
			}
			h := plotH * float64(s.n) / float64(top)
			y -= h
			t.Rects = append(t.Rects, htmlRect{Class: s.class, X: px(x), Y: px(y), W: px(bw), H: px(h),
				Title: timeText(start) + ": " + words.Commas(s.n) + " " + s.what})
		}
	}
	return t
}

// px writes a coordinate with one decimal.
func px(f float64) string {
	return strconv.FormatFloat(f, 'f', 1, 64)
}
