package verify

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/dunglas/httpsfv"
)

// maxClockSkew is allowed between a signer's clock and ours when checking
// created and expires: agents' clocks are NTP-synchronized, and a minute
// is small beside the hour a signature typically lives.
const maxClockSkew = time.Minute

// errUnknownKey: the keyid is not in the agent's directory as we hold it.
var errUnknownKey = errors.New("keyid not in the agent's directory")

// webBotAuthTag is the tag signature parameter the protocol requires.
const webBotAuthTag = "web-bot-auth"

// wbaState is the Web Bot Auth part of a Verifier.
type wbaState struct {
	v      *Verifier
	agents map[string][]*tokenEntry // origin → tokens it speaks for
	mu     sync.Mutex
	dirs   map[string]*dirEntry // by origin; only known agents, so bounded
	queue  chan string
	cache  *sigCache
}

func newWBAState(v *Verifier) (*wbaState, error) {
	w := &wbaState{v: v, agents: make(map[string][]*tokenEntry), dirs: make(map[string]*dirEntry),
		queue: make(chan string, directoryQueueSize), cache: newSigCache()}
	add := func(agent string, tokens []string) error {
		origin, err := agentOrigin(agent)
		if err != nil {
			return err
		}
		for _, tok := range tokens {
			e := v.tokens.add(tok)
			e.agents = true
			w.agents[origin] = append(w.agents[origin], e)
		}
		return nil
	}
	for _, a := range builtinAgents {
		if err := add(a.Origin, a.Tokens); err != nil {
			return nil, err
		}
	}
	for agent, toks := range v.cfg.SignatureAgents {
		if err := add(agent, toks); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// speaksFor reports whether the agent at origin signs for e.
func (w *wbaState) speaksFor(origin string, e *tokenEntry) bool {
	for _, t := range w.agents[origin] {
		if t == e {
			return true
		}
	}
	return false
}

// verify judges a request's Web Bot Auth signatures for e
// (draft-ietf-webbotauth-httpsig-protocol-01, "Validating Message
// Signature"). It decides only when some signature tagged web-bot-auth
// covers a Signature-Agent member naming an agent known to speak for e;
// otherwise the other methods decide. Among such signatures, one that
// verifies gives Verified; else one awaiting its directory gives Pending;
// else Forged. A directory that could not be fetched is no evidence: the
// other methods decide, or Pending when the token has no other.
func (w *wbaState) verify(e *tokenEntry, r *http.Request) (Result, bool) {
	// The header is indexed directly by canonical keys (net/http stores
	// them so): Values would canonicalize the key again on every request.
	inputs := r.Header["Signature-Input"]
	agentField := r.Header["Signature-Agent"]
	if len(inputs) == 0 || len(agentField) == 0 {
		return Result{}, false
	}
	if w.cachedVerified(e, r, inputs, agentField, w.v.unixNow()) {
		return Result{Outcome: Verified, Method: WebBotAuth}, true
	}
	sigs, err := parseSignatureInput(inputs)
	if err != nil {
		return Result{}, false
	}
	now := w.v.cfg.Now()
	pending, failed, forged := false, false, false
	for _, si := range sigs {
		if si.tag != webBotAuthTag {
			continue // RFC 9421 §3.2 step 4: not a signature of this profile
		}
		origin, ok := signedAgent(si, agentField)
		if !ok || !w.speaksFor(origin, e) {
			continue
		}
		keys, dirFailed, dir, gen := w.directoryEntry(origin, now)
		switch {
		case keys == nil && dirFailed:
			failed = true
			continue
		case keys == nil:
			pending = true
			continue
		}
		err := checkSignature(r, si, keys, now)
		switch {
		case err == nil:
			w.remember(e, r, si, origin, keys[si.keyid], dir, gen)
			return Result{Outcome: Verified, Method: WebBotAuth}, true
		case errors.Is(err, errUnsupported):
			continue
		case errors.Is(err, errUnknownKey) && w.refetchForKey(origin, now):
			// Perhaps a key newer than our copy of the directory.
			pending = true
		default:
			forged = true
		}
	}
	switch {
	case pending:
		return Result{Outcome: Pending, Method: WebBotAuth}, true
	case forged:
		return Result{Outcome: Forged, Method: WebBotAuth}, true
	case failed && len(e.lists) == 0 && len(e.suffixes) == 0:
		return Result{Outcome: Pending, Method: WebBotAuth}, true
	}
	return Result{}, false
}

// signedAgent returns the origin of the Signature-Agent member si covers:
// the member named by ;key on the covered "signature-agent" component, or,
// for the legacy form (a bare sf-string field, covered without ;key), the
// field itself. Only the directory type (no type parameter, or
// type=directory) is resolved.
func signedAgent(si sigInput, field []string) (string, bool) {
	for _, c := range si.components {
		if c.Value.(string) != "signature-agent" {
			continue
		}
		var key string
		if c.Params != nil {
			if k, ok := c.Params.Get("key"); ok {
				key, _ = k.(string)
			}
		}
		var item httpsfv.Item
		if key == "" {
			if !strings.HasPrefix(strings.TrimSpace(field[0]), `"`) {
				return "", false
			}
			it, err := httpsfv.UnmarshalItem(field)
			if err != nil {
				return "", false
			}
			item = it
		} else {
			d, err := httpsfv.UnmarshalDictionary(field)
			if err != nil {
				return "", false
			}
			m, ok := d.Get(key)
			if !ok {
				return "", false
			}
			if item, ok = m.(httpsfv.Item); !ok {
				return "", false
			}
		}
		s, ok := item.Value.(string)
		if !ok {
			return "", false
		}
		if item.Params != nil {
			if t, ok := item.Params.Get("type"); ok && t != httpsfv.Token("directory") {
				return "", false
			}
		}
		origin, err := agentOrigin(s)
		return origin, err == nil
	}
	return "", false
}

// checkSignature verifies si over r with a key from keys: the parameters
// the protocol requires (created, expires, a keyid known to the directory,
// alg ed25519 if given), @authority or @target-uri covered, and the Ed25519
// signature over the signature base (RFC 9421 §3.2, §3.3.6).
func checkSignature(r *http.Request, si sigInput, keys map[string]dirKey, now time.Time) error {
	k, ok := keys[si.keyid]
	switch {
	case !ok:
		return errUnknownKey
	case !si.hasCreated || !si.hasExpires:
		return errors.New("created or expires missing")
	case si.alg != "" && si.alg != "ed25519":
		return errors.New("alg is not ed25519")
	}
	t := now.Unix()
	skew := int64(maxClockSkew / time.Second)
	switch {
	case si.created > t+skew:
		return errors.New("created in the future")
	case si.expires < t-skew:
		return errors.New("expired")
	case k.nbf != 0 && t+skew < k.nbf, k.exp != 0 && t-skew > k.exp:
		return errors.New("key not valid now")
	}
	if !coversAuthority(si) {
		return errors.New("neither @authority nor @target-uri covered")
	}
	base, err := signatureBase(r, si)
	if err != nil {
		return err
	}
	sig, err := signatureValue(r.Header.Values("Signature"), si.label)
	if err != nil {
		return err
	}
	if !ed25519.Verify(k.pub, base, sig) {
		return errors.New("signature does not verify")
	}
	return nil
}

func coversAuthority(si sigInput) bool {
	for _, c := range si.components {
		if n := c.Value.(string); n == "@authority" || n == "@target-uri" {
			return true
		}
	}
	return false
}
