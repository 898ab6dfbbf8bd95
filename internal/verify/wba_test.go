package verify

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dirServer serves a key directory over TLS on 127.0.0.1, and a client
// that reaches it whatever host a URL names.
type dirServer struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	ctype  string
	cache  string
	body   string
	hits   atomic.Int64
}

func newDirServer(t testing.TB) *dirServer {
	d := &dirServer{status: 200, ctype: directoryMediaType, cache: "max-age=600",
		body: `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"` + rfcEd25519Thumbprint + `","x":"` + rfcEd25519X + `","use":"sig"}]}`}
	d.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.hits.Add(1)
		d.mu.Lock()
		defer d.mu.Unlock()
		if r.URL.Path != wellKnownDirectory {
			http.NotFound(w, r)
			return
		}
		if d.status == http.StatusFound {
			http.Redirect(w, r, "https://elsewhere.test"+wellKnownDirectory, d.status)
			return
		}
		w.Header().Set("Content-Type", d.ctype)
		w.Header().Set("Cache-Control", d.cache)
		w.WriteHeader(d.status)
		fmt.Fprint(w, d.body)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *dirServer) client() *http.Client {
	addr := d.Listener.Addr().String()
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, network, addr)
		},
		// The test server's certificate names example.com, not the agent's
		// test host; the connection never leaves 127.0.0.1.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
}

func (d *dirServer) set(f func(d *dirServer)) { d.mu.Lock(); f(d); d.mu.Unlock() }

