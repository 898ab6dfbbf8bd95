package verify

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// maxDirectoryKeys bounds the keys read from one directory: the webbotauth
// draft's SSRF considerations ask for a key count limit, and an operator
// rotating keys publishes two or three.
const maxDirectoryKeys = 32

// dirKey is one usable key of a directory.
type dirKey struct {
	pub      ed25519.PublicKey
	nbf, exp int64 // Unix seconds; 0 when absent
}

type rawJWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Nbf int64  `json:"nbf"`
	Exp int64  `json:"exp"`
}

// parseDirectory reads an HTTP Message Signatures directory: a JWK Set
// (RFC 7517 §5). Ed25519 keys (RFC 8037) are kept, by their RFC 7638
// thumbprint; a key whose "kid" is not that thumbprint is dropped, as the
// draft requires kid to be the thumbprint at the well-known URI. Other key
// types are skipped. A directory with no usable key is an error.
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
	for _, raw := range set.Keys {
		var k rawJWK
		if json.Unmarshal(raw, &k) != nil || k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		pub, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			continue
		}
		tp := thumbprintEd25519(base64.RawURLEncoding.EncodeToString(pub))
		if k.Kid != "" && k.Kid != tp {
			continue
		}
		keys[tp] = dirKey{pub: pub, nbf: k.Nbf, exp: k.Exp}
	}
	if len(keys) == 0 {
		return nil, errors.New("key directory: no usable Ed25519 key")
	}
	return keys, nil
}

// thumbprintEd25519 is the JWK SHA-256 thumbprint (RFC 7638 §3) of an
// Ed25519 key with base64url public key x: the hash of the required
// members crv, kty, x in lexicographic order, no white space (RFC 8037
// Appendix A.3).
func thumbprintEd25519(x string) string {
	h := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
