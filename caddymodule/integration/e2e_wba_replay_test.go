package integration

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// e2eWBAReplaySite names the agent https://agent.example for ExampleAgent,
// with its keys pinned from <KEYS>, in enforce mode with violators block:
// a violation by the verified agent would deny it everything. /members/
// is open to ExampleAgent, closed to "*".
const e2eWBAReplaySite = `
http://:<PORT0> {
	bind 127.0.0.1
	robots_enforce {
		source inline <<TXT
			User-agent: ExampleAgent
			Disallow: /private/

			User-agent: *
			Disallow: /private/
			Disallow: /members/
			TXT
		log_allowed
		violators block
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

// e2eGoSignNonce signs for authority with key, covering @authority and the
// legacy Signature-Agent string, with the nonce parameter when nonce is
// not empty: a signature base written out by hand (RFC 9421 §2.5).
func e2eGoSignNonce(key ed25519.PrivateKey, authority, keyid, nonce string, now int64) http.Header {
	params := `("@authority" "signature-agent");created=` + strconv.FormatInt(now-5, 10) +
		`;expires=` + strconv.FormatInt(now+300, 10) + `;keyid="` + keyid + `"`
	if nonce != "" {
		params += `;nonce="` + nonce + `"`
	}
	params += `;tag="web-bot-auth"`
	base := `"@authority": ` + authority + "\n" +
		`"signature-agent": "https://agent.example"` + "\n" +
		`"@signature-params": ` + params
	return http.Header{
		"Signature-Agent": {`"https://agent.example"`},
		"Signature-Input": {"sig1=" + params},
		"Signature":       {"sig1=:" + base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(base))) + ":"},
	}
}

// A signature verifies once per request it signed: captured from the
// agent and replayed from another address, to a path the agent's group
// disallows, it is not verified, is recorded as replayed, and does not
// get the agent blocked; the agent's own retry from its address still
// verifies, with a nonce or without one (the signature itself is then
// what is remembered).
func TestE2EWebBotAuthReplay(t *testing.T) {
	key, kid, jwks := e2eGoKey(t)
	keys := filepath.Join(t.TempDir(), "agent-jwks.json")
	if err := os.WriteFile(keys, jwks, 0o644); err != nil {
		t.Fatal(err)
	}
	c := e2eStart(t, 1, e2eWBAReplaySite, map[string]string{"<KEYS>": filepath.ToSlash(keys)})
	const agentIP = "203.0.113.5"
	send := func(ip, path string, signed http.Header) int {
		h := signed.Clone()
		h.Set("X-Forwarded-For", ip)
		return c.getWith(0, "", path, e2eWBAUserAgent, h).status
	}
	expectRecord := func(path, identity string) {
		t.Helper()
		rec, err := e2eRecordOf(c, path)
		if err != nil {
			t.Error(err)
			return
		}
		if rec.str("identity") != identity || rec.str("identity_method") != "web_bot_auth" {
			t.Errorf("record of %s: identity %q by %q, want %s by web_bot_auth\n%s",
				path, rec.str("identity"), rec.str("identity_method"), identity, e2eDump([]e2eRecord{rec}))
		}
	}
	for _, tc := range []struct{ name, nonce, strangerIP, otherStrangerIP string }{
		{"nonce", "bm9uY2UtMQ==", "198.51.100.9", "198.51.100.10"},
		{"no-nonce", "", "198.51.100.11", "198.51.100.12"},
	} {
		now := time.Now().Unix()
		captured := e2eGoSignNonce(key, c.addr(0), kid, tc.nonce, now)
		first, retry, replay, after := "/public/"+tc.name+"/first", "/public/"+tc.name+"/retry",
			"/private/"+tc.name+"/replay", "/public/"+tc.name+"/after"

		if s := send(agentIP, first, captured); s != http.StatusOK {
			t.Errorf("%s: the agent's signed request = %d, want 200", tc.name, s)
		}
		expectRecord(first, "verified")
		if s := send(agentIP, retry, captured); s != http.StatusOK {
			t.Errorf("%s: the agent's retry from its address = %d, want 200", tc.name, s)
		}
		expectRecord(retry, "verified")

		// The stranger replays the exact headers to a disallowed path.
		if s := send(tc.strangerIP, replay, captured); s != http.StatusForbidden {
			t.Errorf("%s: the replay = %d, want 403 (judged by \"*\", without the token)", tc.name, s)
		}
		expectRecord(replay, "replayed")
		// Judged without the token it did not prove, as a forged claim
		// is: by "*", which closes /members/ that ExampleAgent may read.
		// From a stranger the first replay did not escalate.
		members := "/members/" + tc.name
		if s := send(tc.otherStrangerIP, members, captured); s != http.StatusForbidden {
			t.Errorf("%s: the replay to /members/ = %d, want 403 (judged by \"*\")", tc.name, s)
		}
		expectRecord(members, "replayed")

		// The agent, signing afresh, is not blocked: the replay escalated
		// the stranger's address, not the agent.
		fresh := e2eGoSignNonce(key, c.addr(0), kid, tc.nonce+"Zg==", now+1)
		if s := send(agentIP, after, fresh); s != http.StatusOK {
			t.Errorf("%s: the agent after the replay = %d, want 200 (not blocked by the stranger's replay)", tc.name, s)
		}
		expectRecord(after, "verified")
	}
}