// sign signs r with the RFC 9421 test key over the given Signature-Input
// member, setting Signature-Input and Signature.
func sign(t testing.TB, r *http.Request, input string) {
	t.Helper()
	_, priv := rfcKeys(t)
	r.Header.Set("Signature-Input", input)
	sigs, err := parseSignatureInput(r.Header.Values("Signature-Input"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := signatureBase(r, sigs[0])
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Signature", sigs[0].label+"=:"+base64.StdEncoding.EncodeToString(ed25519.Sign(priv, base))+":")
}

func wbaVerifier(t *testing.T, d *dirServer, clock *fakeClock, extra Config) *Verifier {
	cfg := extra
	cfg.WebBotAuth = true
	cfg.HTTPClient = d.client()
	cfg.Now = clock.Now
	cfg.SignatureAgents = map[string][]string{"https://signature-agent.test": {"TestBot", "Googlebot"}}
	return newTestVerifier(t, cfg)
}

func waitDecided(t *testing.T, v *Verifier, token string, r *http.Request) Result {
	t.Helper()
	var res Result
	waitUntil(t, func() bool {
		res = v.Verify(token, netip.MustParseAddr("192.0.2.1"), r)
		return res.Outcome != Pending
	})
	return res
}

func TestWebBotAuth(t *testing.T) {
	d := newDirServer(t)
	clock := newClock()
	clock.t = time.Unix(1735689600+60, 0)
	v := wbaVerifier(t, d, clock, Config{})
	addr := netip.MustParseAddr("192.0.2.1")
	r := draftVectors[0].request()
	if got := v.Verify("TestBot", addr, r); got != (Result{Outcome: Pending, Method: WebBotAuth}) {
		t.Errorf("before the directory: Verify = %+v, want pending web_bot_auth", got)
	}
	if got := waitDecided(t, v, "testbot", r); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
		t.Errorf("draft vector: Verify = %+v, want verified web_bot_auth", got)
	}
	if got := v.Verify("TestBot", addr, draftVectors[1].request()); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
		t.Errorf("legacy draft vector: Verify = %+v, want verified", got)
	}

	forgedSig := draftVectors[0].request()
	forgedSig.Header.Set("Signature", `sig2=:`+base64.StdEncoding.EncodeToString(make([]byte, 64))+`:`)
	otherHost := draftVectors[0].request()
	otherHost.Host = "victim.example"
	unknownKey := rfcTestRequest()
	unknownKey.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	sign(t, unknownKey, `s=("@authority" "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="someone-else";tag="web-bot-auth"`)
	noAuthority := rfcTestRequest()
	noAuthority.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	sign(t, noAuthority, `s=("@method" "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)
	noExpires := rfcTestRequest()
	noExpires.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	sign(t, noExpires, `s=("@authority" "signature-agent";key="a");created=1735689600;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)
	wider := rfcTestRequest()
	wider.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	sign(t, wider, `s=("@method" "@authority" "@path" "@query" "content-type" "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)
	otherTag := draftVectors[0].request()
	sign(t, otherTag, `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="other"`)
	unknownAgent := rfcTestRequest()
	unknownAgent.Header.Set("Signature-Agent", `a="https://unknown.test"`)
	sign(t, unknownAgent, `s=("@authority" "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)
	uncovered := rfcTestRequest() // the agent member is not covered
	uncovered.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
	sign(t, uncovered, `s=("@authority");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)

	tests := []struct {
		name  string
		token string
		r     *http.Request
		want  Result
	}{
		{"covering more components", "TestBot", wider, Result{Outcome: Verified, Method: WebBotAuth}},
		{"a token with other methods: the signature decides first", "Googlebot", draftVectors[0].request(), Result{Outcome: Verified, Method: WebBotAuth}},
		// Forged only when every method says so: reverse DNS is still to
		// answer for this address.
		{"a token with other methods: a bad signature waits for them", "Googlebot", forgedSig, Result{Outcome: Pending, Method: ReverseDNS}},
		{"bad signature", "TestBot", forgedSig, Result{Outcome: Forged, Method: WebBotAuth}},
		{"replayed to another host", "TestBot", otherHost, Result{Outcome: Forged, Method: WebBotAuth}},
		{"key not in directory", "TestBot", unknownKey, Result{Outcome: Forged, Method: WebBotAuth}},
		{"neither @authority nor @target-uri", "TestBot", noAuthority, Result{Outcome: Forged, Method: WebBotAuth}},
		{"no expires", "TestBot", noExpires, Result{Outcome: Forged, Method: WebBotAuth}},
		// TestBot's agent is configured, so it must sign: a claim that no
		// signature of its agent covers is forged.
		{"not tagged web-bot-auth", "TestBot", otherTag, Result{Outcome: Forged, Method: WebBotAuth}},
		{"agent unknown", "TestBot", unknownAgent, Result{Outcome: Forged, Method: WebBotAuth}},
		{"agent member not covered", "TestBot", uncovered, Result{Outcome: Forged, Method: WebBotAuth}},
		{"unsigned", "TestBot", rfcTestRequest(), Result{Outcome: Forged, Method: WebBotAuth}},
		{"no request (the command line's question)", "TestBot", nil, Result{Outcome: Unverified}},
		{"agent not known for the token", "ChatGPT-User", draftVectors[0].request(), Result{Outcome: Unverified}},
	}
	for _, tt := range tests {
		if got := v.Verify(tt.token, addr, tt.r); got != tt.want {
			t.Errorf("%s: Verify(%s) = %+v, want %+v", tt.name, tt.token, got, tt.want)
		}
	}

	if n := d.hits.Load(); n != 1 {
		t.Errorf("directory fetched %d times within its max-age, want 1", n)
	}
	// Past max-age (600 s) the directory is fetched again, once, while the
	// keys held keep verifying; the legacy vector expires an hour after it
	// was made.
	clock.Advance(2 * time.Hour)
	if got := v.Verify("TestBot", addr, draftVectors[1].request()); got != (Result{Outcome: Forged, Method: WebBotAuth}) {
		t.Errorf("expired: Verify = %+v, want forged", got)
	}
	if got := v.Verify("TestBot", addr, draftVectors[0].request()); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
		t.Errorf("stale directory: Verify = %+v, want verified by the keys held", got)
	}
	waitUntil(t, func() bool { return d.hits.Load() == 2 })
}

// A directory that cannot be fetched is no evidence: the token's other
// methods decide, or the claim stays Pending.
func TestWebBotAuthDirectoryFailure(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    func(d *dirServer)
	}{
		{"redirect not followed", func(d *dirServer) { d.status = http.StatusFound }},
		{"server error", func(d *dirServer) { d.status = 500 }},
		{"wrong media type", func(d *dirServer) { d.ctype = "text/html" }},
		{"no usable key", func(d *dirServer) { d.body = `{"keys":[]}` }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirServer(t)
			d.set(tt.f)
			clock := newClock()
			clock.t = time.Unix(1735689600+60, 0)
			var events sync.Map
			v := wbaVerifier(t, d, clock, Config{OnEvent: func(ev Event) { events.Store(ev.Kind, true) }})
			r := draftVectors[0].request()
			v.Verify("TestBot", netip.MustParseAddr("192.0.2.1"), r)
			waitUntil(t, func() bool { _, ok := events.Load(EventDirectoryFailed); return ok })
			if got := v.Verify("TestBot", netip.MustParseAddr("192.0.2.1"), r); got != (Result{Outcome: Pending, Method: WebBotAuth}) {
				t.Errorf("token with no other method: Verify = %+v, want pending", got)
			}
			if got := v.Verify("Googlebot", netip.MustParseAddr("192.0.2.1"), r); got.Method != ReverseDNS {
				t.Errorf("token with reverse dns: Verify = %+v, want reverse dns to decide", got)
			}
			v.wba.mu.Lock()
			queued := v.wba.dirs["https://signature-agent.test"].queued
			v.wba.mu.Unlock()
			if n := d.hits.Load(); n != 1 || queued {
				t.Errorf("directory fetched %d times, another queued %v; want 1 and none (negative caching)", n, queued)
			}
		})
	}
}

func TestCacheTTL(t *testing.T) {
	for cc, want := range map[string]time.Duration{
		"":                   defaultDirectoryTTL,
		"max-age=86400":      maxDirectoryTTL,
		"max-age=999999":     maxDirectoryTTL,
		"public, max-age=60": minDirectoryTTL,
		"max-age=1800":       30 * time.Minute,
		"no-store":           minDirectoryTTL,
	} {
		h := http.Header{}
		if cc != "" {
			h.Set("Cache-Control", cc)
		}
		if got := cacheTTL(h); got != want {
			t.Errorf("cacheTTL(%q) = %v, want %v", cc, got, want)
		}
	}
}

// A remembered signature is judged again when anything it covered
// changes, and stops verifying when its key leaves the directory.
func TestWebBotAuthSignatureCache(t *testing.T) {
	d := newDirServer(t)
	clock := newClock()
	clock.t = time.Unix(1735689600+60, 0)
	v := wbaVerifier(t, d, clock, Config{})
	addr := netip.MustParseAddr("192.0.2.1")
	mk := func(target, ctype string) *http.Request {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Content-Type", ctype)
		return r
	}
	var signed *http.Request
	for _, covered := range []string{
		`"@target-uri" "@method" "content-type"`,
		`"@authority" "@path" "@query" "@method" "@scheme" "content-type"`,
		`"@authority" "@request-target" "@method" "content-type"`,
	} {
		signed = mk("http://example.com/a/b?x=1", "text/plain")
		signed.RequestURI = "/a/b?x=1"
		signed.Header.Set("Signature-Agent", `a="https://signature-agent.test"`)
		sign(t, signed, `s=(`+covered+` "signature-agent";key="a");created=1735689600;expires=1735693200;keyid="`+rfcEd25519Thumbprint+`";tag="web-bot-auth"`)
		if got := waitDecided(t, v, "TestBot", signed); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
			t.Fatalf("Verify = %+v, want verified", got)
		}
		replay := func(target, ctype, method string) *http.Request {
			r := mk(target, ctype)
			r.Method = method
			r.RequestURI = r.URL.RequestURI()
			for _, h := range []string{"Signature", "Signature-Input", "Signature-Agent"} {
				r.Header[h] = signed.Header[h]
			}
			return r
		}
		for _, tt := range []struct {
			name string
			r    *http.Request
			want Outcome
		}{
			{"same request again", replay("http://example.com/a/b?x=1", "text/plain", "GET"), Verified},
			{"other query", replay("http://example.com/a/b?x=2", "text/plain", "GET"), Forged},
			{"no query", replay("http://example.com/a/b", "text/plain", "GET"), Forged},
			{"other path", replay("http://example.com/a/c?x=1", "text/plain", "GET"), Forged},
			{"other host", replay("http://example.org/a/b?x=1", "text/plain", "GET"), Forged},
			{"other method", replay("http://example.com/a/b?x=1", "text/plain", "POST"), Forged},
			{"other covered header", replay("http://example.com/a/b?x=1", "text/html", "GET"), Forged},
		} {
			if got := v.Verify("TestBot", addr, tt.r); got.Outcome != tt.want {
				t.Errorf("covering %s: %s: Verify = %+v, want %v", covered, tt.name, got, tt.want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { v.Verify("TestBot", addr, signed) }); n != 0 {
		t.Errorf("remembered signature: %v allocations per Verify, want 0", n)
	}

	// The agent rotates its key away; once the directory is fetched again,
	// the remembered signature no longer verifies.
	d.set(func(d *dirServer) {
		d.body = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`
	})
	clock.Advance(11 * time.Minute) // past max-age=600
	v.Verify("TestBot", addr, signed)
	waitUntil(t, func() bool { return v.Verify("TestBot", addr, signed).Outcome == Forged })
}

// A keyid missing from a directory copy older than minRefetchForKey makes
// the directory fetched again (the agent may have added the key): Pending,
// then decided by the new copy. A fresher copy decides at once.
func TestWebBotAuthNewKey(t *testing.T) {
	d := newDirServer(t)
	d.set(func(d *dirServer) {
		d.body = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`
		d.cache = "max-age=3600"
	})
	clock := newClock()
	clock.t = time.Unix(1735689600+60, 0)
	v := wbaVerifier(t, d, clock, Config{})
	addr := netip.MustParseAddr("192.0.2.1")
	r := draftVectors[0].request()
	if got := waitDecided(t, v, "TestBot", r); got != (Result{Outcome: Forged, Method: WebBotAuth}) {
		t.Fatalf("keyid not in a fresh directory: Verify = %+v, want forged", got)
	}
	d.set(func(d *dirServer) {
		d.body = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + rfcEd25519X + `"}]}`
	})
	clock.Advance(minRefetchForKey + time.Second)
	if got := v.Verify("TestBot", addr, r); got != (Result{Outcome: Pending, Method: WebBotAuth}) {
		t.Errorf("keyid not in an older directory: Verify = %+v, want pending while it is fetched again", got)
	}
	if got := waitDecided(t, v, "TestBot", r); got != (Result{Outcome: Verified, Method: WebBotAuth}) {
		t.Errorf("after the refetch: Verify = %+v, want verified", got)
	}
	if n := d.hits.Load(); n != 2 {
		t.Errorf("directory fetched %d times, want 2", n)
	}
}
