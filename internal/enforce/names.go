package enforce

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/agent"
)

// MaxNames bounds the product tokens a client is known by (clientNames):
// a crawler names itself in its first words, and each name costs a
// robots.txt fetch a note in the Served table, so a header of a hundred
// made-up words must not cost a hundred.
const MaxNames = 8

// clientNames returns the product tokens a client whose header reads as
// toks and c is known by: the word that marked it automated ("MJ12bot",
// "360Spider", "AI2Bot", which the candidate tokens read as "MJ", none
// and "AI"), then its candidates that are not generic browser words, in
// header order, each once, case-insensitively, at most MaxNames. A fetch
// of robots.txt is noted under these names, and a later request looks up
// what it was served under the names of its own header, so that the two
// meet whatever token the decision names the client by. A header of
// generic words alone has none: the client is then its address and its
// whole header.
func clientNames(toks *agent.Tokens, c *agent.Classification) []string {
	var out []string
	add := func(tok string) bool {
		if tok == "" || len(tok) > maxServedToken {
			return true
		}
		for _, have := range out {
			if strings.EqualFold(have, tok) {
				return true
			}
		}
		out = append(out, tok)
		return len(out) < MaxNames
	}
	if c.Automation == agent.AutomatedCatalogue || c.Automation == agent.AutomatedKeyword {
		add(c.Token)
	}
	for tok := range toks.Candidates(false) {
		if !add(tok) {
			break
		}
	}
	return out
}

// nameClient gives h the names of the client that sends the header ua.
func (h *readHeader) nameClient(ua string) {
	h.names = clientNames(&h.tokens, &h.class)
	h.keys = make([]string, len(h.names))
	for i, name := range h.names {
		h.keys[i] = strings.ToLower(name)
	}
	if len(h.names) == 0 {
		h.agent = agentDigest(ua)
	}
}

// key returns tok lower-case, as the Served and Violators tables key it:
// the header's own key when tok is one of its names, uncopied.
func (h *readHeader) key(tok string) string {
	for _, k := range h.keys {
		if strings.EqualFold(k, tok) {
			return k
		}
	}
	return strings.ToLower(tok)
}

// agentDigest names a client with no product token by a digest of its
// User-Agent, so that a long header costs no more than a short one.
func agentDigest(ua string) string {
	sum := sha256.Sum256([]byte(ua))
	return hex.EncodeToString(sum[:8])
}
