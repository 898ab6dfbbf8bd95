package caddymodule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// verifiers holds the verifier of each verify configuration across
// reloads: its range lists and DNS answers outlive a reload as the
// robots.txt state does.
var verifiers = caddy.NewUsagePool()

// sharedVerifier is the verifier of one verify configuration, kept in
// verifiers across reloads; it starts its background work with the first
// claim a handler asks about (verify.Config.StartOnUse), never while a
// configuration is only validated.
type sharedVerifier struct {
	v *verify.Verifier
}

// Destruct implements caddy.Destructor.
func (s *sharedVerifier) Destruct() error { return s.v.Close() }

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
	warnings := loadListWarnings()
	h.hold(func() error { releaseListWarnings(); return nil })
	v, loaded, err := verifiers.LoadOrNew(key, func() (caddy.Destructor, error) {
		vc := cfg.VerifierConfig()
		vc.StartOnUse = true
		vc.OnEvent = func(ev verify.Event) {
			switch ev.Kind {
			case verify.EventDNSLookup:
				m.dnsLookups.WithLabelValues(ev.Result).Inc()
			case verify.EventListFailed:
				m.listFailures.WithLabelValues(ev.List).Inc()
				warnings.event(log, ev)
			case verify.EventListLoaded:
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
	// A reload finds its predecessor's verifier: it reads the ip_ranges
	// files now, so that an operator who edited one and reloaded has it in
	// force at once, not at the verifier's next look. One that no longer
	// reads fails the reload, as a malformed one fails a first load; the
	// running configuration keeps the last good list.
	if loaded {
		if err := v.(*sharedVerifier).v.RecheckFiles(); err != nil {
			_, _ = verifiers.Delete(key) // this handler's use, which Cleanup will not see
			return fmt.Errorf("robots_enforce verify: %w", err)
		}
	}
	h.verifier = v.(*sharedVerifier)
	h.metrics.addVerifier(h.verifier.v)
	h.hold(func() error {
		h.metrics.removeVerifier(h.verifier.v)
		_, err := verifiers.Delete(key)
		return err
	})
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
