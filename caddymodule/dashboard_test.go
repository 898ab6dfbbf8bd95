package caddymodule

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
)

// The Grafana dashboard in examples/grafana queries the module's series by
// name. These tests hold it to the collectors the module describes, and to
// what Grafana needs to import it with a Prometheus data source of the
// operator's choosing.

// dashboardPath is the dashboard, relative to this package's folder.
const dashboardPath = "../examples/grafana/robots-enforce.json"

// dashboardMetricPrefix starts the name of every series the module exports
// (namespace caddy, subsystem robots_enforce).
const dashboardMetricPrefix = "caddy_robots_enforce_"

// dashboardTargetLabels are the labels Prometheus adds to every scraped
// series: the dashboard's job and instance variables filter on them.
var dashboardTargetLabels = []string{"job", "instance"}

// grafanaDatasource is a data source reference, {"type", "uid"}, whose uid
// may name a template variable.
type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaTarget struct {
	RefID        string             `json:"refId"`
	Expr         string             `json:"expr"`
	LegendFormat string             `json:"legendFormat"`
	Datasource   *grafanaDatasource `json:"datasource"`
}

type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	Datasource *grafanaDatasource `json:"datasource"`
	GridPos    struct{ X, Y, W, H int }
	Targets    []grafanaTarget `json:"targets"`
}

type grafanaVariable struct {
	Name       string             `json:"name"`
	Type       string             `json:"type"`
	Query      json.RawMessage    `json:"query"` // a string, or {"query": …} for query variables
	Datasource *grafanaDatasource `json:"datasource"`
}

type grafanaDashboard struct {
	ID            *int           `json:"id"`
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) *grafanaDashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatalf("reading the dashboard: %v", err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardPath, err)
	}
	return &d
}

// variableQuery is a template variable's query text, in either form.
func variableQuery(v grafanaVariable) string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var q struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &q)
	return q.Query
}

// usesDatasourceVariable reports whether ds is the Prometheus data source
// the "datasource" template variable picks.
func usesDatasourceVariable(ds *grafanaDatasource) bool {
	return ds != nil && ds.Type == "prometheus" && (ds.UID == "${datasource}" || ds.UID == "$datasource")
}

// moduleCollectors returns the module's collectors: every field of the
// value newCollectors makes that is a collector (or a slice of them). A
// collector the module registers from anywhere else must be added here.
func moduleCollectors() []prometheus.Collector {
	v := reflect.ValueOf(newCollectors()).Elem()
	var cs []prometheus.Collector
	add := func(f reflect.Value) {
		switch f.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Func:
			if f.IsNil() {
				return
			}
		}
		if c, ok := f.Interface().(prometheus.Collector); ok {
			cs = append(cs, c)
		}
	}
	for i := range v.NumField() {
		// The fields are unexported: read them through their address.
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		if f.Kind() == reflect.Slice {
			for j := range f.Len() {
				add(f.Index(j))
			}
			continue
		}
		add(f)
	}
	return cs
}

var (
	descNameRE   = regexp.MustCompile(`fqName: "([^"]*)"`)
	descLabelsRE = regexp.MustCompile(`variableLabels: \{([^}]*)\}\}$`)
)

// describedSeries returns each series name the collectors describe, with
// its variable labels. client_golang exports neither from a Desc, only its
// String form, which is parsed here.
func describedSeries(t *testing.T) map[string][]string {
	t.Helper()
	series := make(map[string][]string)
	for _, c := range moduleCollectors() {
		ch := make(chan *prometheus.Desc)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			s := d.String()
			name := descNameRE.FindStringSubmatch(s)
			if name == nil {
				t.Fatalf("cannot read the name in %s", s)
			}
			var labels []string
			if l := descLabelsRE.FindStringSubmatch(s); l != nil && l[1] != "" {
				for _, label := range strings.Split(l[1], ",") {
					// Constrained labels are written c(name).
					labels = append(labels, strings.TrimSuffix(strings.TrimPrefix(label, "c("), ")"))
				}
			}
			series[name[1]] = labels
		}
	}
	return series
}

var (
	// A metric name of the module, as it ends an identifier.
	exprMetricRE = regexp.MustCompile(`\b` + dashboardMetricPrefix + `[a-z0-9_]*[a-z0-9]\b`)
	// A selector of one of them, with its matchers.
	exprSelectorRE = regexp.MustCompile(`\b(` + dashboardMetricPrefix + `[a-z0-9_]*[a-z0-9])\s*(\{[^}]*\})?`)
	exprMatcherRE  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"`)
	exprGroupingRE = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
	legendLabelRE  = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)
)

