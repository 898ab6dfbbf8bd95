package caddymodule

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// The web_bot_auth block of verify: its agent lines, their errors, each
// with its line, and the JSON they mirror. The block's well-formed cases
// are in TestUnmarshalCaddyfile, its being given twice in
// TestUnmarshalCaddyfileGivenTwice.

func TestWebBotAuthCaddyfileErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		input string
		want  string // a substring of the error
	}{
		{"agent: not a product token", unitAgents("agent Example/Bot https://agent.example"), "verify web_bot_auth agent Example/Bot https://agent.example: not a product token (letters, '-' and '_'), at Testfile:4"},
		{"agent: an http origin", unitAgents("agent ExampleBot http://agent.example"), "agent ExampleBot http://agent.example: want an https origin, such as https://agent.example: not an https URL, at Testfile:4"},
		{"agent: a path", unitAgents("agent ExampleBot https://agent.example/keys"), "agent ExampleBot https://agent.example/keys: want an https origin, such as https://agent.example: not an origin: has a path, query or fragment, at Testfile:4"},
		{"agent: a query", unitAgents("agent ExampleBot https://agent.example?x"), "has a path, query or fragment, at Testfile:4"},
		{"agent: not a URL", unitAgents("agent ExampleBot agent.example"), "not an https URL, at Testfile:4"},
		{"agent: a missing keys file", unitAgents("agent ExampleBot https://agent.example keys ../testdata/wba/no-such.json"), "agent ExampleBot https://agent.example: keys file: stat ../testdata/wba/no-such.json: no such file or directory, at Testfile:4"},
		{"agent: a malformed keys file", unitAgents("agent ExampleBot https://agent.example keys ../testdata/wba/malformed-jwks.json"), "agent ExampleBot https://agent.example: keys file ../testdata/wba/malformed-jwks.json: line 3, column 89: invalid character '}' looking for beginning of object key string, at Testfile:4"},
		{"agent: keys not a JWK Set", unitAgents("agent ExampleBot https://agent.example keys ../testdata/verify/cloudflare-web-bot-auth-architecture-v1.json"), `keys file ../testdata/verify/cloudflare-web-bot-auth-architecture-v1.json: line 1, column 1: not a JWK Set: want {"keys": [...]}, at Testfile:4`},
		{"agent: too few arguments", unitAgents("agent ExampleBot"), "verify web_bot_auth agent: want <token> <https-origin> [keys <jwks-file>], at Testfile:4"},
		{"agent: keys without a file", unitAgents("agent ExampleBot https://agent.example keys"), "want <token> <https-origin> [keys <jwks-file>], at Testfile:4"},
		{"agent: key, not keys", unitAgents("agent ExampleBot https://agent.example key k.json"), "want <token> <https-origin> [keys <jwks-file>], at Testfile:4"},
		{"agent given twice", unitAgents("agent ExampleBot https://agent.example\n\t\t\tagent examplebot https://AGENT.example:443/"), "verify web_bot_auth agent examplebot https://AGENT.example:443/: given twice, at Testfile:5"},
		{"two keys files for one agent", unitAgents("agent ExampleBot https://agent.example keys ../testdata/wba/example-agent-jwks.json\n\t\t\tagent OtherBot https://agent.example keys ../testdata/verify/directory-rfc9421-test-key.json"),
			"keys ../testdata/wba/example-agent-jwks.json and ../testdata/verify/directory-rfc9421-test-key.json for one agent: keys are the origin's, give one file, at Testfile:5"},
		{"web_bot_auth: not agent", unitAgents("agents ExampleBot https://agent.example"), `verify web_bot_auth: unrecognized subdirective "agents", at Testfile:4`},
		{"web_bot_auth off with agents", "robots_enforce {\n\tverify {\n\t\tweb_bot_auth off {\n\t\t\tagent ExampleBot https://agent.example\n\t\t}\n\t}\n}", "verify web_bot_auth off: a block of agents needs it on; leave off out, at Testfile:5"},
		{"web_bot_auth alone", "robots_enforce {\n\tverify {\n\t\tweb_bot_auth\n\t}\n}", "verify web_bot_auth: want on, off, or a block of agent lines, at Testfile:3"},
		{"web_bot_auth on off", "robots_enforce {\n\tverify {\n\t\tweb_bot_auth on off\n\t}\n}", "verify web_bot_auth on off: want on or off, or a block of agent lines, at Testfile:3"},
		{"web_bot_auth maybe", "robots_enforce {\n\tverify {\n\t\tweb_bot_auth maybe\n\t}\n}", `verify web_bot_auth "maybe": want on or off, at Testfile:3`},
	} {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: UnmarshalCaddyfile(%q) = %v, want an error containing %q", tt.name, tt.input, err, tt.want)
		}
	}
}

