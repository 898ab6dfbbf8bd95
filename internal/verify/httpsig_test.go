package verify

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// RFC 9421 Appendix B.1.4: the test-key-ed25519 key pair.
const (
	rfcEd25519Public = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----`
	rfcEd25519Private = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----`
	// Its JWK "x", and its RFC 7638 thumbprint as the webbotauth draft's
	// test vectors give it.
	rfcEd25519X          = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
	rfcEd25519Thumbprint = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
)

func rfcKeys(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	b, _ := pem.Decode([]byte(rfcEd25519Public))
	pub, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = pem.Decode([]byte(rfcEd25519Private))
	priv, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return pub.(ed25519.PublicKey), priv.(ed25519.PrivateKey)
}

// rfcTestRequest is RFC 9421 Appendix B.2's test-request.
func rfcTestRequest() *http.Request {
	r := httptest.NewRequest("POST", "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:")
	r.Header.Set("Content-Length", "18")
	return r
}

// RFC 9421 Appendix B.2.6: signing a request using ed25519. The signature
// base must be byte for byte the RFC's, and the RFC's signature must
// verify over it.
func TestRFC9421B26(t *testing.T) {
	pub, priv := rfcKeys(t)
	r := rfcTestRequest()
	r.Header.Set("Signature-Input", `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`)
	r.Header.Set("Signature", `sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:`)
	sigs, err := parseSignatureInput(r.Header.Values("Signature-Input"))
	if err != nil || len(sigs) != 1 {
		t.Fatalf("parseSignatureInput: %v, %d signatures", err, len(sigs))
	}
	base, err := signatureBase(r, sigs[0])
	if err != nil {
		t.Fatal(err)
	}
	wantBase := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	if string(base) != wantBase {
		t.Fatalf("signature base:\n%s\nwant:\n%s", base, wantBase)
	}
	sig, err := signatureValue(r.Header.Values("Signature"), "sig-b26")
	if err != nil {
		t.Fatal(err)
	}
	if !ed25519.Verify(pub, base, sig) {
		t.Error("the RFC's signature does not verify")
	}
	if got := ed25519.Sign(priv, base); string(got) != string(sig) {
		t.Error("signing the base with the RFC's key does not give the RFC's signature (Ed25519 is deterministic)")
	}
	r.Header.Set("Date", "Tue, 20 Apr 2021 02:07:56 GMT")
	base2, _ := signatureBase(r, sigs[0])
	if ed25519.Verify(pub, base2, sig) {
		t.Error("the signature verifies over a changed Date")
	}
}

// draftVector is one of draft-ietf-webbotauth-httpsig-protocol-01's Ed25519
// test vectors (section "Test Vectors", "EdDSA Using Curve edwards25519"):
// the dictionary form and the legacy sf-string form of Signature-Agent.
type draftVector struct {
	name, agent, input, signature, base string
}

