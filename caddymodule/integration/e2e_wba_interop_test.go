package integration

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// Interop with the signer most Web Bot Auth agents use: Cloudflare's npm
// package web-bot-auth, at the version testdata/wba/package-lock.json
// pins (0.1.3), signs requests from testdata/wba/sign.mjs with the test's
// own Ed25519 key; a real Caddy, whose configuration names the agent and
// pins that key from a JWKS file, judges them.

// Bounds of the signer's setup, each with its reason.
const (
	// e2eNpmTimeout bounds "npm ci": four small packages, usually from
	// npm's cache; a registry that does not answer must not hang the test.
	e2eNpmTimeout = 2 * time.Minute
	// e2eNodeTimeout bounds one run of the signing script.
	e2eNodeTimeout = 30 * time.Second
)

// e2eWBAUserAgent claims the configured agent's token.
const e2eWBAUserAgent = "Mozilla/5.0 (compatible; ExampleAgent/1.0; +https://agent.example/bot)"

// e2eWBASigner installs the signing script and its pinned dependencies in
// a temporary directory, and returns it. The test is skipped, saying why,
// without node and npm, or when npm cannot install the package (no
// registry); a broken lockfile is reported the same way, with npm's
// output, since npm cannot tell the two apart for us.
func e2eWBASigner(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("Web Bot Auth interop: %s is not installed; the test signs with Cloudflare's npm package", tool)
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"sign.mjs", "package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wba", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), e2eNpmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("Web Bot Auth interop: npm could not install web-bot-auth from testdata/wba/package-lock.json "+
			"(is the npm registry reachable?): %v\n%s", err, out)
	}
	return dir
}

// e2eSignPlan is the signing script's input.
type e2eSignPlan struct {
	Key      map[string]string `json:"key"`
	Requests []e2eSignRequest  `json:"requests"`
}

