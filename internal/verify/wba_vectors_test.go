package verify

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

// The published test vectors of Web Bot Auth, copied under
// testdata/verify (see its README): the draft's appendix, and the two
// files Cloudflare's web-bot-auth package tests itself with.
const (
	draftVectorFile   = "../../testdata/verify/draft-httpsig-protocol-vectors.json"
	cloudflareV1File  = "../../testdata/verify/cloudflare-web-bot-auth-architecture-v1.json"
	cloudflareV2File  = "../../testdata/verify/cloudflare-web-bot-auth-architecture-v2.json"
	pinnedRFCKeyFile  = "../../testdata/verify/directory-rfc9421-test-key.json"
	vectorAgentOrigin = "https://signature-agent.test"
	vectorCreated     = 1735689600
)

// pubVector is one signed request of a vector file, in either file's
// shape.
type pubVector struct {
	Name           string          `json:"name"`
	Key            json.RawMessage `json:"key"`
	TargetURL      string          `json:"target_url"`
	Authority      string          `json:"authority"`
	SignatureAgent string          `json:"signature_agent"`
	SignatureInput string          `json:"signature_input"`
	Signature      string          `json:"signature"`
	Base           string          `json:"base"`
	Label          string          `json:"label"`
}

func (pv pubVector) request() *http.Request {
	target := pv.TargetURL
	if target == "" {
		target = "http://" + pv.Authority + "/foo?param=Value&Pet=dog" // RFC 9421's test-request
	}
	r := httptest.NewRequest("GET", target, nil)
	r.TLS = nil // the authority is compared without a port either way
	if pv.SignatureAgent != "" {
		r.Header.Set("Signature-Agent", pv.SignatureAgent)
	}
	r.Header.Set("Signature-Input", pv.SignatureInput)
	r.Header.Set("Signature", pv.Signature)
	return r
}

func loadVectors(t *testing.T, path string) []pubVector {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []pubVector
	if strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
		err = json.Unmarshal(body, &out)
	} else {
		var doc struct {
			Requests []pubVector `json:"request_vectors"`
		}
		err = json.Unmarshal(body, &doc)
		out = doc.Requests
	}
	if err != nil || len(out) == 0 {
		t.Fatalf("%s: %d vectors, %v", path, len(out), err)
	}
	return out
}

// checkVector checks one vector against the package's pieces: the
// signature base (byte for byte where the file gives it), the agent the
// signature is attributed to, the key's thumbprint as its keyid, and the
// signature: Ed25519 through checkSignature; RSA-PSS, which the verifier
// sets aside, through crypto/rsa over the base built here, so that the
// base is proved right for those too.
func checkVector(t *testing.T, pv pubVector) {
	t.Helper()
	r := pv.request()
	sigs, err := parseSignatureInput(r.Header.Values("Signature-Input"))
	if err != nil || len(sigs) != 1 {
		t.Fatalf("parseSignatureInput: %v, %d signatures", err, len(sigs))
	}
	si := sigs[0]
	base, err := signatureBase(r, si)
	if err != nil {
		t.Fatalf("signatureBase: %v", err)
	}
	if pv.Base != "" && string(base) != pv.Base {
		t.Errorf("signature base:\n%s\nwant:\n%s", base, pv.Base)
	}
	origin, named := signedAgent(si, r.Header.Values("Signature-Agent"))
	if want := pv.SignatureAgent != ""; named != want || named && origin != vectorAgentOrigin {
		t.Errorf("signedAgent = %q, %v; want %v", origin, named, want)
	}
	var k rawJWK
	if err := json.Unmarshal(pv.Key, &k); err != nil {
		t.Fatal(err)
	}
	tp, ok := k.thumbprint()
	if !ok || tp != si.keyid {
		t.Fatalf("thumbprint of the vector's key = %q, %v; want the keyid %q", tp, ok, si.keyid)
	}
	// The published keys carry their private part and a kid that is a
	// name, not the thumbprint: a directory holds the public part, under
	// the thumbprint or no kid (a kid of another value drops the key).
	keys, err := parseDirectory([]byte(`{"keys":[` + publicJWK(t, k, false) + `]}`))
	if k.Kty == "RSA" {
		// A directory of an RSA key alone verifies nothing here.
		if err == nil {
			t.Errorf("parseDirectory(an RSA key alone) = %v, want an error", keys)
		}
		keys = map[string]dirKey{tp: {}}
	} else if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(vectorCreated+60, 0)
	_, _, err = checkSignature(r, si, keys, at)
	sig, serr := signatureValue(r.Header.Values("Signature"), si.label)
	if serr != nil {
		t.Fatal(serr)
	}
	switch k.Kty {
	case "OKP":
		if err != nil {
			t.Errorf("checkSignature: %v", err)
		}
		r.Host = "example.org"
		if _, _, err := checkSignature(r, si, keys, at); err == nil {
			t.Error("checkSignature over another authority: nil error")
		}
	case "RSA":
		if !errors.Is(err, errUnsupported) {
			t.Errorf("checkSignature with an RSA key = %v, want errUnsupported (set aside)", err)
		}
		n, _ := b64url.DecodeString(k.N)
		e, _ := b64url.DecodeString(k.E)
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		h := sha512.Sum512(base)
		if err := rsa.VerifyPSS(pub, crypto.SHA512, h[:], sig, &rsa.PSSOptions{SaltLength: 64}); err != nil {
			t.Errorf("the vector's RSA-PSS signature does not verify over the base built here: %v", err)
		}
	}
}

