package verify

import (
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParsePinnedKeys: a pinned key file is read strictly, and a JSON
// error says where it is.
func TestParsePinnedKeys(t *testing.T) {
	key := `{"kty":"OKP","crv":"Ed25519","x":"` + rfcEd25519X + `"}`
	for _, tt := range []struct {
		name, body string
		want       string // "" for success, else a substring of the error
	}{
		{"the draft's directory", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"` + rfcEd25519Thumbprint + `","x":"` + rfcEd25519X + `","use":"sig"}]}`, ""},
		{"no kid", `{"keys":[` + key + `]}`, ""},
		{"syntax error, line and column", "{\n  \"keys\": [\n    {\"kty\": \"OKP\",}\n  ]\n}", "line 3, column 19: invalid character '}'"},
		{"truncated", `{"keys": [`, "line 1, column 10: unexpected end of JSON input"},
		{"keys not an array", `{"keys": {"kty": "OKP"}}`, `line 1, column 10: "keys" is an object, want an array`},
		{"a member of the wrong type", "{\"keys\": [\n{\"kty\": 1}]}", `line 2, column 9: "keys.kty" is a number, want a string`},
		{"a JWK, not a JWK Set", key, `no "keys" array`},
		{"no keys", `{"keys": []}`, `"keys" is empty`},
		{"RSA", `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`, `keys[0]: kty "RSA", crv "": only Ed25519 keys`},
		{"a private key", `{"keys":[` + key + `,{"kty":"OKP","crv":"Ed25519","x":"` + rfcEd25519X + `","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}]}`, `keys[1]: holds a private key`},
		{"short x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`, `keys[0]: "x" is not a 32-octet Ed25519 public key`},
		{"padded x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + rfcEd25519X + `="}]}`, `keys[0]: "x" is not`},
		{"kid a name", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"test-key-ed25519","x":"` + rfcEd25519X + `"}]}`, `keys[0]: kid "test-key-ed25519" is not the key's RFC 7638 thumbprint "` + rfcEd25519Thumbprint + `"`},
		{"too many", `{"keys":[` + strings.Repeat(key+",", maxDirectoryKeys) + key + `]}`, "33 keys, limit 32"},
	} {
		keys, err := parsePinnedKeys([]byte(tt.body))
		switch {
		case tt.want == "" && (err != nil || keys[rfcEd25519Thumbprint].pub == nil):
			t.Errorf("%s: parsePinnedKeys = %v, %v; want the RFC key by its thumbprint", tt.name, keys, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: parsePinnedKeys error = %v, want %q in it", tt.name, err, tt.want)
		}
	}
}

// TestCheckKeyFile: the file is named in every error; what is not a
// regular file, or too large, is refused before it is read.
func TestCheckKeyFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"keys":[`+strings.Repeat(" ", maxDirectorySize)+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := writeFile(t, "bad.json", "{\"keys\": [\n  oops\n]}")
	for _, tt := range []struct{ path, want string }{
		{pinnedRFCKeyFile, ""},
		{filepath.Join(dir, "missing.json"), "keys file: stat " + filepath.Join(dir, "missing.json") + ": no such file"},
		{dir, "keys file " + dir + ": not a regular file"},
		{big, "keys file " + big + ": larger than 65536 octets"},
		{bad, "keys file " + bad + ": line 2, column 3: invalid character 'o'"},
		{"", "keys file: empty path"},
	} {
		err := CheckKeyFile(tt.path)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("CheckKeyFile(%q) = %v, want %q", tt.path, err, tt.want)
		}
	}
}

// TestAgentKeysConfig: New reads the pinned files (an unreadable one is
// its error, naming the agent and the file), and checks that keys are
// pinned only for agents that speak for a token, once.
func TestAgentKeysConfig(t *testing.T) {
	bad := writeFile(t, "bad.json", `{"keys": [}`)
	agents := map[string][]string{"https://agent.test": {"TestBot"}}
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"malformed file", Config{SignatureAgents: agents, AgentKeys: map[string]string{"https://agent.test": bad}},
			"signature agent https://agent.test: keys file " + bad + ": line 1, column 11"},
		{"missing file", Config{SignatureAgents: agents, AgentKeys: map[string]string{"https://agent.test/": "no/such.json"}},
			"signature agent https://agent.test: keys file: stat no/such.json"},
		{"agent speaks for no token", Config{SignatureAgents: agents, AgentKeys: map[string]string{"https://other.test": pinnedRFCKeyFile}},
			`signature agent "https://other.test": keys pinned for an agent that speaks for no token`},
		{"not an origin", Config{SignatureAgents: agents, AgentKeys: map[string]string{"https://agent.test/keys": pinnedRFCKeyFile}},
			"has a path, query or fragment"},
		{"pinned twice", Config{SignatureAgents: agents, AgentKeys: map[string]string{"https://agent.test": pinnedRFCKeyFile, "https://AGENT.test:443": bad}},
			"keys pinned twice"},
	} {
		tt.cfg.WebBotAuth = true
		tt.cfg.Resolver = &fakeResolver{}
		tt.cfg.lists = []PublishedList{}
		v, err := New(tt.cfg)
		if err == nil {
			v.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New error = %v, want %q in it", tt.name, err, tt.want)
		}
	}
}

// TestPinnedAgent: an agent whose keys are pinned verifies at once, its
// directory is never fetched (not even for a keyid it lacks, which is
// then forged), and a remembered signature stays good past any directory
// lifetime.
func TestPinnedAgent(t *testing.T) {
	d := newDirServer(t)
	clock := newClock()
	clock.t = time.Unix(1735689600+60, 0)
	v := newTestVerifier(t, Config{WebBotAuth: true, HTTPClient: d.client(), Now: clock.Now,
		SignatureAgents: map[string][]string{"https://signature-agent.test": {"TestBot"}},
		AgentKeys:       map[string]string{"https://signature-agent.test": pinnedRFCKeyFile}})
	addr := netip.MustParseAddr("192.0.2.1")
	for _, dv := range draftVectors {
		if got := v.Verify("TestBot", addr, dv.request()); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
			t.Errorf("%s vector, keys pinned: Verify = %+v, want verified at once", dv.name, got)
		}
	}
	unknownKey := rfcTestRequest()
	unknownKey.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	sign(t, unknownKey, `s=("@authority" "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="someone-else";tag="web-bot-auth"`)
	clock.Advance(minRefetchForKey + time.Minute)
	if got := v.Verify("TestBot", addr, unknownKey); got != (Result{Outcome: Forged, Method: WebBotAuth}) {
		t.Errorf("keyid not pinned: Verify = %+v, want forged (no refetch)", got)
	}
	clock.Advance(48 * time.Hour) // past any directory lifetime
	// The dictionary vector expires in 2124, but was created two days
	// ago: past maxSignatureAge, it no longer verifies.
	if got := v.Verify("TestBot", addr, draftVectors[0].request()); got != (Result{Outcome: Forged, Method: WebBotAuth}) {
		t.Errorf("a vector created two days ago: Verify = %+v, want forged (older than %v)", got, maxSignatureAge)
	}
	r := rfcTestRequest()
	r.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	created := clock.Now().Unix() - 5
	sign(t, r, fmt.Sprintf(`s=("@authority" "signature-agent";key="a");created=%d;expires=%d;keyid="%s";tag="web-bot-auth"`,
		created, created+300, rfcEd25519Thumbprint))
	if got := v.Verify("TestBot", addr, r); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
		t.Errorf("two days on, a fresh signature: Verify = %+v, want verified", got)
	}
	if n := testing.AllocsPerRun(100, func() { v.Verify("TestBot", addr, r) }); n != 0 {
		t.Errorf("remembered signature of a pinned agent: %v allocations per Verify, want 0", n)
	}
	if n := d.hits.Load(); n != 0 {
		t.Errorf("a pinned agent's directory was fetched %d times", n)
	}
}

// TestMustSign: a token whose agent the configuration names must be
// signed; a built-in agent's token (whose operator does not sign every
// request) is left to its other methods when unsigned; naming a built-in
// agent in the configuration makes its token one that must be signed.
func TestMustSign(t *testing.T) {
	d := newDirServer(t)
	clock := newClock()
	addr := netip.MustParseAddr("192.0.2.1")
	unsigned := func() *http.Request { return rfcTestRequest() }
	otherAgent := func() *http.Request { // signed, but by an agent not known for the token
		r := rfcTestRequest()
		r.Header.Set("Signature-Agent", `a="https://unknown.test"`)
		sign(t, r, `s=("@authority" "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)
		return r
	}
	garbage := func() *http.Request {
		r := rfcTestRequest()
		r.Header.Set("Signature-Agent", `"https://agent.bot.goog"`)
		r.Header.Set("Signature-Input", `not a dictionary (`)
		return r
	}
	builtin := newTestVerifier(t, Config{WebBotAuth: true, HTTPClient: d.client(), Now: clock.Now})
	noBuiltin := newTestVerifier(t, Config{WebBotAuth: true, HTTPClient: d.client(), Now: clock.Now, NoBuiltinAgents: true})
	if noBuiltin.HasMethod("Google-Agent") || !builtin.HasMethod("Google-Agent") || !builtin.HasMethod("ChatGPT-User") {
		t.Errorf("HasMethod(Google-Agent) = %v with the built-in agents off, %v on; want false, true",
			noBuiltin.HasMethod("Google-Agent"), builtin.HasMethod("Google-Agent"))
	}
	configured := newTestVerifier(t, Config{WebBotAuth: true, HTTPClient: d.client(), Now: clock.Now,
		SignatureAgents: map[string][]string{"https://agent.bot.goog": {"Google-Agent"}, "https://my-agent.test": {"MyBot"}}})
	for _, tt := range []struct {
		name  string
		v     *Verifier
		token string
		r     *http.Request
		want  Result
	}{
		{"built-in Google-Agent, unsigned", builtin, "Google-Agent", unsigned(), Result{Outcome: Unverified}},
		{"built-in ChatGPT-User, unsigned", builtin, "ChatGPT-User", unsigned(), Result{Outcome: Unverified}},
		{"built-in Google-Agent, another agent's signature", builtin, "Google-Agent", otherAgent(), Result{Outcome: Unverified}},
		{"built-in Google-Agent, unparsable signature", builtin, "google-agent", garbage(), Result{Outcome: Unverified}},
		{"configured Google-Agent, unsigned", configured, "Google-Agent", unsigned(), Result{Outcome: Forged, Method: WebBotAuth}},
		{"configured Google-Agent, unparsable signature", configured, "GOOGLE-AGENT", garbage(), Result{Outcome: Forged, Method: WebBotAuth}},
		{"configured MyBot, another agent's signature", configured, "MyBot", otherAgent(), Result{Outcome: Forged, Method: WebBotAuth}},
		{"configured: ChatGPT-User is still built-in only", configured, "ChatGPT-User", unsigned(), Result{Outcome: Unverified}},
	} {
		if got := tt.v.Verify(tt.token, addr, tt.r); got != tt.want {
			t.Errorf("%s: Verify(%s) = %+v, want %+v", tt.name, tt.token, got, tt.want)
		}
	}
	if n := d.hits.Load(); n != 0 {
		t.Errorf("unsigned claims fetched a directory %d times", n)
	}
}

// TestSignedAgent: which Signature-Agent member a signature is attributed
// to, in the draft's forms and in Cloudflare web-bot-auth 0.1.3's default
// (a Dictionary field covered whole, labelled sig1).
func TestSignedAgent(t *testing.T) {
	for _, tt := range []struct {
		name, input, field, want string // want "" for no agent
	}{
		{"dictionary member by ;key", `s=("@authority" "signature-agent";key="b")`, `a="https://a.test", b="https://b.test"`, "https://b.test"},
		{";key names no member", `s=("@authority" "signature-agent";key="c")`, `a="https://a.test"`, ""},
		{"legacy sf-string", `s=("@authority" "signature-agent")`, `"https://a.test"`, "https://a.test"},
		{"whole dictionary, member keyed by the label", `b=("@authority" "signature-agent")`, `a="https://a.test", b="https://b.test"`, "https://b.test"},
		{"whole dictionary, its only member", `sig1=("@authority" "signature-agent")`, `agent1="https://a.test"`, "https://a.test"},
		{"whole dictionary, several members, none the label", `sig1=("@authority" "signature-agent")`, `a="https://a.test", b="https://b.test"`, ""},
		{"not covered", `s=("@authority")`, `s="https://a.test"`, ""},
		{"type directory", `s=("signature-agent";key="s")`, `s="https://a.test";type=directory`, "https://a.test"},
		{"type jwks_uri is not resolved", `s=("signature-agent";key="s")`, `s="https://a.test/jwks";type=jwks_uri`, ""},
		{"not https", `s=("signature-agent")`, `"http://a.test"`, ""},
		{"a path", `s=("signature-agent")`, `"https://a.test/keys"`, ""},
		{"not a string", `s=("signature-agent";key="s")`, `s=1`, ""},
		{"unparsable", `s=("signature-agent")`, `"https://a.test`, ""},
	} {
		sigs, err := parseSignatureInput([]string{tt.input})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := signedAgent(sigs[0], []string{tt.field})
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: signedAgent(%s, %s) = %q, %v; want %q", tt.name, tt.input, tt.field, got, ok, tt.want)
		}
	}
}
