package audit

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// Logs written with package record's own writer (Decision.Fields,
// Served.Fields), through zap's JSON encoder configured as Caddy's
// default JSON log format is: the lines a handler that fills those
// structures writes.

// recT0 is the time of the logs of these tests: 2026-11-22 10:00:00 UTC.
var recT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// recAt returns recT0 plus sec seconds.
func recAt(sec float64) time.Time {
	return recT0.Add(time.Duration(sec * float64(time.Second)))
}

var recEncoder = zapcore.NewJSONEncoder(zapcore.EncoderConfig{
	TimeKey: record.TS, LevelKey: record.Level, NameKey: record.Name, MessageKey: record.Msg,
	EncodeTime: zapcore.EpochTimeEncoder, EncodeLevel: zapcore.LowercaseLevelEncoder, EncodeDuration: zapcore.SecondsDurationEncoder,
})

// recLog gathers the lines of one log.
type recLog struct {
	t *testing.T
	b bytes.Buffer
}

func (l *recLog) write(msg string, at time.Time, fs []zapcore.Field) {
	l.t.Helper()
	buf, err := recEncoder.EncodeEntry(zapcore.Entry{Level: zapcore.InfoLevel, Time: at, LoggerName: record.Logger, Message: msg}, fs)
	if err != nil {
		l.t.Fatal(err)
	}
	l.b.Write(buf.Bytes())
	buf.Free()
}

// decision writes a compliance record at sec.
func (l *recLog) decision(sec float64, d record.Decision) {
	l.t.Helper()
	l.write(record.MsgDecision, recAt(sec), d.Fields(nil))
}

// served writes a robots.txt served line at sec.
func (l *recLog) served(sec float64, s record.Served) {
	l.t.Helper()
	l.write(record.MsgServed, recAt(sec), s.Fields(nil))
}

func (l *recLog) String() string { return l.b.String() }

// recDenial is a denial of agent (from ip, with ua) for target by the "*"
// group, judged as compliance against the versions judged, the version in
// force hash, decided by rule at line.
func recDenial(site, agent, identity, ip, ua, target, compliance, rule string, line int, hash string, judged ...string) record.Decision {
	d := record.Decision{
		Site: site, Host: strings.TrimPrefix(site, "https://"), Method: "GET", URI: target, UserAgent: ua,
		Agent: agent, BotClass: "crawler", Automation: "catalogue", Verdict: record.Deny, Mode: "enforce",
		Reason: "wildcard_group", Reading: "as_sent", GroupLine: 1, Rule: rule, RuleLine: line,
		Compliance: compliance, JudgedVersions: judged, Assessed: true,
		RFC9309Verdict: record.Deny, GoogleVerdict: record.Deny,
		RobotsHash: hash, RobotsSource: site + "/robots.txt", RemoteIP: "10.0.0.1", ClientIP: ip, Identity: identity,
	}
	if compliance == record.GraceValue {
		d.RFC9309Verdict, d.GoogleVerdict = record.Allow, record.Allow
	}
	if identity != "" {
		d.IdentityMethod = "ip_ranges"
	}
	return d
}

// recServe is a robots.txt serve of version to ip, with ua, whose tokens
// are tokens and of which credited count wherever the crawler asks from.
func recServe(site, ip, ua, version string, tokens, credited []string) record.Served {
	return record.Served{Site: site, Host: strings.TrimPrefix(site, "https://"), Method: "GET", URI: "/robots.txt", UserAgent: ua,
		Agents: tokens, CreditedAgents: credited, ClientIP: ip, RemoteIP: "10.0.0.1", HTTPStatus: 200, RobotsHash: version}
}

// mergedReport reads the logs, by name, in two passes and returns the
// report.
func mergedReport(t *testing.T, opts Options, logs ...[2]string) *Report {
	t.Helper()
	a := New(opts)
	var inputs []Input
	for _, l := range logs {
		inputs = append(inputs, Input{Name: l[0], Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(l[1])), nil }})
	}
	if err := a.ReadInputs(inputs, nil); err != nil {
		t.Fatal(err)
	}
	return a.Report()
}

// onePassReport reads the logs, by name, in one pass each.
func onePassReport(t *testing.T, opts Options, logs ...[2]string) *Report {
	t.Helper()
	a := New(opts)
	for _, l := range logs {
		if _, err := a.Read(l[0], strings.NewReader(l[1])); err != nil {
			t.Fatal(err)
		}
	}
	return a.Report()
}

// rowOf returns the row of agent (of any identity but forged) in r, among
// crawlers and user-triggered fetchers; nil when there is none.
func rowOf(r *Report, agent string) *Crawler {
	for _, rows := range [][]Crawler{r.Crawlers, r.UserTriggered} {
		for i := range rows {
			if rows[i].Agent == agent {
				return &rows[i]
			}
		}
	}
	return nil
}

// TestReplayedIsForgery checks that a replayed signature's record counts
// among the forgeries of the token it claimed, as a forged claim's does,
// and never in the agent's own row.
func TestReplayedIsForgery(t *testing.T) {
	l := &recLog{t: t}
	const site = "https://a.example"
	l.decision(1, recDenial(site, "ExampleAgent", "verified", "203.0.113.5", "ExampleAgent/1.0", "/private/a", record.Violation, "/private/", 2, "v1", "v1"))
	l.decision(2, recDenial(site, "ExampleAgent", "replayed", "198.51.100.9", "ExampleAgent/1.0", "/private/b", record.Violation, "/private/", 2, "v1", "v1"))
	r := onePassReport(t, Options{}, [2]string{"a.log", l.String()})
	if row := rowOf(r, "ExampleAgent"); row == nil || row.Requests != 1 || row.Identity != IdentityVerified {
		t.Errorf("the agent's row: %+v, want its one verified request", row)
	}
	if len(r.Forgeries) != 1 || r.Forgeries[0].Requests != 1 {
		t.Errorf("forgeries %+v, want the replay among them", r.Forgeries)
	}
}