func TestDraftVectorFile(t *testing.T) {
	for _, pv := range loadVectors(t, draftVectorFile) {
		t.Run(pv.Name, func(t *testing.T) { checkVector(t, pv) })
	}
	// The signed directory response: its body is a directory this parser
	// reads, its Content-Digest is that body's, and its signature verifies
	// with the key it publishes (the proof itself is not checked by the
	// verifier, which fetches directories itself).
	body, err := os.ReadFile(draftVectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Dir map[string]string `json:"signed_directory_response"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	keys, err := parseDirectory([]byte(doc.Dir["body"]))
	if err != nil || keys[rfcEd25519Thumbprint].pub == nil {
		t.Fatalf("parseDirectory(the draft's signed directory) = %v, %v", keys, err)
	}
	sum := sha256.Sum256([]byte(doc.Dir["body"]))
	if want := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"; doc.Dir["content_digest"] != want {
		t.Errorf("Content-Digest %s, want %s", doc.Dir["content_digest"], want)
	}
	sig, err := signatureValue([]string{doc.Dir["signature"]}, "binding")
	if err != nil || !ed25519.Verify(keys[rfcEd25519Thumbprint].pub, []byte(doc.Dir["base"]), sig) {
		t.Errorf("the directory's binding signature does not verify (%v)", err)
	}
}

func TestCloudflareVectorFiles(t *testing.T) {
	for _, path := range []string{cloudflareV1File, cloudflareV2File} {
		for _, pv := range loadVectors(t, path) {
			var k rawJWK
			_ = json.Unmarshal(pv.Key, &k)
			name := strings.TrimSuffix(path[strings.LastIndex(path, "-")+1:], ".json") + "/" + pv.Label + "/" + k.Kty
			t.Run(name, func(t *testing.T) { checkVector(t, pv) })
		}
	}
}

// Every vector through a Verifier whose agent signature-agent.test speaks
// for TestBot: Ed25519 with the agent named verifies, with keys pinned
// from the file (no fetch) or fetched from the directory; RSA-PSS is set
// aside (unverified, neither proof nor forgery); a vector that names no
// agent leaves a token that must be signed forged.
func TestVectorsThroughVerifier(t *testing.T) {
	var all []pubVector
	for _, p := range []string{draftVectorFile, cloudflareV1File, cloudflareV2File} {
		all = append(all, loadVectors(t, p)...)
	}
	d := newDirServer(t)
	rsaKey := string(loadVectors(t, cloudflareV2File)[0].Key)
	var rsaJWK rawJWK
	if err := json.Unmarshal([]byte(rsaKey), &rsaJWK); err != nil {
		t.Fatal(err)
	}
	d.set(func(d *dirServer) {
		d.body = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + rfcEd25519X + `"},` + publicJWK(t, rsaJWK, true) + `]}`
	})
	clock := newClock()
	clock.t = time.Unix(vectorCreated+60, 0)
	agents := map[string][]string{vectorAgentOrigin: {"TestBot"}}
	fetched := newTestVerifier(t, Config{WebBotAuth: true, HTTPClient: d.client(), Now: clock.Now, SignatureAgents: agents})
	pinned := newTestVerifier(t, Config{WebBotAuth: true, HTTPClient: d.client(), Now: clock.Now, SignatureAgents: agents,
		AgentKeys: map[string]string{vectorAgentOrigin: pinnedRFCKeyFile}})
	addr := netip.MustParseAddr("192.0.2.1")
	waitDecided(t, fetched, "TestBot", all[len(all)-1].request())
	for _, pv := range all {
		var k rawJWK
		_ = json.Unmarshal(pv.Key, &k)
		want := Result{Outcome: Verified, Method: WebBotAuth}
		switch {
		case pv.SignatureAgent == "":
			want = Result{Outcome: Forged, Method: WebBotAuth}
		case k.Kty == "RSA":
			want = Result{Outcome: Unverified}
		}
		if got := fetched.Verify("TestBot", addr, pv.request()); got != want {
			t.Errorf("%s %s (directory fetched): Verify = %+v, want %+v", pv.Name, pv.Label, got, want)
		}
		if k.Kty == "RSA" && pv.SignatureAgent != "" {
			want = Result{Outcome: Forged, Method: WebBotAuth} // not among the pinned keys
		}
		if got := pinned.Verify("TestBot", addr, pv.request()); got != want {
			t.Errorf("%s %s (keys pinned): Verify = %+v, want %+v", pv.Name, pv.Label, got, want)
		}
	}
	if n := d.hits.Load(); n != 1 {
		t.Errorf("directory fetched %d times, want once (by the verifier without pinned keys)", n)
	}
}

// publicJWK is the public part of a key (kty, crv and x, or kty, n and
// e), with its thumbprint as kid when withKid.
func publicJWK(t *testing.T, k rawJWK, withKid bool) string {
	t.Helper()
	m := map[string]string{"kty": k.Kty}
	if k.Kty == "RSA" {
		m["n"], m["e"] = k.N, k.E
	} else {
		m["crv"], m["x"] = k.Crv, k.X
	}
	if withKid {
		tp, ok := k.thumbprint()
		if !ok {
			t.Fatalf("no thumbprint for %+v", k)
		}
		m["kid"] = tp
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