// exprSelector is one selector of a module series in an expression.
type exprSelector struct {
	metric   string
	matchers map[string]string // label → value as written
}

func exprSelectors(expr string) []exprSelector {
	var sels []exprSelector
	for _, m := range exprSelectorRE.FindAllStringSubmatch(expr, -1) {
		s := exprSelector{metric: m[1], matchers: make(map[string]string)}
		for _, mm := range exprMatcherRE.FindAllStringSubmatch(m[2], -1) {
			s.matchers[mm[1]] = mm[2]
		}
		sels = append(sels, s)
	}
	return sels
}

// exprGrouping returns the labels of the expression's by and without
// clauses.
func exprGrouping(expr string) []string {
	var labels []string
	for _, m := range exprGroupingRE.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
	}
	return labels
}

// The extraction the other tests rely on, on expressions of the shapes the
// dashboard uses.
func TestDashboardExprParsing(t *testing.T) {
	tests := []struct {
		expr     string
		metrics  []string
		matchers []string // label=value, in selector order
		grouping []string
	}{
		{
			expr:     `sum by (verdict) (rate(caddy_robots_enforce_decisions_total{job=~"$job", instance=~"$instance"}[$__rate_interval]))`,
			metrics:  []string{"caddy_robots_enforce_decisions_total"},
			matchers: []string{"instance=$instance", "job=$job"},
			grouping: []string{"verdict"},
		},
		{
			expr:     `sum(increase(caddy_robots_enforce_denials_total{compliance="violation",job=~"a|b"}[5m])) / sum(increase(caddy_robots_enforce_denials_total[5m]))`,
			metrics:  []string{"caddy_robots_enforce_denials_total", "caddy_robots_enforce_denials_total"},
			matchers: []string{"compliance=violation", "job=a|b"},
		},
		{
			expr:     `max without (instance, list) (caddy_robots_enforce_ip_ranges_age_seconds)`,
			metrics:  []string{"caddy_robots_enforce_ip_ranges_age_seconds"},
			grouping: []string{"instance", "list"},
		},
		{expr: `up{job="caddy"}`},
	}
	for _, tt := range tests {
		var metrics, matchers []string
		for _, s := range exprSelectors(tt.expr) {
			metrics = append(metrics, s.metric)
			for l, v := range s.matchers {
				matchers = append(matchers, l+"="+v)
			}
		}
		slices.Sort(matchers)
		if got := exprMetricRE.FindAllString(tt.expr, -1); !slices.Equal(got, metrics) {
			t.Errorf("names %q and selectors %q of %s disagree", got, metrics, tt.expr)
		}
		if !slices.Equal(metrics, tt.metrics) || !slices.Equal(matchers, tt.matchers) {
			t.Errorf("exprSelectors(%s) = %q, %q; want %q, %q", tt.expr, metrics, matchers, tt.metrics, tt.matchers)
		}
		if got := exprGrouping(tt.expr); !slices.Equal(got, tt.grouping) {
			t.Errorf("exprGrouping(%s) = %q, want %q", tt.expr, got, tt.grouping)
		}
	}
}

// Every series the dashboard queries is one the module's collectors
// describe.
func TestDashboardMetricsDescribed(t *testing.T) {
	d := loadDashboard(t)
	described := describedSeries(t)
	used := make(map[string]bool)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, name := range exprMetricRE.FindAllString(tg.Expr, -1) {
				used[name] = true
			}
		}
	}
	for _, v := range d.Templating.List {
		for _, name := range exprMetricRE.FindAllString(variableQuery(v), -1) {
			used[name] = true
		}
	}
	if len(used) == 0 {
		t.Fatal("the dashboard queries none of the module's series")
	}
	var missing []string
	for name := range used {
		if _, ok := described[name]; !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		var have []string
		for name := range described {
			have = append(have, name)
		}
		slices.Sort(have)
		t.Errorf("the dashboard queries %d series that no collector of the module describes:\n\t%s\ndescribed: %s",
			len(missing), strings.Join(missing, "\n\t"), strings.Join(have, ", "))
	}
}

