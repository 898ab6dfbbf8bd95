package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// sharedVerifier is the verifier of one verify configuration, kept in
// states' usage pool: its range lists and DNS answers outlive config
// reloads as the robots.txt state does. It is the handlers' Identity.
type sharedVerifier struct {
	v       *verify.Verifier
	started sync.Once
}

// Verify implements enforce.Identity, starting the verifier's background
// work with the first claim.
func (s *sharedVerifier) Verify(token string, addr netip.Addr, r *http.Request) verify.Result {
	s.start()
	return s.v.Verify(token, addr, r)
}

// HasMethod implements enforce.Identity.
func (s *sharedVerifier) HasMethod(token string) bool { return s.v.HasMethod(token) }

// ListedTokens implements enforce.Identity, starting the verifier's
// background work with the first question.
func (s *sharedVerifier) ListedTokens(addr netip.Addr) []string {
	s.start()
	return s.v.ListedTokens(addr)
}

// Destruct implements caddy.Destructor.
func (s *sharedVerifier) Destruct() error { return s.v.Close() }

// start starts the verifier's background work, once: on the first request
// a handler serves, never while a configuration is only validated.
func (s *sharedVerifier) start() {
	s.started.Do(func() { go s.v.Start() })
}

// provisionVerifier builds, or finds, the verifier of the handler's
// configuration.
func (h *Handler) provisionVerifier(storage certmagic.Storage) error {
	cfg := h.Verify
	if cfg == nil {
		cfg = &Verify{}
	}
	if cfg.Off {
		return nil
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("robots_enforce verify: %w", err)
	}
	// The pinned keys are part of what identifies the verifier: a reload
	// after a keys file changed builds a new one, which reads it again.
	sum := sha256.New()
	sum.Write(b)
	for _, a := range cfg.SignatureAgents {
		if a.Keys != "" {
			sum.Write(fileDigest(a.Keys))
		}
	}
	key := "robots_enforce/verify/" + hex.EncodeToString(sum.Sum(nil)[:16])
	log := h.warnings.Named("verify")
	m := h.metrics
	h.listWarnings = loadListWarnings()
	warnings := h.listWarnings
	v, _, err := states.LoadOrNew(key, func() (caddy.Destructor, error) {
		vc := cfg.VerifierConfig()
		vc.OnEvent = func(ev verify.Event) {
			switch ev.Kind {
			case verify.EventDNSLookup:
				m.dnsLookups.WithLabelValues(ev.Result).Inc()
			case verify.EventListFailed, verify.EventListLoaded:
				warnings.event(log, ev)
			}
		}
		vc.OnError = func(err error) { log.Warn("crawler verification", zap.Error(err)) }
		if storage != nil {
			vc.Storage = storage
		}
		ver, err := verify.New(vc)
		if err != nil {
			return nil, err
		}
		return &sharedVerifier{v: ver}, nil
	})
	if err != nil {
		return fmt.Errorf("robots_enforce verify: %w", err)
	}
	h.verifier, h.verifierName = v.(*sharedVerifier), key
	h.metrics.addVerifier(h.verifier.v)
	return nil
}

// fileDigest is the SHA-256 of a small regular file, or nil when it cannot
// be read: verify.New then reports why.
func fileDigest(path string) []byte {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxKeysFileDigest)); err != nil {
		return nil
	}
	return h.Sum(nil)
}

// maxKeysFileDigest bounds what fileDigest reads: past the 64 KiB the
// verifier accepts, the file is refused anyway.
const maxKeysFileDigest = 1 << 20