var draftVectors = []draftVector{
	{
		name:      "dictionary",
		agent:     `agent2="https://signature-agent.test"`,
		input:     `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
		signature: `sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
		base: `"@authority": example.com
"signature-agent";key="agent2": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
	},
	{
		name:      "legacy sf-string",
		agent:     `"https://signature-agent.test"`,
		input:     `sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
		signature: `sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
		base: `"@authority": example.com
"signature-agent": "https://signature-agent.test"
"@signature-params": ("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
	},
}

func (dv draftVector) request() *http.Request {
	r := rfcTestRequest()
	r.Header.Set("Signature-Agent", dv.agent)
	r.Header.Set("Signature-Input", dv.input)
	r.Header.Set("Signature", dv.signature)
	return r
}

func TestDraftVectors(t *testing.T) {
	pub, _ := rfcKeys(t)
	keys := map[string]dirKey{rfcEd25519Thumbprint: {pub: pub}}
	at := time.Unix(1735689600+60, 0)
	for _, dv := range draftVectors {
		t.Run(dv.name, func(t *testing.T) {
			r := dv.request()
			sigs, err := parseSignatureInput(r.Header.Values("Signature-Input"))
			if err != nil {
				t.Fatal(err)
			}
			base, err := signatureBase(r, sigs[0])
			if err != nil || string(base) != dv.base {
				t.Fatalf("signature base (%v):\n%s\nwant:\n%s", err, base, dv.base)
			}
			if origin, ok := signedAgent(sigs[0], r.Header.Values("Signature-Agent")); !ok || origin != "https://signature-agent.test" {
				t.Errorf("signedAgent = %q, %v", origin, ok)
			}
			if _, _, err := checkSignature(r, sigs[0], keys, at); err != nil {
				t.Errorf("checkSignature: %v", err)
			}
			r.Host = "example.org"
			if _, _, err := checkSignature(r, sigs[0], keys, at); err == nil {
				t.Error("checkSignature over another authority: nil error")
			}
		})
	}
}

// RFC 8037 Appendix A.3 gives an Ed25519 key's thumbprint; the webbotauth
// draft's vectors give the RFC 9421 key's.
func TestThumbprint(t *testing.T) {
	for x, want := range map[string]string{
		"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo": "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k",
		rfcEd25519X: rfcEd25519Thumbprint,
	} {
		if got := thumbprintEd25519(x); got != want {
			t.Errorf("thumbprintEd25519(%s) = %s, want %s", x, got, want)
		}
	}
	pub, _ := rfcKeys(t)
	if base64.RawURLEncoding.EncodeToString(pub) != rfcEd25519X {
		t.Error("the RFC's PEM and JWK forms differ")
	}
}

func TestParseDirectory(t *testing.T) {
	tests := []struct {
		name, body string
		wantKeys   int
	}{
		{"draft example", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"` + rfcEd25519Thumbprint + `","x":"` + rfcEd25519X + `","use":"sig"}]}`, 1},
		{"no kid", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + rfcEd25519X + `"}]}`, 1},
		{"kid not the thumbprint", `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"test-key-ed25519","x":"` + rfcEd25519X + `"}]}`, 0},
		{"rsa only", `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`, 0},
		{"short x", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`, 0},
		{"not json", `<html>`, 0},
		{"too many", `{"keys":[` + strings.Repeat(`{},`, maxDirectoryKeys) + `{}]}`, 0},
	}
	for _, tt := range tests {
		keys, err := parseDirectory([]byte(tt.body))
		if len(keys) != tt.wantKeys || (tt.wantKeys == 0) != (err != nil) {
			t.Errorf("%s: parseDirectory = %d keys, %v; want %d", tt.name, len(keys), err, tt.wantKeys)
		}
	}
}

// FuzzSignatureInput checks that parsing never panics, respects its
// bounds, and that whatever parses yields a signature base (or a typed
// error) without panicking either.
func FuzzSignatureInput(f *testing.F) {
	for _, dv := range draftVectors {
		f.Add(dv.input, dv.agent)
	}
	for _, s := range []string{
		`sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`,
		`sig=();created=1`, `sig=("@query-param";name="x")`, `sig="not a list"`, `sig=(1 2)`, `a=(), b=("@method")`,
		`sig=("signature-agent";key="x" "@authority");created=9999999999999999;expires=-1;tag="web-bot-auth"`,
	} {
		f.Add(s, `x="https://a.test"`)
	}
	f.Fuzz(func(t *testing.T, input, agent string) {
		sigs, err := parseSignatureInput([]string{input})
		if err != nil {
			return
		}
		if len(sigs) > maxSignatures {
			t.Fatalf("%d signatures kept, limit %d", len(sigs), maxSignatures)
		}
		r := rfcTestRequest()
		r.Header.Set("Signature-Agent", agent)
		for _, si := range sigs {
			if len(si.components) > maxComponents {
				t.Fatalf("%d components kept", len(si.components))
			}
			base, err := signatureBase(r, si)
			if err == nil && !strings.Contains(string(base), `"@signature-params": (`) {
				t.Fatalf("base without @signature-params: %q", base)
			}
			signedAgent(si, []string{agent})
		}
	})
}

// RFC 9421 §2.1 and §2.2: component values.
func TestComponentValue(t *testing.T) {
	r := httptest.NewRequest("GET", "https://Example.COM:443/a%20b/c?x=1&y", nil)
	r.RequestURI = "/a%20b/c?x=1&y" // origin form, as a server receives it
	r.Header.Set("X-Spaced", "  one \t")
	r.Header.Add("X-Spaced", "two")
	r.Header.Set("Agent", `a="https://one.test", b="https://two.test";type=directory`)
	plain := httptest.NewRequest("GET", "http://example.com:80/", nil)
	tests := []struct {
		r    *http.Request
		in   string // Signature-Input member
		want string
	}{
		{r, `s=("@authority")`, "example.com"},
		{r, `s=("@scheme")`, "https"},
		{r, `s=("@method")`, "GET"},
		{r, `s=("@path")`, "/a%20b/c"},
		{r, `s=("@query")`, "?x=1&y"},
		{r, `s=("@target-uri")`, "https://example.com/a%20b/c?x=1&y"},
		{r, `s=("@request-target")`, "/a%20b/c?x=1&y"},
		{r, `s=("x-spaced")`, "one, two"},
		{r, `s=("agent";key="b")`, `"https://two.test";type=directory`},
		{plain, `s=("@authority")`, "example.com"},
		{plain, `s=("@target-uri")`, "http://example.com/"},
	}
	for _, tt := range tests {
		sigs, err := parseSignatureInput([]string{tt.in})
		if err != nil {
			t.Fatal(err)
		}
		got, err := componentValue(tt.r, sigs[0].components[0])
		if err != nil || got != tt.want {
			t.Errorf("componentValue(%s) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for in, want := range map[string]error{
		`s=("@query-param";name="x")`: errUnsupported,
		`s=("@status")`:               errUnsupported,
		`s=("x-spaced";bs)`:           errUnsupported,
		`s=("absent")`:                errInvalid,
		`s=("agent";key="c")`:         errInvalid,
	} {
		sigs, _ := parseSignatureInput([]string{in})
		if _, err := componentValue(r, sigs[0].components[0]); !errors.Is(err, want) {
			t.Errorf("componentValue(%s) error = %v, want %v", in, err, want)
		}
	}
}

// authorityIs agrees with authority (RFC 9421 §2.2.3) for every pair of
// ASCII hosts below, over http and https: it folds ASCII case and drops
// the scheme's default port, and nothing else. With other octets it may
// say no where authority agrees (the remembered signature is then checked
// afresh), never yes where authority differs.
func TestAuthorityIs(t *testing.T) {
	hosts := []string{"example.com", "Example.COM", "example.com:80", "EXAMPLE.com:443", "example.com:8443",
		"example.org", "examplE.co", "xn--bcher-kva.example", "BÜCHER.example", "bücher.example", "[2001:DB8::1]:443", "[2001:db8::1]", ""}
	for _, scheme := range []string{"http", "https"} {
		for _, h := range hosts {
			r := httptest.NewRequest("GET", scheme+"://placeholder/", nil) // TLS set for https
			r.Host = h
			for _, other := range hosts {
				o := httptest.NewRequest("GET", "http://placeholder/", nil)
				o.Host, o.TLS = other, r.TLS
				v := authority(o)
				got, want := authorityIs(r, v), authority(r) == v
				if !want && got || want && !got && isASCII(h) {
					t.Errorf("%s: authorityIs(Host %q, %q) = %v, want %v (authority %q)", scheme, h, v, got, want, authority(r))
				}
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
