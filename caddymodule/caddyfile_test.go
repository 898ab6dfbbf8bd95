package caddymodule

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unitHandlerDiff lists the exported fields of got that differ from want,
// Source compared by value, one line each.
func unitHandlerDiff(got, want *Handler) []string {
	var diffs []string
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range gv.NumField() {
		f := gv.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if f.Name == "Source" {
			gs, ws := got.Source, want.Source
			if (gs == nil) != (ws == nil) || gs != nil && *gs != *ws {
				diffs = append(diffs, fmt.Sprintf("Source = %s, want %s", unitSourceString(gs), unitSourceString(ws)))
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			diffs = append(diffs, fmt.Sprintf("%s = %#v, want %#v", f.Name, g, w))
		}
	}
	return diffs
}

func unitSourceString(s *Source) string {
	if s == nil {
		return "nil"
	}
	return fmt.Sprintf("%+v", *s)
}

func TestUnmarshalCaddyfile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		input string
		want  Handler
	}{
		{
			name:  "bare",
			input: `robots_enforce`,
			want:  Handler{},
		},
		{
			name:  "empty block",
			input: "robots_enforce {\n}",
			want:  Handler{},
		},
		{
			name:  "mode as argument",
			input: `robots_enforce log`,
			want:  Handler{Mode: "log"},
		},
		{
			name:  "mode as argument with a block",
			input: "robots_enforce enforce {\n\tstatus 451\n}",
			want:  Handler{Mode: "enforce", Status: 451},
		},
		{
			name:  "mode as subdirective",
			input: "robots_enforce {\n\tmode log\n}",
			want:  Handler{Mode: "log"},
		},
		{
			name:  "source upstream",
			input: "robots_enforce {\n\tsource upstream\n}",
			want:  Handler{Source: &Source{Kind: "upstream"}},
		},
		{
			name:  "source file",
			input: "robots_enforce {\n\tsource file ../testdata/demo/robots.txt\n}",
			want:  Handler{Source: &Source{Kind: "file", Path: "../testdata/demo/robots.txt"}},
		},
		{
			name:  "source url",
			input: "robots_enforce {\n\tsource url https://cdn.example.com/robots.txt\n}",
			want:  Handler{Source: &Source{Kind: "url", URL: "https://cdn.example.com/robots.txt"}},
		},
		{
			name:  "source inline quoted, newline added",
			input: "robots_enforce {\n\tsource inline \"User-agent: *\nDisallow: /private/\"\n}",
			want:  Handler{Source: &Source{Kind: "inline", Text: "User-agent: *\nDisallow: /private/\n"}},
		},
		{
			name:  "source inline quoted, newline kept",
			input: "robots_enforce {\n\tsource inline \"User-agent: *\nDisallow: /\n\"\n}",
			want:  Handler{Source: &Source{Kind: "inline", Text: "User-agent: *\nDisallow: /\n"}},
		},
		{
			name: "source inline heredoc",
			input: `robots_enforce {
	source inline <<EOF
		User-agent: GPTBot
		Disallow: /

		User-agent: *
		Allow: /
		EOF
}`,
			want: Handler{Source: &Source{Kind: "inline", Text: "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"}},
		},
		{
			name:  "new hosts",
			input: "robots_enforce {\n\tnew_hosts 20 per 1m\n}",
			want:  Handler{NewHosts: &NewHosts{Count: 20, Per: caddy.Duration(time.Minute)}},
		},
		{
			name:  "status",
			input: "robots_enforce {\n\tstatus 429\n}",
			want:  Handler{Status: 429},
		},
		{
			name:  "body",
			input: "robots_enforce {\n\tbody \"Crawling this path is disallowed by robots.txt\"\n}",
			want:  Handler{Body: "Crawling this path is disallowed by robots.txt"},
		},
		{
			name:  "wildcard",
			input: "robots_enforce {\n\twildcard all\n}",
			want:  Handler{Wildcard: "all"},
		},
		{
			name:  "unreachable",
			input: "robots_enforce {\n\tunreachable allow\n}",
			want:  Handler{Unreachable: "allow"},
		},
		{
			name:  "refresh",
			input: "robots_enforce {\n\trefresh 6h\n}",
			want:  Handler{Refresh: caddy.Duration(6 * time.Hour)},
		},
		{
			name:  "refresh in days",
			input: "robots_enforce {\n\trefresh 1d\n}",
			want:  Handler{Refresh: caddy.Duration(24 * time.Hour)},
		},
		{
			name:  "max_size KiB",
			input: "robots_enforce {\n\tmax_size 500KiB\n}",
			want:  Handler{MaxSize: 500 << 10},
		},
		{
			name:  "max_size MiB",
			input: "robots_enforce {\n\tmax_size 1MiB\n}",
			want:  Handler{MaxSize: 1 << 20},
		},
		{
			name:  "max_size octets",
			input: "robots_enforce {\n\tmax_size 512000\n}",
			want:  Handler{MaxSize: 512000},
		},
		{
			name:  "fetch_timeout",
			input: "robots_enforce {\n\tfetch_timeout 2.5s\n}",
			want:  Handler{FetchTimeout: caddy.Duration(2500 * time.Millisecond)},
		},
		{
			name:  "max_hosts",
			input: "robots_enforce {\n\tmax_hosts 64\n}",
			want:  Handler{MaxHosts: 64},
		},
		{
			name:  "max_memory MiB",
			input: "robots_enforce {\n\tmax_memory 256MiB\n}",
			want:  Handler{MaxMemory: 256 << 20},
		},
		{
			name:  "max_memory GiB",
			input: "robots_enforce {\n\tmax_memory 1GiB\n}",
			want:  Handler{MaxMemory: 1 << 30},
		},
		{
			name:  "allow_agents, one line",
			input: "robots_enforce {\n\tallow_agents UptimeRobot my-monitor\n}",
			want:  Handler{AllowAgents: []string{"UptimeRobot", "my-monitor"}},
		},
		{
			name:  "allow_agents, repeated",
			input: "robots_enforce {\n\tallow_agents UptimeRobot\n\tallow_agents my-monitor other_check\n}",
			want:  Handler{AllowAgents: []string{"UptimeRobot", "my-monitor", "other_check"}},
		},
		{
			name: "verify ip_ranges and reverse_dns, repeated",
			input: `robots_enforce {
	verify {
		ip_ranges Googlebot https://lists.example/googlebot.json
		reverse_dns Googlebot googlebot.com
		ip_ranges Bingbot https://lists.example/bingbot.json
		reverse_dns Googlebot google.com
		ip_ranges Googlebot https://lists.example/more-googlebot.json
	}
}`,
			want: Handler{Verify: &Verify{
				IPRanges: []IPRanges{
					{Token: "Googlebot", Source: "https://lists.example/googlebot.json"},
					{Token: "Bingbot", Source: "https://lists.example/bingbot.json"},
					{Token: "Googlebot", Source: "https://lists.example/more-googlebot.json"},
				},
				ReverseDNS: map[string][]string{"Googlebot": {"googlebot.com", "google.com"}},
			}},
		},
		{
			name: "verify web_bot_auth, a block of agents",
			input: `robots_enforce {
	verify {
		web_bot_auth {
			agent ExampleBot https://agent.example keys ../testdata/wba/example-agent-jwks.json
			agent ExampleBot-News https://Agent.Example/
			agent Google-Agent https://agent.bot.goog
		}
	}
}`,
			want: Handler{Verify: &Verify{SignatureAgents: []SignatureAgent{
				{Token: "ExampleBot", Origin: "https://agent.example", Keys: "../testdata/wba/example-agent-jwks.json"},
				{Token: "ExampleBot-News", Origin: "https://Agent.Example/"},
				{Token: "Google-Agent", Origin: "https://agent.bot.goog"},
			}}},
		},
		{
			name:  "verify web_bot_auth on, with a block",
			input: "robots_enforce {\n\tverify {\n\t\tweb_bot_auth on {\n\t\t\tagent ExampleBot https://agent.example\n\t\t}\n\t}\n}",
			want: Handler{Verify: &Verify{WebBotAuth: "on",
				SignatureAgents: []SignatureAgent{{Token: "ExampleBot", Origin: "https://agent.example"}}}},
		},
		{
			name:  "log_allowed",
			input: "robots_enforce {\n\tlog_allowed\n}",
			want:  Handler{LogAllowed: true},
		},
		{
			name: "every option",
			input: `robots_enforce log {
	source url http://robots.internal/robots.txt
	status 451
	body "Disallowed by robots.txt"
	wildcard none
	unreachable allow
	refresh 12h
	max_size 1MiB
	fetch_timeout 3s
	max_hosts 200
	allow_agents Pingdom
	log_allowed
}`,
			want: Handler{
				Mode:         "log",
				Source:       &Source{Kind: "url", URL: "http://robots.internal/robots.txt"},
				Status:       451,
				Body:         "Disallowed by robots.txt",
				Wildcard:     "none",
				Unreachable:  "allow",
				Refresh:      caddy.Duration(12 * time.Hour),
				MaxSize:      1 << 20,
				FetchTimeout: caddy.Duration(3 * time.Second),
				MaxHosts:     200,
				AllowAgents:  []string{"Pingdom"},
				LogAllowed:   true,
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got Handler
			if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input)); err != nil {
				t.Fatalf("UnmarshalCaddyfile(%q) = %v, want no error", tt.input, err)
			}
			for _, d := range unitHandlerDiff(&got, &tt.want) {
				t.Errorf("UnmarshalCaddyfile(%q): %s", tt.input, d)
			}
		})
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		input string
		want  string // a substring of the error
	}{
		{"extra argument", `robots_enforce log extra`, "robots_enforce log extra: want at most one argument, the mode (enforce or log), then a block, at Testfile:1"},
		{"missing mode", "robots_enforce {\n\tmode\n}", "mode: want one value, written mode enforce|log, at Testfile:2"},
		{"extra mode", "robots_enforce {\n\tmode log enforce\n}", "mode log enforce: want one value, written mode enforce|log, at Testfile:2"},
		{"missing status", "robots_enforce {\n\tstatus\n}", "status: want one value, written status <code>"},
		{"extra status", "robots_enforce {\n\tstatus 403 404\n}", "status 403 404: want one value, written status <code>"},
		{"missing body", "robots_enforce {\n\tbody\n}", `body: want one value, written body <text>, the text quoted when it has spaces, as in body "Disallowed by robots.txt"`},
		{"unquoted body", "robots_enforce {\n\tbody go away\n}", `body go away: want one value, written body <text>, the text quoted when it has spaces`},
		{"missing wildcard", "robots_enforce {\n\twildcard\n}", "wildcard: want one value, written wildcard crawlers|automated|all|none"},
		{"missing unreachable", "robots_enforce {\n\tunreachable\n}", "unreachable: want one value, written unreachable deny|allow"},
		{"missing refresh", "robots_enforce {\n\trefresh\n}", "refresh: want one value, written refresh <duration>, in one word, as in refresh 12h or refresh 1d"},
		{"missing max_size", "robots_enforce {\n\tmax_size\n}", "max_size: want one value, written max_size <size>"},
		{"missing fetch_timeout", "robots_enforce {\n\tfetch_timeout\n}", "fetch_timeout: want one value, written fetch_timeout <duration>"},
		{"missing max_hosts", "robots_enforce {\n\tmax_hosts\n}", "max_hosts: want one value, written max_hosts <count>"},
		{"missing allow_agents", "robots_enforce {\n\tallow_agents\n}", "allow_agents: want one or more product tokens, as in allow_agents UptimeRobot MyMonitor"},
		{"log_allowed with an argument", "robots_enforce {\n\tlog_allowed yes\n}", "log_allowed yes: log_allowed takes no value; give log_allowed alone to record allowed requests too, or leave it out"},
		{"refresh in two words", "robots_enforce {\n\trefresh 1 day\n}", "refresh 1 day: want one value, written refresh <duration>, in one word, as in refresh 12h or refresh 1d, at Testfile:2"},
		{"missing source", "robots_enforce {\n\tsource\n}", "source: want upstream, file <path>, url <url> or inline <text>"},
		{"unrecognized subdirective", "robots_enforce {\n\tstatus 403\n\tdeny_status 404\n}", `unrecognized subdirective "deny_status", at Testfile:3`},
		{"bad status", "robots_enforce {\n\tstatus forbidden\n}", `status "forbidden": not a number, at Testfile:2`},
		{"bad refresh", "robots_enforce {\n\trefresh soon\n}", `refresh "soon": `},
		{"bad fetch_timeout", "robots_enforce {\n\tfetch_timeout 10\n}", `fetch_timeout "10": `},
		{"bad max_size", "robots_enforce {\n\tmax_size large\n}", `max_size "large": not a size such as 500KiB or 1MiB`},
		{"negative max_size", "robots_enforce {\n\tmax_size -1MiB\n}", `max_size "-1MiB": not a size such as 500KiB or 1MiB`},
		{"max_size past 2 GiB", "robots_enforce {\n\tmax_size 3GiB\n}", "max_size 3221225472: want at most 16777216 octets (16 MiB)"},
		{"max_size past 1 TiB", "robots_enforce {\n\tmax_size 2TiB\n}", `max_size "2TiB": not a size such as 500KiB or 1MiB`},
		{"bad max_hosts", "robots_enforce {\n\tmax_hosts lots\n}", `max_hosts "lots": not a number`},
		{"source upstream with a path", "robots_enforce {\n\tsource upstream /robots.txt\n}", "source upstream /robots.txt: the upstream source takes no value"},
		{"source file without a path", "robots_enforce {\n\tsource file\n}", "source file: want one value, written source file <path>"},
		{"source file with two paths", "robots_enforce {\n\tsource file /a /b\n}", "source file /a /b: want one value, written source file <path>"},
		{"missing max_memory", "robots_enforce {\n\tmax_memory\n}", "max_memory: want one value, written max_memory <size>"},
		{"bad max_memory", "robots_enforce {\n\tmax_memory plenty\n}", `max_memory "plenty": not a size such as 256MiB or 1GiB`},
		{"max_memory past 1 TiB", "robots_enforce {\n\tmax_memory 2TiB\n}", `max_memory "2TiB": not a size such as 256MiB or 1GiB`},
		{"max_memory under the minimum", "robots_enforce {\n\tmax_memory 16MiB\n}", "max_memory 16777216: want between 67108864 (64 MiB"},
		{"two sources", "robots_enforce {\n\tsource upstream\n\tsource inline x\n}", "source given twice: first at Testfile:2; give it once, at Testfile:3"},
		{"a missing source file", "robots_enforce {\n\tsource file no/such/robots.txt\n}", "source file: stat no/such/robots.txt"},
		{"contradicting modes", "robots_enforce log {\n\tmode enforce\n}", "mode given twice: first at Testfile:1, as the directive's argument; give it once, at Testfile:2"},
		{"agreeing modes", "robots_enforce log {\n\tmode log\n}", "mode given twice: first at Testfile:1, as the directive's argument"},
		{"max_hosts 0", "robots_enforce {\n\tmax_hosts 0\n}", "max_hosts 0: want at least 1"},
		{"bad mode", "robots_enforce {\n\tmode block\n}", `mode "block": want enforce or log`},
		{"bad short mode", "robots_enforce block", `mode "block": want enforce or log`},
		{"bad wildcard", "robots_enforce {\n\twildcard everyone\n}", `wildcard policy "everyone"`},
		{"bad unreachable", "robots_enforce {\n\tunreachable maybe\n}", `unreachable "maybe": want deny or allow`},
		{"status 200", "robots_enforce {\n\tstatus 200\n}", "status 200: want an error status"},
		{"max_size under the minimum", "robots_enforce {\n\tmax_size 100KiB\n}", "max_size 102400: want at least 512000"},
		{"refresh past a day", "robots_enforce {\n\trefresh 48h\n}", "refresh 48h0m0s: want between"},
		{"source url not a URL", "robots_enforce {\n\tsource url notaurl\n}", `source url "notaurl": want an http or https URL`},
		{"invalid allow_agents", "robots_enforce {\n\tallow_agents my/monitor\n}", `allow_agents "my/monitor": a product token`},
		{"new_hosts without per", "robots_enforce {\n\tnew_hosts 20\n}", "new_hosts: want <count> per <duration>"},
		{"new_hosts zero", "robots_enforce {\n\tnew_hosts 0 per 1s\n}", `new_hosts "0": want a count of at least 1`},
		{"new_hosts bad period", "robots_enforce {\n\tnew_hosts 5 per soon\n}", `new_hosts per "soon": want a positive duration`},
		{"source url without a URL", "robots_enforce {\n\tsource url\n}", "source url: want one value, written source url <url>"},
		{"source inline without text", "robots_enforce {\n\tsource inline\n}", "source inline: want one value, written source inline <text>, best a heredoc"},
		{"source inline unquoted", "robots_enforce {\n\tsource inline User-agent: *\n}", "source inline User-agent: *: want one value, written source inline <text>, best a heredoc"},
		{"unknown source kind", "robots_enforce {\n\tsource ftp ftp://example.com/robots.txt\n}", `source "ftp": want upstream, file, url or inline, at Testfile:2`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var h Handler
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if err == nil {
				t.Fatalf("UnmarshalCaddyfile(%q) = nil, want an error containing %q", tt.input, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("UnmarshalCaddyfile(%q) = %q, want it to contain %q", tt.input, err, tt.want)
			}
			// Every error names the file and line, for caddy adapt.
			if !strings.Contains(err.Error(), ", at Testfile:") {
				t.Errorf("UnmarshalCaddyfile(%q) = %q, want the file and line in it", tt.input, err)
			}
		})
	}
}