// e2eSignRequest is one request to sign (see testdata/wba/sign.mjs).
type e2eSignRequest struct {
	Name       string            `json:"name"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
	Label      string            `json:"label,omitempty"`
	Components []any             `json:"components,omitempty"`
	Created    int64             `json:"created"`
	Expires    int64             `json:"expires"`
	Key        map[string]string `json:"key,omitempty"`
}

// e2eSign runs the signing script on plan and returns each request's
// Signature and Signature-Input, by name.
func e2eSign(t *testing.T, dir string, plan e2eSignPlan) map[string]map[string]string {
	t.Helper()
	in, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), e2eNodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "sign.mjs")
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node sign.mjs: %v\n%s", err, stderr.String())
	}
	var signed map[string]map[string]string
	if err := json.Unmarshal(out, &signed); err != nil {
		t.Fatalf("node sign.mjs wrote %q: %v", out, err)
	}
	return signed
}

// e2eEd25519JWK returns a new key pair as a private JWK (for the script)
// and a JWK Set of its public key (for Caddy), kid its RFC 7638
// thumbprint.
func e2eEd25519JWK(t *testing.T) (private map[string]string, set []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	public := map[string]string{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": base64.RawURLEncoding.EncodeToString(sum[:])}
	set, err = json.Marshal(map[string]any{"keys": []any{public}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"kty": "OKP", "crv": "Ed25519", "x": x, "d": base64.RawURLEncoding.EncodeToString(priv.Seed())}, set
}

// e2eWBASite names the agent https://agent.example for ExampleAgent, with
// its keys pinned from <KEYS>; ExampleAgent's group allows /private/,
// the "*" group does not.
const e2eWBASite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: ExampleAgent
			Allow: /

			User-agent: *
			Disallow: /private/
			TXT
		body denied
		log_allowed
		verify {
			builtin off
			web_bot_auth {
				agent ExampleAgent https://agent.example keys <KEYS>
			}
		}
	}
	respond "page {path}"
}
`

// TestE2EWebBotAuthInterop sends requests signed by Cloudflare's
// web-bot-auth 0.1.3 through a real Caddy that names the agent
// https://agent.example for ExampleAgent and pins its key from a JWKS
// file. A signature that verifies makes the claim verified, and the
// request is judged by ExampleAgent's group (which allows /private/);
// every other claim of the token is forged and judged by "*" (which
// disallows it), and the compliance record says which.
func TestE2EWebBotAuthInterop(t *testing.T) {
	signer := e2eWBASigner(t)
	key, jwks := e2eEd25519JWK(t)
	otherKey, _ := e2eEd25519JWK(t)
	keys := filepath.Join(t.TempDir(), "agent-jwks.json")
	if err := os.WriteFile(keys, jwks, 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, e2eWBASite, map[string]string{"<KEYS>": filepath.ToSlash(keys)})
	base := "http://" + c.addr(0)
	now := time.Now().Unix()
	legacy := map[string]string{"Signature-Agent": `"https://agent.example"`}
	dict := map[string]string{"Signature-Agent": `agent1="https://agent.example"`}
	for _, tc := range []struct {
		req      e2eSignRequest // Name is the path's last segment; URL defaults to the path sent
		sendTo   string         // the path sent, when not the one signed
		identity string
	}{
		// The package's default: @authority and the whole Signature-Agent
		// field, labelled sig1.
		{req: e2eSignRequest{Name: "legacy", Headers: legacy}, identity: "verified"},
		{req: e2eSignRequest{Name: "dictionary", Headers: dict}, identity: "verified"},
		// The draft's shape: the label is the member's key.
		{req: e2eSignRequest{Name: "dictionary-labelled", Label: "wba",
			Headers: map[string]string{"Signature-Agent": `other="https://other.example", wba="https://agent.example"`}}, identity: "verified"},
		{req: e2eSignRequest{Name: "more-components", Headers: dict,
			Components: []any{"@method", "@authority", "@path", "signature-agent"}}, identity: "verified"},
		// A covered component changed: signed for one path, sent to another.
		{req: e2eSignRequest{Name: "tampered", Headers: dict, Components: []any{"@authority", "@path", "signature-agent"}},
			sendTo: "/private/tampered-elsewhere", identity: "forged"},
		// Signed for another authority.
		{req: e2eSignRequest{Name: "other-authority", Headers: legacy, URL: "http://other.example:" + strconv.Itoa(c.ports[0])},
			identity: "forged"},
		{req: e2eSignRequest{Name: "expired", Headers: dict, Created: now - 7200, Expires: now - 3600}, identity: "forged"},
		// A key the agent's pinned set does not hold.
		{req: e2eSignRequest{Name: "other-key", Headers: dict, Key: otherKey}, identity: "forged"},
		// web-bot-auth 0.1.3 signs "signature-agent";key="agent1" over
		// the whole field, where RFC 9421 §2.1.2 signs the member's value:
		// no verifier that follows the RFC accepts it (docs/verify.md).
		{req: e2eSignRequest{Name: "keyed-member", Headers: dict, Label: "agent1",
			Components: []any{"@authority", map[string]string{"name": "signature-agent", "key": "agent1"}}}, identity: "forged"},
		// Claims the token and carries no signature: its agent is named in
		// the configuration, so it must sign.
		{req: e2eSignRequest{Name: "unsigned"}, identity: "forged"},
	} {
		path := "/private/" + tc.req.Name
		headers := http.Header{}
		if tc.req.Name != "unsigned" {
			req := tc.req
			if req.URL == "" {
				req.URL = base
			}
			req.URL += path
			if req.Created == 0 {
				req.Created, req.Expires = now-5, now+300
			}
			signed := e2eSign(t, signer, e2eSignPlan{Key: key, Requests: []e2eSignRequest{req}})[req.Name]
			for k, v := range req.Headers {
				headers.Set(k, v)
			}
			headers.Set("Signature", signed["Signature"])
			headers.Set("Signature-Input", signed["Signature-Input"])
		}
		if tc.sendTo != "" {
			path = tc.sendTo
		}
		r := c.getWith(0, "", path, e2eWBAUserAgent, headers)
		want := http.StatusOK
		if tc.identity == "forged" {
			want = http.StatusForbidden
		}
		if r.status != want {
			t.Errorf("%s: GET %s = %d %q, want %d", tc.req.Name, path, r.status, r.body, want)
		}
		rec, err := e2eRecordOf(c, path)
		if err != nil {
			t.Errorf("%s: %v", tc.req.Name, err)
			continue
		}
		if rec.str("identity") != tc.identity || rec.str("identity_method") != "web_bot_auth" || rec.str("agent") != "ExampleAgent" {
			t.Errorf("%s: record: identity %q by %q for %q, want %s by web_bot_auth for ExampleAgent\n%s",
				tc.req.Name, rec.str("identity"), rec.str("identity_method"), rec.str("agent"), tc.identity, e2eDump([]e2eRecord{rec}))
		}
	}
}

// e2eRecordOf waits for the compliance record of the request for uri.
func e2eRecordOf(c *e2eCaddy, uri string) (e2eRecord, error) {
	var found e2eRecord
	if !e2eEventually(func() bool {
		for _, rec := range c.readLog("robots.log", "http.handlers.robots_enforce") {
			if rec.str("msg") == "robots.txt decision" && rec.str("uri") == uri {
				found = rec
				return true
			}
		}
		return false
	}) {
		return nil, errors.New("no compliance record of " + uri)
	}
	return found, nil
}

// e2eGoSign signs a GET of path to authority with key, covering
// @authority and the legacy Signature-Agent string, as the draft's
// vectors do: a signature base written out here by hand (RFC 9421 §2.5),
// not by the package under test.
func e2eGoSign(key ed25519.PrivateKey, authority, keyid string, now int64) http.Header {
	params := `("@authority" "signature-agent");created=` + strconv.FormatInt(now-5, 10) +
		`;expires=` + strconv.FormatInt(now+300, 10) + `;keyid="` + keyid + `";tag="web-bot-auth"`
	base := `"@authority": ` + authority + "\n" +
		`"signature-agent": "https://agent.example"` + "\n" +
		`"@signature-params": ` + params
	return http.Header{
		"Signature-Agent": {`"https://agent.example"`},
		"Signature-Input": {"sig1=" + params},
		"Signature":       {"sig1=:" + base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(base))) + ":"},
	}
}