// unitAgents is a robots_enforce block whose verify block's web_bot_auth
// block holds lines, the first on line 4.
func unitAgents(lines string) string {
	return "robots_enforce {\n\tverify {\n\t\tweb_bot_auth {\n\t\t\t" + lines + "\n\t\t}\n\t}\n}"
}

// TestWebBotAuthJSON: the JSON form of the agents mirrors the Caddyfile's
// (an agent line is a signature_agents entry), validates alike, and gives
// the verifier each agent once, by its normalized origin, with its keys.
func TestWebBotAuthJSON(t *testing.T) {
	const keys = "../testdata/wba/example-agent-jwks.json"
	var h Handler
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(unitAgents(
		"agent ExampleBot https://agent.example keys " + keys + "\n\t\t\tagent ExampleBot-News https://Agent.Example:443/")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(h.Verify)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"signature_agents":[{"token":"ExampleBot","origin":"https://agent.example","keys":"` + keys + `"},` +
		`{"token":"ExampleBot-News","origin":"https://Agent.Example:443/"}]}`
	if string(got) != want {
		t.Errorf("JSON of the Caddyfile's agents:\n%s\nwant:\n%s", got, want)
	}
	var back Verify
	if err := json.Unmarshal([]byte(`{"web_bot_auth": "on", `+want[1:]), &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	vc := back.VerifierConfig()
	if !vc.WebBotAuth || !reflect.DeepEqual(vc.SignatureAgents, map[string][]string{"https://agent.example": {"ExampleBot", "ExampleBot-News"}}) ||
		!reflect.DeepEqual(vc.AgentKeys, map[string]string{"https://agent.example": keys}) {
		t.Errorf("VerifierConfig: web bot auth %v, agents %v, keys %v", vc.WebBotAuth, vc.SignatureAgents, vc.AgentKeys)
	}
	vc.Resolver = verify.NewResolver("127.0.0.1:1") // never asked: nothing is started
	v, err := verify.New(vc)
	if err != nil {
		t.Fatalf("verify.New: %v", err)
	}
	defer v.Close()
	if !v.HasMethod("examplebot-news") {
		t.Error("the verifier has no method for ExampleBot-News")
	}

	for _, tt := range []struct{ json, want string }{
		{`{"web_bot_auth": "off", "signature_agents": [{"token": "ExampleBot", "origin": "https://agent.example"}]}`,
			"verify web_bot_auth off: signature agents are given"},
		{`{"signature_agents": [{"token": "ExampleBot", "origin": "https://agent.example", "keys": "no/such.json"}]}`,
			"verify web_bot_auth agent ExampleBot https://agent.example: keys file: stat no/such.json"},
		{`{"signature_agents": [{"token": "", "origin": "https://agent.example"}]}`, "not a product token"},
		{`{"signature_agents": [{"token": "ExampleBot", "origin": "https://agent.example/path"}]}`, "want an https origin"},
		{`{"signature_agents": [{"token": "ExampleBot", "origin": "https://a.example"}, {"token": "EXAMPLEBOT", "origin": "https://a.example/"}]}`, "given twice"},
	} {
		var v Verify
		if err := json.Unmarshal([]byte(tt.json), &v); err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%s) = %v, want %q in it", tt.json, err, tt.want)
		}
	}
}
