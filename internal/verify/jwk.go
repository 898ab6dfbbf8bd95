package verify

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// maxDirectoryKeys bounds the keys read from one directory: the webbotauth
// draft's SSRF considerations ask for a key count limit, and an operator
// rotating keys publishes two or three.
const maxDirectoryKeys = 32

// dirKey is one key of a directory, by its RFC 7638 thumbprint.
type dirKey struct {
	// pub is the Ed25519 public key; nil for a key of a type the draft
	// allows but this verifier does not check (RSA, EC): a signature by
	// such a key is set aside rather than judged forged.
	pub      ed25519.PublicKey
	nbf, exp int64 // Unix seconds; 0 when absent
}

// rawJWK holds the members of a JWK (RFC 7517 §4) that are read.
type rawJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	N   string `json:"n"`
	E   string `json:"e"`
	D   string `json:"d"`
	Kid string `json:"kid"`
	Nbf int64  `json:"nbf"`
	Exp int64  `json:"exp"`
}

// b64url decodes an unpadded base64url member strictly: the thumbprint
// embeds members as they are, so only the alphabet's characters may pass.
var b64url = base64.RawURLEncoding.Strict()

// thumbprint returns the key's RFC 7638 §3 thumbprint, the keyid the
// webbotauth draft requires, for the key types it names: OKP (Ed25519,
// RFC 8037 Appendix A.3), RSA (§3.2: e, kty, n) and EC (crv, kty, x, y).
// It reports false for another type or a malformed member.
func (k rawJWK) thumbprint() (string, bool) {
	valid := func(members ...string) bool {
		for _, m := range members {
			if b, err := b64url.DecodeString(m); err != nil || len(b) == 0 {
				return false
			}
		}
		return true
	}
	var canon string
	switch {
	case k.Kty == "OKP" && k.Crv == "Ed25519":
		if b, err := b64url.DecodeString(k.X); err != nil || len(b) != ed25519.PublicKeySize {
			return "", false
		}
		return thumbprintEd25519(k.X), true
	case k.Kty == "RSA" && valid(k.N, k.E):
		canon = `{"e":"` + k.E + `","kty":"RSA","n":"` + k.N + `"}`
	case k.Kty == "EC" && (k.Crv == "P-256" || k.Crv == "P-384" || k.Crv == "P-521") && valid(k.X, k.Y):
		canon = `{"crv":"` + k.Crv + `","kty":"EC","x":"` + k.X + `","y":"` + k.Y + `"}`
	default:
		return "", false
	}
	h := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(h[:]), true
}

// parseDirectory reads an HTTP Message Signatures directory: a JWK Set
// (RFC 7517 §5). Keys are kept by their RFC 7638 thumbprint; a key whose
// "kid" is not that thumbprint is dropped, as the draft requires kid to be
// the thumbprint at the well-known URI. Ed25519 keys (RFC 8037) verify;
// RSA and EC keys are kept as known but unchecked, so that their
// signatures are set aside, not judged forged; other entries are skipped.
// A directory with no Ed25519 key is an error: it can verify nothing.
func parseDirectory(body []byte) (map[string]dirKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("key directory: %w", err)
	}
	if len(set.Keys) > maxDirectoryKeys {
		return nil, fmt.Errorf("key directory: %d keys, limit %d", len(set.Keys), maxDirectoryKeys)
	}
	keys := make(map[string]dirKey)
	usable := 0
	for _, raw := range set.Keys {
		var k rawJWK
		if json.Unmarshal(raw, &k) != nil {
			continue
		}
		tp, ok := k.thumbprint()
		if !ok || k.Kid != "" && k.Kid != tp {
			continue
		}
		dk := dirKey{nbf: k.Nbf, exp: k.Exp}
		if k.Kty == "OKP" {
			dk.pub, _ = b64url.DecodeString(k.X)
			usable++
		}
		keys[tp] = dk
	}
	if usable == 0 {
		return nil, errors.New("key directory: no usable Ed25519 key")
	}
	return keys, nil
}

// parsePinnedKeys reads keys an operator pins for an agent: a JWK Set in
// the directory's format, read strictly, since a key silently skipped
// would make the agent's every signature fail. Every entry must be a
// public Ed25519 key (kty OKP, crv Ed25519, a 32-octet x, no private d),
// with a kid, if any, equal to its thumbprint. A JSON error says where it
// is, by line and column.
func parsePinnedKeys(body []byte) (map[string]dirKey, error) {
	var set struct {
		Keys *[]rawJWK `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, jsonErrorAt(body, err)
	}
	switch {
	case set.Keys == nil:
		return nil, errors.New(`no "keys" array: want a JWK Set, {"keys": [...]}`)
	case len(*set.Keys) == 0:
		return nil, errors.New(`"keys" is empty: want at least one Ed25519 key`)
	case len(*set.Keys) > maxDirectoryKeys:
		return nil, fmt.Errorf("%d keys, limit %d", len(*set.Keys), maxDirectoryKeys)
	}
	keys := make(map[string]dirKey, len(*set.Keys))
	for i, k := range *set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			return nil, fmt.Errorf("keys[%d]: kty %q, crv %q: only Ed25519 keys (kty OKP, crv Ed25519) can be pinned", i, k.Kty, k.Crv)
		}
		if k.D != "" {
			return nil, fmt.Errorf("keys[%d]: holds a private key (\"d\"): pin the public key only", i)
		}
		tp, ok := k.thumbprint()
		if !ok {
			return nil, fmt.Errorf("keys[%d]: \"x\" is not a 32-octet Ed25519 public key in unpadded base64url", i)
		}
		if k.Kid != "" && k.Kid != tp {
			return nil, fmt.Errorf("keys[%d]: kid %q is not the key's RFC 7638 thumbprint %q", i, k.Kid, tp)
		}
		pub, _ := b64url.DecodeString(k.X)
		keys[tp] = dirKey{pub: pub, nbf: k.Nbf, exp: k.Exp}
	}
	return keys, nil
}

// jsonErrorAt adds the line and column (1-based, in octets) of a JSON
// syntax or type error: the decoder's offset counts the octets read, the
// offending one included. A type error is said in JSON's terms, not Go's.
func jsonErrorAt(body []byte, err error) error {
	var off int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
		if typ.Field == "" {
			err = errors.New(`not a JWK Set: want {"keys": [...]}`)
		} else {
			err = fmt.Errorf("%q is %s %s, want %s", typ.Field, article(typ.Value), typ.Value, jsonKind(typ.Type.Kind()))
		}
	}
	if off < 1 || off > int64(len(body)) {
		return err
	}
	line, col := 1, 1
	for _, c := range body[:off-1] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// jsonKind names the JSON value a Go kind decodes from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// thumbprintEd25519 is the JWK SHA-256 thumbprint (RFC 7638 §3) of an
// Ed25519 key with base64url public key x: the hash of the required
// members crv, kty, x in lexicographic order, no white space (RFC 8037
// Appendix A.3).
func thumbprintEd25519(x string) string {
	h := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
