package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// A record as the handler writes it (see the README's record schema).
const scanRecord = `{"level":"info","ts":1795294383.243052,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","host":"localhost:8081","method":"GET","uri":"/blog/post.html","user_agent":"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)","agent":"GPTBot","bot_class":"named","verdict":"deny","mode":"log","reason":"named_group","reading":"as_sent","group_line":4,"rule":"/","rule_line":9,"grace":false,"robots_hash":"088849e3edc5eed7","robots_source":"https://localhost:8081/robots.txt","remote_ip":"127.0.0.1","agent_fetched_robots":true,"automation":"catalogue","robots_fetched_at":1795294383.242947}`

// TestParseLineKinds checks how each kind of line is told apart.
func TestParseLineKinds(t *testing.T) {
	const rec = `"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny"`
	tests := []struct {
		name string
		line string
		kind SkipKind
		ok   bool
	}{
		{"record", scanRecord, 0, true},
		{"record with CRLF", scanRecord + "\r\n", 0, true},
		{"minimal record", `{` + rec + `}`, 0, true},
		{"allow", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"allow"}`, 0, true},
		{"nested values skipped", `{"a":{"b":[1,2,{"c":"}"}],"d":{}},"e":[],` + rec + `}`, 0, true},
		{"escaped key", `{"logg\u0065r":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny"}`, 0, true},
		{"escaped value", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"d\u0065ny"}`, 0, true},
		{"blank", "", SkipBlank, false},
		{"white space", " \t\r\n", SkipBlank, false},
		{"console format", "2026/11/21 20:56:01.123\tINFO\thttp.handlers.robots_enforce\trobots.txt decision\t{}", SkipNotJSON, false},
		{"array", `[` + rec + `]`, SkipNotJSON, false},
		{"NUL", "\x00{}", SkipNotJSON, false},
		{"truncated in a string", scanRecord[:100], SkipTruncated, false},
		{"truncated after a key", `{"logger":`, SkipTruncated, false},
		{"truncated in a number", `{"ts":1795294383.`, SkipTruncated, false},
		{"truncated in a literal", `{"grace":fal`, SkipTruncated, false},
		{"truncated in an escape", `{"a":"\u00`, SkipTruncated, false},
		{"truncated in a nested value", `{"a":[1,{"b":`, SkipTruncated, false},
		{"truncated before the end", `{` + rec, SkipTruncated, false},
		{"trailing garbage", `{` + rec + `}x`, SkipMalformed, false},
		{"two objects", `{` + rec + `}{}`, SkipMalformed, false},
		{"missing colon", `{"logger" "x"}`, SkipMalformed, false},
		{"trailing comma", `{` + rec + `,}`, SkipMalformed, false},
		{"bad literal", `{"grace":flase,` + rec + `}`, SkipMalformed, false},
		{"bad number", `{"ts":01,` + rec + `}`, SkipMalformed, false},
		{"bad escape", `{"a":"\x",` + rec + `}`, SkipMalformed, false},
		{"control character", "{\"a\":\"\t\"," + rec + "}", SkipMalformed, false},
		{"mismatched brackets", `{"a":[1},` + rec + `}`, SkipMalformed, false},
		{"access log", `{"level":"info","ts":1795294383.2,"logger":"http.log.access.log0","msg":"handled request","request":{"uri":"/"}}`, SkipOtherLogger, false},
		{"no logger", `{"msg":"robots.txt decision","verdict":"deny"}`, SkipOtherLogger, false},
		{"logger of another case", `{"logger":"HTTP.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny"}`, SkipOtherLogger, false},
		{"other message", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt fetch failed","host":"example.com"}`, SkipOtherMessage, false},
		{"no verdict", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision"}`, SkipInvalid, false},
		{"unknown verdict", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"maybe"}`, SkipInvalid, false},
		{"verdict not a string", `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":true}`, SkipInvalid, false},
	}
	var s scanner
	var r rawRecord
	for _, tt := range tests {
		kind, ok := s.parseLine([]byte(tt.line), &r)
		if ok != tt.ok || (!ok && kind != tt.kind) {
			t.Errorf("%s: parseLine(%q) = %v, %v; want %v, %v", tt.name, tt.line, kind, ok, tt.kind, tt.ok)
		}
	}
}

// TestParseLineFields checks the fields read from a record, and that
// fields of an unexpected type read as absent.
func TestParseLineFields(t *testing.T) {
	var s scanner
	var r rawRecord
	if _, ok := s.parseLine([]byte(scanRecord), &r); !ok {
		t.Fatal("record not read")
	}
	for _, f := range []struct{ name, got, want string }{
		{"host", string(r.host), "localhost:8081"},
		{"uri", string(r.uri), "/blog/post.html"},
		{"agent", string(r.agent), "GPTBot"},
		{"verdict", string(r.verdict), "deny"},
		{"robots_hash", string(r.hash), "088849e3edc5eed7"},
		{"ts", string(r.ts), "1795294383.243052"},
		{"user_agent", string(r.userAgent), "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"},
		{"method", string(r.reqMethod), "GET"},
		{"rule", string(r.rule), "/"},
		{"rule_line", string(r.ruleLine), "9"},
		{"reason", string(r.reason), "named_group"},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	if r.grace != triFalse || r.fetched != triTrue || r.has != hasTS|hasHost|hasURI|hasAgent|hasHash|hasGrace|hasFetched|hasMode|hasUserAgent|hasReqMethod|hasRule|hasRuleLine|hasReason {
		t.Errorf("grace %v, fetched %v, has %b", r.grace, r.fetched, r.has)
	}

	// Fields of the wrong type, and a null, are absent.
	line := `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"allow","host":5,"uri":null,"agent":["x"],"grace":"true","agent_fetched_robots":null,"ts":true}`
	if _, ok := s.parseLine([]byte(line), &r); !ok {
		t.Fatal("record not read")
	}
	if r.has != 0 || r.grace != triAbsent || r.fetched != triAbsent {
		t.Errorf("fields of the wrong type: has %b, grace %v, fetched %v; want none", r.has, r.grace, r.fetched)
	}
}

// TestClassify checks what a decision record counts as: by compliance in
// record version 2, by verdict and grace before; and that a compliance
// the audit does not know, or one that contradicts the verdict (or, for a
// violation, either reading's verdict), makes the record invalid rather
// than a guess.
func TestClassify(t *testing.T) {
	tests := []struct {
		fields string // after logger and msg
		want   outcome
		ok     bool
	}{
		{`"verdict":"allow","compliance":"allowed"`, outAllowed, true},
		{`"verdict":"deny","compliance":"violation"`, outViolation, true},
		{`"verdict":"deny","compliance":"grace","grace":true`, outGrace, true},
		{`"verdict":"deny","compliance":"protective"`, outProtective, true},
		// compliance decides, whatever grace says.
		{`"verdict":"deny","compliance":"violation","grace":true`, outViolation, true},
		{`"verdict":"deny","compliance":"protective","grace":true`, outProtective, true},
		// Version 1: no compliance.
		{`"verdict":"allow"`, outAllowed, true},
		{`"verdict":"deny"`, outViolation, true},
		{`"verdict":"deny","grace":false`, outViolation, true},
		{`"verdict":"deny","grace":true`, outGrace, true},
		{`"verdict":"allow","grace":true`, outAllowed, true},
		// A compliance of another type reads as absent.
		{`"verdict":"deny","compliance":null,"grace":true`, outGrace, true},
		{`"verdict":"deny","compliance":1`, outViolation, true},
		// Contradictions and unknown values.
		{`"verdict":"allow","compliance":"violation"`, 0, false},
		{`"verdict":"deny","compliance":"allowed"`, 0, false},
		{`"verdict":"deny","compliance":"Violation"`, 0, false},
		{`"verdict":"deny","compliance":"maybe"`, 0, false},
		{`"verdict":"deny","compliance":""`, 0, false},
		{`"compliance":"violation"`, 0, false},
		// Version 3: a violation needs both readings to deny; grace and
		// protective denials are what one of them allows.
		{`"verdict":"deny","compliance":"violation","rfc9309_verdict":"deny","google_verdict":"deny"`, outViolation, true},
		{`"verdict":"deny","compliance":"violation","rfc9309_verdict":"deny","google_verdict":"allow"`, 0, false},
		{`"verdict":"deny","compliance":"violation","rfc9309_verdict":"allow","google_verdict":"deny"`, 0, false},
		{`"verdict":"deny","compliance":"violation","google_verdict":"allow"`, 0, false},
		{`"verdict":"deny","compliance":"violation","rfc9309_verdict":""`, 0, false},
		{`"verdict":"deny","compliance":"protective","rfc9309_verdict":"deny","google_verdict":"allow"`, outProtective, true},
		{`"verdict":"deny","compliance":"grace","rfc9309_verdict":"allow","google_verdict":"allow"`, outGrace, true},
	}
	var s scanner
	var r rawRecord
	for _, tt := range tests {
		line := `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision",` + tt.fields + `}`
		kind, ok := s.parseLine([]byte(line), &r)
		if ok != tt.ok || ok && r.outcome != tt.want || !ok && kind != SkipInvalid {
			t.Errorf("parseLine(%s) = %v, %v, outcome %v; want ok %v, outcome %v", tt.fields, kind, ok, r.outcome, tt.ok, tt.want)
		}
	}
}

// TestParseLineV2 checks the fields of record version 2 and of a
// robots.txt serve, lists included.
func TestParseLineV2(t *testing.T) {
	const rec = `{"level":"info","ts":1795341611.123456,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","record_version":2,"site":"https://www.example.com","host":"www.example.com","uri":"/private/more.html","agent":"ExampleBot","bot_class":"crawler","verdict":"deny","mode":"enforce","grace":false,"compliance":"violation","judged_versions":["5f0c1e2d3a4b5c6d","9a8b\u0037c6d5e4f3a2b"],"robots_hash":"5f0c1e2d3a4b5c6d","client_ip":"198.51.100.7","served_robots":true,"served_at":1795341608.123456,"served_hash":"5f0c1e2d3a4b5c6d","served_link":"ip","identity":"unverified","identity_method":"ip_ranges","content_usage":"train-ai=n"}`
	var s scanner
	var r rawRecord
	if _, ok := s.parseLine([]byte(rec), &r); !ok || r.served {
		t.Fatalf("record not read as a decision: served %v", r.served)
	}
	for _, f := range []struct{ name, got, want string }{
		{"site", string(r.site), "https://www.example.com"},
		{"mode", string(r.mode), "enforce"},
		{"compliance", string(r.compliance), "violation"},
		{"identity", string(r.identity), "unverified"},
		{"identity_method", string(r.method), "ip_ranges"},
		{"client_ip", string(r.clientIP), "198.51.100.7"},
		{"served_link", string(r.servedLink), "ip"},
		{"served_at", string(r.servedAt), "1795341608.123456"},
		{"judged_versions", string(bytes.Join(r.judged.all(), []byte(","))), "5f0c1e2d3a4b5c6d,9a8b7c6d5e4f3a2b"},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	if r.servedRobots != triTrue || r.outcome != outViolation || r.has&(hasJudged|hasServedAt|hasClientIP|hasSite) != hasJudged|hasServedAt|hasClientIP|hasSite {
		t.Errorf("served_robots %v, outcome %v, has %b", r.servedRobots, r.outcome, r.has)
	}

	// Version 3: the tokens a serve is credited to, and its User-Agent.
	const servedV3 = `{"ts":1795341600.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":3,"site":"https://www.example.com","user_agent":"Mozilla/5.0 (compatible; Googlebot/2.1)","agents":["Mozilla","Googlebot"],"credited_agents":["Googlebot"],"client_ip":"66.249.66.1","http_status":200}`
	if _, ok := s.parseLine([]byte(servedV3), &r); !ok || !r.served {
		t.Fatalf("version 3 serve not read: served %v", r.served)
	}
	if got := string(bytes.Join(r.credited.all(), []byte(","))); got != "Googlebot" || r.has&(hasCredited|hasUserAgent) != hasCredited|hasUserAgent || string(r.userAgent) != "Mozilla/5.0 (compatible; Googlebot/2.1)" {
		t.Errorf("credited_agents %q, user_agent %q, has %b", got, r.userAgent, r.has)
	}

	const served = `{"ts":1795341608.1,"logger":"http.handlers.robots_enforce","msg":"robots.txt served","record_version":2,"site":"https://www.example.com","agents":["Mozilla","AppleWebKit",7,{"x":["y"]},"Chrome"],"client_ip":"198.51.100.7","http_status":200}`
	if _, ok := s.parseLine([]byte(served), &r); !ok || !r.served {
		t.Fatalf("serve not read: served %v", r.served)
	}
	if got := string(bytes.Join(r.agents.all(), []byte(","))); got != "Mozilla,AppleWebKit,Chrome" || r.judged.n != 0 || r.credited.n != 0 || r.has&hasCredited != 0 {
		t.Errorf("agents %q (other values skipped), judged %d, credited %d (reset)", got, r.judged.n, r.credited.n)
	}

	// Strings past maxListItems are counted, not kept; an array of the
	// wrong grammar makes the line malformed.
	many := `{"logger":"http.handlers.robots_enforce","msg":"robots.txt served","agents":[` + strings.Repeat(`"a",`, maxListItems+2) + `"z"]}`
	if _, ok := s.parseLine([]byte(many), &r); !ok || r.agents.n != maxListItems || r.agents.more != 3 {
		t.Errorf("%d agents: kept %d, more %d", maxListItems+3, r.agents.n, r.agents.more)
	}
	for _, bad := range []string{`["a",]`, `["a" "b"]`, `[,"a"]`, `["a"`, `["a",`} {
		line := `{"logger":"http.handlers.robots_enforce","msg":"robots.txt served","agents":` + bad + `}`
		if kind, ok := s.parseLine([]byte(line), &r); ok || kind != SkipMalformed && kind != SkipTruncated {
			t.Errorf("agents %s: %v, %v; want malformed or truncated", bad, kind, ok)
		}
	}
}

// TestParseLineUnescape checks JSON string escapes against encoding/json,
// surrogate pairs and lone surrogates included.
func TestParseLineUnescape(t *testing.T) {
	for _, v := range []string{
		`plain`,
		`a\"b\\c\/d\b\f\n\r\t`,
		`caf\u00e9 \u20ac`,
		`\ud83d\ude00 pair`,
		`\ud83d lone high`,
		`\ude00 lone low`,
		`\ud83d\u0041 high then not low`,
		`\ud83d\ud83d\ude00 high then pair`,
		"raw \xff invalid UTF-8",
	} {
		line := `{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny","uri":"` + v + `"}`
		var s scanner
		var r rawRecord
		if _, ok := s.parseLine([]byte(line), &r); !ok {
			t.Errorf("parseLine(%q) failed", line)
			continue
		}
		var want struct{ URI string }
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		// encoding/json replaces invalid UTF-8, which the scanner keeps.
		if got := strings.ToValidUTF8(string(r.uri), "\uFFFD"); got != want.URI {
			t.Errorf("uri %q: got %q, want %q", v, got, want.URI)
		}
	}
}

// TestParseLineDeepNesting checks that nesting is bounded, not recursive.
func TestParseLineDeepNesting(t *testing.T) {
	deep := `{"a":` + strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1) + `}`
	var s scanner
	var r rawRecord
	if kind, _ := s.parseLine([]byte(deep), &r); kind != SkipMalformed {
		t.Errorf("nesting %d: kind %v, want malformed", maxNesting+1, kind)
	}
	ok := `{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `,"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny"}`
	if _, read := s.parseLine([]byte(ok), &r); !read {
		t.Error("nesting 1000: not read")
	}
}

// FuzzParseLine checks the scanner against encoding/json: a line is read
// as a JSON object exactly when encoding/json finds it valid, and the
// fields read are the ones encoding/json decodes.
func FuzzParseLine(f *testing.F) {
	// Seeds: a full record, an access log entry, the edge cases above.
	f.Add([]byte(scanRecord))
	f.Add([]byte(`{"level":"info","ts":1795294383.2,"logger":"http.log.access.log0","msg":"handled request","request":{"uri":"/","headers":{"User-Agent":["x"]}}}`))
	f.Add([]byte(`{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny","uri":"\ud83d\ude00\u00e9","ts":"2026-11-21T08:00:00Z"}`))
	f.Add([]byte(`{"a":[1,{"b":-0.5e+3}],"c":null,"d":true}`))
	f.Add([]byte(`{"a":[1}`))
	f.Add([]byte(scanRecord[:200]))
	f.Add([]byte(`{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny","compliance":"protective","judged_versions":["a","b\u00e9",1,[]],"identity":"forged","served_robots":true,"served_at":1.5e9}`))
	f.Add([]byte(`{"logger":"http.handlers.robots_enforce","msg":"robots.txt served","site":"http://localhost:8081","agents":["Mozilla","x"],"client_ip":"::1"}`))
	f.Add([]byte(`{"logger":"http.handlers.robots_enforce","msg":"robots.txt decision","verdict":"deny","escalation":"block","escalated_since":1795680654.4566813,"escalated_until":"2026-11-26T09:30:54Z","escalated_by":"/private/\u0061","escalation_began":true}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var s scanner
		var r rawRecord
		kind, ok := s.parseLine(line, &r)
		trimmed := bytes.TrimLeft(line, " \t\r\n")
		isObject := len(trimmed) > 0 && trimmed[0] == '{'
		parsed := ok || kind >= SkipOtherLogger
		if isObject && parsed != json.Valid(line) {
			t.Fatalf("parseLine(%q) = %v, %v; json.Valid = %v", line, kind, ok, json.Valid(line))
		}
		if !ok {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("parseLine(%q) read a record that encoding/json rejects: %v", line, err)
		}
		for name, got := range map[string][]byte{"logger": r.logger, "msg": r.msg, "verdict": r.verdict, "host": r.host, "uri": r.uri, "agent": r.agent, "robots_hash": r.hash,
			"site": r.site, "mode": r.mode, "compliance": r.compliance, "identity": r.identity, "identity_method": r.method, "client_ip": r.clientIP, "served_link": r.servedLink,
			"escalation": r.escalation, "escalated_by": r.escalatedBy, "method": r.reqMethod, "rule": r.rule, "reason": r.reason,
			"instance": r.instance, "fetcher_class": r.fetcherClass} {
			want, isString := m[name].(string)
			if g := asJSON(got); isString && g != want {
				t.Fatalf("parseLine(%q): %s = %q, encoding/json %q", line, name, g, want)
			}
		}
		for name, got := range map[string]tri{"grace": r.grace, "agent_fetched_robots": r.fetched, "served_robots": r.servedRobots, "escalation_began": r.escalationBegan} {
			if want, isBool := m[name].(bool); isBool && (got == triTrue) != want {
				t.Fatalf("parseLine(%q): %s = %v, encoding/json %v", line, name, got, want)
			}
		}
		for name, got := range map[string]*strList{"judged_versions": &r.judged, "agents": &r.agents} {
			arr, isArray := m[name].([]any)
			if !isArray {
				continue
			}
			var want []string
			for _, v := range arr {
				if s, ok := v.(string); ok {
					want = append(want, s)
				}
			}
			var g []string
			for _, v := range got.all() {
				g = append(g, asJSON(v))
			}
			if len(want) > maxListItems {
				want = want[:maxListItems]
			}
			if strings.Join(g, "\x00") != strings.Join(want, "\x00") || len(g) != len(want) {
				t.Fatalf("parseLine(%q): %s = %q, encoding/json %q", line, name, g, want)
			}
		}
	})
}

// asJSON returns b as encoding/json decodes it into a string: each octet
// of invalid UTF-8 becomes U+FFFD (the scanner keeps them as they are).
func asJSON(b []byte) string {
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out.WriteRune(utf8.RuneError)
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.String()
}
