package verify

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"time"
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
	// mustSign holds the tokens whose claims must be signed: those of the
	// configured agents, and of built-in agents that sign every request.
	mustSign map[*tokenEntry]bool
	// pinned holds the directories of agents whose keys the configuration
	// pins, by origin: built in New, never fetched, read without the lock.
	pinned map[string]*dirEntry
	mu     sync.Mutex
	dirs   map[string]*dirEntry // by origin; only known agents, so bounded
	queue  chan string
	cache  *sigCache
	// replays remembers each signature that verified with the client it
	// came from (wba_replay.go).
	replays *replayCache
}

func newWBAState(v *Verifier) (*wbaState, error) {
	w := &wbaState{v: v, agents: make(map[string][]*tokenEntry), mustSign: make(map[*tokenEntry]bool),
		pinned: make(map[string]*dirEntry), dirs: make(map[string]*dirEntry),
		queue: make(chan string, directoryQueueSize), cache: newSigCache(), replays: newReplayCache(v.cfg.replayCacheSize)}
	add := func(agent string, tokens []string, signsAll bool) error {
		origin, err := agentOrigin(agent)
		if err != nil {
			return err
		}
		for _, tok := range tokens {
			e := v.tokens.add(tok)
			e.agents = true
			if !w.speaksFor(origin, e) {
				w.agents[origin] = append(w.agents[origin], e)
			}
			w.mustSign[e] = w.mustSign[e] || signsAll
		}
		return nil
	}
	for _, a := range builtinAgents {
		if v.cfg.NoBuiltinAgents {
			break
		}
		if err := add(a.Origin, a.Tokens, a.SignsAll); err != nil {
			return nil, err
		}
	}
	for agent, toks := range v.cfg.SignatureAgents {
		// The operator who names a token's agent says that it signs.
		if err := add(agent, toks, true); err != nil {
			return nil, err
		}
	}
	for agent, path := range v.cfg.AgentKeys {
		origin, err := agentOrigin(agent)
		if err != nil {
			return nil, err
		}
		keys, err := readKeyFile(path)
		if err != nil {
			return nil, fmt.Errorf("signature agent %s: %w", origin, err)
		}
		d := &dirEntry{keys: keys}
		d.fresh.Store(math.MaxInt64) // current for ever: a remembered signature never looks again
		w.pinned[origin] = d
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
// Signature"). It decides when some signature tagged web-bot-auth covers a
// Signature-Agent member naming an agent known to speak for e: among such
// signatures, one that verifies gives Verified; else one awaiting its
// directory gives Pending; else Forged. A directory that could not be
// fetched, or a signature this verifier cannot check (an RSA key, a
// component it does not implement), is no evidence: the other methods
// decide, or Pending when a directory failed and the token has no other.
// When no signature names such an agent, the claim is unsigned: Forged
// for a token that must be signed, else left to the other methods.
//
// A signature that verifies counts once per client (wba_replay.go): one
// first seen from another client is Replayed, which outranks every other
// answer but Verified; one that could not be remembered, the replay cache
// being full, is Unconfirmed, since its replay could not be told.
func (w *wbaState) verify(e *tokenEntry, r *http.Request, addr netip.Addr) (Result, bool) {
	// The header is indexed directly by canonical keys (net/http stores
	// them so): Values would canonicalize the key again on every request.
	inputs := r.Header["Signature-Input"]
	agentField := r.Header["Signature-Agent"]
	if len(inputs) == 0 || len(agentField) == 0 {
		return w.unsigned(e)
	}
	client := clientOf(addr)
	if out := w.cachedVerified(e, r, inputs, agentField, w.v.unixNow(), client); out != None {
		return Result{Outcome: out, Method: WebBotAuth}, true
	}
	sigs, err := parseSignatureInput(inputs)
	if err != nil {
		return w.unsigned(e)
	}
	now := w.v.cfg.Now()
	named, pending, failed, forged, replayed, full := false, false, false, false, false, false
	for _, si := range sigs {
		if si.tag != webBotAuthTag {
			continue // RFC 9421 §3.2 step 4: not a signature of this profile
		}
		origin, ok := signedAgent(si, agentField)
		if !ok || !w.speaksFor(origin, e) {
			continue
		}
		named = true
		keys, dirFailed, dir, gen := w.directoryEntry(origin, now)
		switch {
		case keys == nil && dirFailed:
			failed = true
			continue
		case keys == nil:
			pending = true
			continue
		}
		sig, until, err := checkSignature(r, si, keys, now)
		switch {
		case err == nil:
			skew := int64(maxClockSkew / time.Second)
			switch w.replays.admit(replayKeyOf(origin, si, sig), client, until+skew, now.Unix()) {
			case admitFirst, admitSame:
				w.remember(e, r, si, origin, keys[si.keyid], dir, gen, until, client)
				return Result{Outcome: Verified, Method: WebBotAuth}, true
			case admitReplay:
				replayed = true
			case admitFull:
				full = true
				w.reportFull(now)
			}
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
	case replayed:
		return Result{Outcome: Replayed, Method: WebBotAuth}, true
	case pending:
		return Result{Outcome: Pending, Method: WebBotAuth}, true
	case full:
		return Result{Outcome: Unconfirmed, Method: WebBotAuth}, true
	case forged:
		return Result{Outcome: Forged, Method: WebBotAuth}, true
	case failed && len(e.lists) == 0 && len(e.suffixes) == 0:
		return Result{Outcome: Pending, Method: WebBotAuth}, true
	case !named:
		return w.unsigned(e)
	}
	return Result{}, false
}

// unsigned judges a claim of e that no signature of one of its agents
// covers: Forged when e must be signed, else no decision.
func (w *wbaState) unsigned(e *tokenEntry) (Result, bool) {
	if w.mustSign[e] {
		return Result{Outcome: Forged, Method: WebBotAuth}, true
	}
	return Result{}, false
}

// checkSignature verifies si over r with a key from keys: the parameters
// the protocol requires (created, expires, a keyid known to the directory,
// alg ed25519 if given), @authority or @target-uri covered, and the Ed25519
// signature over the signature base (RFC 9421 §3.2, §3.3.6). It returns
// the signature's bytes and the last second it is valid (validUntil).
func checkSignature(r *http.Request, si sigInput, keys map[string]dirKey, now time.Time) (sig []byte, until int64, err error) {
	k, ok := keys[si.keyid]
	switch {
	case !ok:
		return nil, 0, errUnknownKey
	case !si.hasCreated || !si.hasExpires:
		return nil, 0, errors.New("created or expires missing")
	}
	t := now.Unix()
	skew := int64(maxClockSkew / time.Second)
	until = validUntil(si)
	switch {
	case si.created > t+skew:
		return nil, 0, errors.New("created in the future")
	case si.expires < t-skew:
		return nil, 0, errors.New("expired")
	case until < t-skew:
		return nil, 0, fmt.Errorf("created more than %v ago", maxSignatureAge)
	case k.nbf != 0 && t+skew < k.nbf, k.exp != 0 && t-skew > k.exp:
		return nil, 0, errors.New("key not valid now")
	}
	if !coversAuthority(si) {
		return nil, 0, errors.New("neither @authority nor @target-uri covered")
	}
	switch {
	case k.pub == nil:
		// An RSA or EC key the draft allows: not checked here, so no
		// evidence either way.
		return nil, 0, fmt.Errorf("%w: a key of a type other than Ed25519", errUnsupported)
	case si.alg != "" && si.alg != "ed25519":
		return nil, 0, errors.New("alg is not ed25519, the key's")
	}
	base, err := signatureBase(r, si)
	if err != nil {
		return nil, 0, err
	}
	sig, err = signatureValue(r.Header.Values("Signature"), si.label)
	if err != nil {
		return nil, 0, err
	}
	if !ed25519.Verify(k.pub, base, sig) {
		return nil, 0, errors.New("signature does not verify")
	}
	return sig, until, nil
}

// validUntil is the last second si is valid (Unix seconds, before the
// clock skew allowed): its expires, or maxSignatureAge after its created
// when that comes first.
func validUntil(si sigInput) int64 {
	return min(si.expires, si.created+int64(maxSignatureAge/time.Second))
}

// reportFull tells OnError, at most once per replayReportInterval, that a
// signature verified but could not be remembered.
func (w *wbaState) reportFull(now time.Time) {
	if ok, n := w.replays.fullReport(now.Unix()); ok {
		w.v.reportErr(fmt.Errorf("web bot auth: the replay cache is full (%d signatures): "+
			"a new signature is unconfirmed until remembered ones expire", n))
	}
}

func coversAuthority(si sigInput) bool {
	for _, c := range si.components {
		if n := c.Value.(string); n == "@authority" || n == "@target-uri" {
			return true
		}
	}
	return false
}
