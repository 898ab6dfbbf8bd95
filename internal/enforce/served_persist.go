package enforce

import (
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// SavedServed is what one crawler of one site was served.
type SavedServed struct {
	Site string `json:"site"`
	// Kind says what Name is: "token" (a product token), "client" (an
	// address and a product token) or "agent" (an address and a digest of
	// a User-Agent). A pair without one was saved before fetches were
	// credited by proof: it is not restored, since it cannot say whom it
	// proves anything about.
	Kind     string          `json:"kind,omitempty"`
	Name     string          `json:"name"`
	Versions []ServedVersion `json:"versions"`
}

// Save returns what the table remembers, for a SavedState.
func (s *Served) Save() []SavedServed {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SavedServed, 0, len(s.pairs))
	for k, p := range s.pairs {
		out = append(out, SavedServed{Site: k.site, Kind: servedKindNames[k.kind], Name: k.name,
			Versions: append([]ServedVersion(nil), p.v[:p.n]...)})
	}
	return out
}

// Restore puts saved pairs back in the table, those served within
// GraceWindow before now, up to its bound.
func (s *Served) Restore(saved []SavedServed, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range saved {
		kind := servedKindOf(p.Kind)
		if kind == 0 {
			continue
		}
		for _, v := range p.Versions {
			if age := now.Sub(v.At); age >= 0 && age <= robotstxt.GraceWindow {
				s.noteLocked(servedKey{site: p.Site, kind: kind, name: p.Name}, v.Hash, v.At)
			}
		}
	}
}

// servedKindOf reads a SavedServed's Kind; 0 for none.
func servedKindOf(name string) servedKind {
	for k, n := range servedKindNames {
		if n != "" && n == name {
			return servedKind(k)
		}
	}
	return 0
}