// e2eGoKey returns a key pair, its RFC 7638 thumbprint, and a JWK Set of
// its public key.
func e2eGoKey(t *testing.T) (ed25519.PrivateKey, string, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	kid := base64.RawURLEncoding.EncodeToString(sum[:])
	return priv, kid, []byte(`{"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "` + kid + `", "x": "` + x + `"}]}`)
}

// Pinned keys are read when the configuration is loaded, and again on a
// reload when the file changed: the agent's new key verifies and the old
// one no longer does. A file that no longer reads fails the load, naming
// the file and where its JSON breaks, and the running configuration keeps
// serving.
func TestE2EWebBotAuthPinnedKeysReload(t *testing.T) {
	key1, kid1, set1 := e2eGoKey(t)
	key2, kid2, set2 := e2eGoKey(t)
	keys := filepath.Join(t.TempDir(), "agent-jwks.json")
	if err := os.WriteFile(keys, set1, 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, e2eWBASite, map[string]string{"<KEYS>": filepath.ToSlash(keys)})
	get := func(key ed25519.PrivateKey, kid string) int {
		return c.getWith(0, "", "/private/page", e2eWBAUserAgent, e2eGoSign(key, c.addr(0), kid, time.Now().Unix())).status
	}
	if s1, s2 := get(key1, kid1), get(key2, kid2); s1 != http.StatusOK || s2 != http.StatusForbidden {
		t.Errorf("keys file holds key 1: key 1 got %d, key 2 got %d; want 200 and 403", s1, s2)
	}
	if err := os.WriteFile(keys, set2, 0o644); err != nil {
		t.Fatal(err)
	}
	c.load(e2eWBASite)
	if !e2eEventually(func() bool { return get(key2, kid2) == http.StatusOK }) {
		t.Error("after the keys file changed and a reload, key 2 was never verified")
	}
	if s := get(key1, kid1); s != http.StatusForbidden {
		t.Errorf("after the reload, key 1 (no longer pinned) got %d, want 403", s)
	}

	adapted := c.adapt(e2eWBASite)
	if err := os.WriteFile(keys, []byte("{\"keys\": [\n  {\"kty\": \"OKP\",]}"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := caddy.Load(adapted, true)
	if err == nil || !strings.Contains(err.Error(), "keys file "+keys+": line 2, column 17") {
		t.Errorf("loading with a malformed keys file: %v, want an error naming the file and the line", err)
	}
	if s := get(key2, kid2); s != http.StatusOK {
		t.Errorf("after the failed load, key 2 got %d, want 200 from the configuration still running", s)
	}
}