// TestUnmarshalCaddyfileGivenTwice checks that a single-valued subdirective
// given twice is an error naming the second line and the first, rather
// than a silent choice of the last, whether the two values agree or not;
// and that the table names every single-valued subdirective there is.
func TestUnmarshalCaddyfileGivenTwice(t *testing.T) {
	// Each row gives a subdirective twice (first, second) with a line
	// between, so the first is on line 2 and the second on line 4; inside
	// verify, on lines 3 and 5.
	topLevel := [][2]string{
		{"mode log", "mode enforce"},
		{"source upstream", "source file ../testdata/demo/robots.txt"},
		{"status 451", "status 451"},
		{`body "no"`, `body "go away"`},
		{"wildcard all", "wildcard none"},
		{"unreachable allow", "unreachable deny"},
		{"refresh 6h", "refresh 12h"},
		{"max_size 1MiB", "max_size 2MiB"},
		{"fetch_timeout 3s", "fetch_timeout 5s"},
		{"max_hosts 64", "max_hosts 128"},
		{"max_memory 256MiB", "max_memory 1GiB"},
		{"new_hosts 10 per 1s", "new_hosts 20 per 1m"},
		{"log_allowed", "log_allowed"},
		{"content_usage off", "content_usage override"},
		{"serve_robots origin", "serve_robots enforced"},
		{"verify off", "verify {\n\t\tbuiltin off\n\t}"},
		{"violators enforce", "violators block for 1h"},
		{"origin case_sensitive", "origin case_insensitive"},
		{"distributed", "distributed {\n\t\tread_interval 1s\n\t}"},
	}
	inVerify := [][2]string{
		{"builtin on", "builtin off"},
		{"web_bot_auth on", "web_bot_auth off"},
		{"web_bot_auth off", "web_bot_auth {\n\t\t\tagent ExampleBot https://agent.example\n\t\t}"},
		{"forged deny", "forged ignore"},
		{"pending claimed", "pending wildcard"},
		{"resolver 127.0.0.1:53", "resolver 127.0.0.1:5353"},
		{"undeclared bind", "undeclared ignore"},
	}
	check := func(input, want string) {
		t.Helper()
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("UnmarshalCaddyfile(%q) = %v, want an error containing %q", input, err, want)
		}
	}
	for _, row := range topLevel {
		name, _, _ := strings.Cut(row[0], " ")
		check(fmt.Sprintf("robots_enforce {\n\t%s\n\tallow_agents Pingdom\n\t%s\n}", row[0], row[1]),
			name+" given twice: first at Testfile:2; give it once, at Testfile:4")
	}
	for _, row := range inVerify {
		name, _, _ := strings.Cut(row[0], " ")
		check(fmt.Sprintf("robots_enforce {\n\tverify {\n\t\t%s\n\t\tip_ranges Googlebot ../testdata/demo/googlebot.json\n\t\t%s\n\t}\n}", row[0], row[1]),
			"verify "+name+" given twice: first at Testfile:3; give it once, at Testfile:5")
	}

	// Every JSON field is a subdirective of the same name; all but the
	// multi-valued ones must be in the table above.
	listed := func(rows [][2]string, name string) bool {
		return slices.ContainsFunc(rows, func(r [2]string) bool { return strings.HasPrefix(r[0]+" ", name+" ") })
	}
	for typ, rows := range map[reflect.Type][][2]string{reflect.TypeFor[Handler](): topLevel, reflect.TypeFor[Verify](): inVerify} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch name {
			case "", "-", "allow_agents", "ip_ranges", "reverse_dns", "off", // not an option, multi-valued, or verify off
				"signature_agents": // web_bot_auth's agent lines, which add

				continue
			}
			if !listed(rows, name) {
				t.Errorf("%s.%s (%s): not in the given-twice table; is it single-valued?", typ.Name(), f.Name, name)
			}
		}
	}
}