// Every label the dashboard filters, groups or names a legend by is one the
// series has (its own, or a target label), and every selector filters by
// the job and instance variables, so that they apply to every panel.
func TestDashboardLabels(t *testing.T) {
	d := loadDashboard(t)
	described := describedSeries(t)
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			known := slices.Clone(dashboardTargetLabels)
			complete := true // every series of the expression is described
			for _, s := range exprSelectors(tg.Expr) {
				if s.matchers["job"] != "$job" || s.matchers["instance"] != "$instance" {
					t.Errorf("panel %d (%s): %s is not filtered by job=~\"$job\" and instance=~\"$instance\"", p.ID, p.Title, s.metric)
				}
				labels, ok := described[s.metric]
				if !ok {
					complete = false // reported by TestDashboardMetricsDescribed
					continue
				}
				known = append(known, labels...)
				for l := range s.matchers {
					if !slices.Contains(labels, l) && !slices.Contains(dashboardTargetLabels, l) {
						t.Errorf("panel %d (%s): %s has no label %q (it has %q)", p.ID, p.Title, s.metric, l, labels)
					}
				}
			}
			if !complete {
				continue
			}
			grouping := exprGrouping(tg.Expr)
			for _, l := range grouping {
				if !slices.Contains(known, l) {
					t.Errorf("panel %d (%s): grouped by %q, which none of its series has", p.ID, p.Title, l)
				}
			}
			for _, m := range legendLabelRE.FindAllStringSubmatch(tg.LegendFormat, -1) {
				if !slices.Contains(grouping, m[1]) {
					t.Errorf("panel %d (%s): legend {{%s}} is not a label the query keeps (by %q)", p.ID, p.Title, m[1], grouping)
				}
			}
		}
	}
}

// The dashboard imports into Grafana (UI import or file provisioning) and
// asks for a Prometheus data source: a new dashboard (no id), a stable uid,
// a schema version with data sources as {type, uid} references, the
// datasource, job and instance variables, and panels that each query the
// chosen data source, with unique ids, in the 24-column grid, apart.
func TestDashboardImports(t *testing.T) {
	d := loadDashboard(t)
	if d.ID != nil {
		t.Errorf("id = %d, want null: an import with an id overwrites that database row", *d.ID)
	}
	if !regexp.MustCompile(`^[a-zA-Z0-9_-]{1,40}$`).MatchString(d.UID) {
		t.Errorf("uid = %q, want 1 to 40 letters, digits, - or _", d.UID)
	}
	if d.Title == "" {
		t.Error("no title")
	}
	// Schema 33 (Grafana 8.3) made data sources {type, uid} references.
	if d.SchemaVersion < 33 {
		t.Errorf("schemaVersion = %d, want at least 33", d.SchemaVersion)
	}

	vars := make(map[string]grafanaVariable)
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars["datasource"]; !ok || v.Type != "datasource" || variableQuery(v) != "prometheus" {
		t.Errorf("no datasource variable of type datasource over prometheus: %+v", v)
	}
	for _, name := range []string{"job", "instance"} {
		v, ok := vars[name]
		if !ok || v.Type != "query" || !usesDatasourceVariable(v.Datasource) || !strings.Contains(variableQuery(v), "label_values(") {
			t.Errorf("no %s variable of type query, by label_values on the chosen data source: %+v", name, v)
		}
	}
	if q := variableQuery(vars["instance"]); !strings.Contains(q, `job=~"$job"`) {
		t.Errorf("the instance variable's query %q does not follow the job variable", q)
	}

	if len(d.Panels) == 0 {
		t.Fatal("no panels")
	}
	ids := make(map[int]string)
	for i, p := range d.Panels {
		if p.ID <= 0 {
			t.Errorf("panel %q: id %d, want a positive one", p.Title, p.ID)
		}
		if other, dup := ids[p.ID]; dup {
			t.Errorf("panels %q and %q share id %d", other, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "" || p.Title == "" {
			t.Errorf("panel %d: type %q, title %q: want both", p.ID, p.Type, p.Title)
		}
		if !usesDatasourceVariable(p.Datasource) {
			t.Errorf("panel %d (%s): datasource %+v, want the datasource variable", p.ID, p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %d (%s): no targets", p.ID, p.Title)
		}
		refs := make(map[string]bool)
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %d (%s): refId %q missing or repeated", p.ID, p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if strings.TrimSpace(tg.Expr) == "" || !exprMetricRE.MatchString(tg.Expr) {
				t.Errorf("panel %d (%s): target %s queries none of the module's series: %q", p.ID, p.Title, tg.RefID, tg.Expr)
			}
			if !usesDatasourceVariable(tg.Datasource) {
				t.Errorf("panel %d (%s): target %s datasource %+v, want the datasource variable", p.ID, p.Title, tg.RefID, tg.Datasource)
			}
		}
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
			t.Errorf("panel %d (%s): gridPos %+v is outside the 24-column grid", p.ID, p.Title, g)
		}
		for _, q := range d.Panels[:i] {
			h := q.GridPos
			if g.X < h.X+h.W && h.X < g.X+g.W && g.Y < h.Y+h.H && h.Y < g.Y+g.H {
				t.Errorf("panels %d (%s) and %d (%s) overlap", q.ID, q.Title, p.ID, p.Title)
			}
		}
	}
}
