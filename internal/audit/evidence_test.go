package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// evidenceOf builds the evidence of agent over the merge logs, read in two
// passes, with texts, through its JSON twin.
func evidenceOf(t *testing.T, agent string, texts *Texts) *Evidence {
	t.Helper()
	a, b := mergeLogs(t)
	r := mergedReport(t, EvidenceOptions(agent, Filter{}, texts), [2]string{"a.log", a}, [2]string{"b.log", b})
	var buf bytes.Buffer
	if err := NewEvidence(agent, r, texts).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var ev Evidence
	if err := json.Unmarshal(buf.Bytes(), &ev); err != nil {
		t.Fatalf("the JSON twin: %v", err)
	}
	return &ev
}

// checkReadings checks every claim of the evidence against the texts it
// quotes, with nothing else: each quoted text hashes to its SHA-256 and
// its name, and each reading's verdict and line are those of the quoted
// text parsed with package rules. It returns how many readings cite a
// line.
func checkReadings(t *testing.T, ev *Evidence) int {
	t.Helper()
	cited := 0
	for _, s := range ev.Sites {
		quoted := map[string]*rules.Robots{}
		bodies := map[string][]byte{}
		for _, v := range s.Versions {
			if v.TextBase64 == "" {
				continue
			}
			body, err := base64.StdEncoding.DecodeString(v.TextBase64)
			if err != nil {
				t.Fatalf("version %s: %v", v.Name, err)
			}
			sum := sha256.Sum256(body)
			if hex.EncodeToString(sum[:]) != v.SHA256 || !strings.HasPrefix(v.SHA256, v.Name) || v.Text != string(body) {
				t.Errorf("version %s: the quoted text hashes to %x, not %s", v.Name, sum, v.SHA256)
			}
			quoted[v.Name], bodies[v.Name] = rules.Parse(body), body
		}
		for _, list := range [][]EvidenceRequest{s.Violations, s.Grace} {
			for _, q := range list {
				if len(q.Readings) != len(q.JudgedVersions) {
					t.Errorf("%s: %d readings of %d versions", q.Target, len(q.Readings), len(q.JudgedVersions))
				}
				for _, rd := range q.Readings {
					r := quoted[rd.Version]
					if r == nil {
						continue
					}
					v := r.Decide(ev.Agent, q.Target)
					if want := map[bool]string{true: "allow", false: "deny"}[v.Allowed]; rd.Verdict != want {
						t.Errorf("%s under %s: %s, the quoted text says %s", q.Target, rd.Version, rd.Verdict, want)
					}
					if rd.Line != v.Rule.Line {
						t.Errorf("%s under %s: line %d, the quoted text's deciding line is %d", q.Target, rd.Version, rd.Line, v.Rule.Line)
					}
					if rd.Line > 0 {
						cited++
						lines := strings.Split(strings.ReplaceAll(string(bodies[rd.Version]), "\r\n", "\n"), "\n")
						if rd.LineText != lines[rd.Line-1] {
							t.Errorf("%s under %s: line %d quoted as %q, the text has %q", q.Target, rd.Version, rd.Line, rd.LineText, lines[rd.Line-1])
						}
					}
				}
			}
		}
	}
	return cited
}

// TestEvidence checks the evidence of a violator and of an obeying
// crawler across two instances: what it lists, and that every claim
// holds against the texts it quotes.
func TestEvidence(t *testing.T) {
	texts := NewTexts([]byte(mergeV1), []byte(mergeV2))
	v1, v2 := hashOf(mergeV1), hashOf(mergeV2)

	bad := evidenceOf(t, "BadBot", texts)
	if len(bad.Sites) != 1 {
		t.Fatalf("sites: %+v", bad.Sites)
	}
	s := bad.Sites[0]
	if len(s.Violations) != 2 || len(s.Grace) != 0 || len(s.Rows) != 1 || s.Rows[0].Identity != IdentityUnverified {
		t.Fatalf("BadBot: %d violations, %d grace, rows %+v", len(s.Violations), len(s.Grace), s.Rows)
	}
	// Served v2 through b, judged on a against both versions in force:
	// judged again against v2, which disallows /drafts/y at its line 3.
	if q := s.Violations[0]; q.Target != "/drafts/y" || q.Instance != "a.log" || len(q.Readings) != 1 ||
		q.Readings[0] != (Reading{Version: v2, Verdict: "deny", Group: "User-agent: *", GroupLine: 1, Line: 3, LineText: "Disallow: /drafts/"}) {
		t.Errorf("BadBot's /drafts/y: %+v", q)
	}
	if q := s.Violations[1]; q.Target != "/private/p?a=1" || len(q.Readings) != 2 {
		t.Errorf("BadBot's /private/p?a=1: %+v", q)
	}
	names := map[string]EvidenceVersion{}
	for _, v := range s.Versions {
		names[v.Name] = v
	}
	if v := names[v2]; v.Serves != 1 || v.ServedFirst != recAt(60) || v.HeldUntil != recAt(60+86400) || v.Text != mergeV2 {
		t.Errorf("version v2: %+v", v)
	}
	if len(s.Fetches) != 1 || s.Fetches[0].Instance != "b.log" || s.Fetches[0].ClientIP != "192.0.2.2" || s.Fetches[0].Version != v2 {
		t.Errorf("fetches: %+v", s.Fetches)
	}
	if n := checkReadings(t, bad); n != 3 {
		t.Errorf("%d readings cite a line, want 3", n)
	}

	// HonestBot's violation of b is grace: v1, which it was served, allows
	// the request by no rule.
	honest := evidenceOf(t, "HonestBot", texts)
	hs := honest.Sites[0]
	if len(hs.Violations) != 0 || len(hs.Grace) != 1 {
		t.Fatalf("HonestBot: %d violations, %d grace", len(hs.Violations), len(hs.Grace))
	}
	if q := hs.Grace[0]; q.Recorded != record.Violation || q.Compliance != record.GraceValue ||
		len(q.Readings) != 1 || q.Readings[0].Version != v1 || q.Readings[0].Verdict != "allow" || q.Readings[0].Line != 0 {
		t.Errorf("HonestBot's grace: %+v", q)
	}
	checkReadings(t, honest)

	// Without the texts, the versions are named, and say why they are not
	// quoted.
	bare := evidenceOf(t, "BadBot", nil)
	for _, v := range bare.Sites[0].Versions {
		if v.Missing != TextMissing || v.Text != "" {
			t.Errorf("without texts, version %s: %+v", v.Name, v)
		}
	}
	// BadBot's grace on a stands: nothing says that v2, all it was
	// served, disallows /drafts/y.
	if vs := bare.Sites[0].Violations; len(vs) != 1 || vs[0].Target != "/private/p?a=1" || vs[0].Readings[0].Verdict != "unknown" || vs[0].Readings[0].Why == "" {
		t.Errorf("without texts, violations: %+v", vs)
	}
}

// TestEvidenceGolden keeps the evidence of BadBot over the merge logs, as
// JSON, in testdata/audit/golden: package render draws its page from
// this file, and a change to the evidence shows here first.
func TestEvidenceGolden(t *testing.T) {
	ev := evidenceOf(t, "BadBot", NewTexts([]byte(mergeV1), []byte(mergeV2)))
	var b bytes.Buffer
	if err := ev.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "evidence-badbot.json", b.Bytes())
}
