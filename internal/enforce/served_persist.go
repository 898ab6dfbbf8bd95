package enforce

import (
	"net/netip"
	"strings"
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

// Save returns what the table remembers, oldest first.
func (s *Served) Save() []SavedServed {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SavedServed, 0, s.pairs.len())
	s.pairs.each(func(k servedKey, p *servedVersions) bool {
		name := k.name
		if k.kind != servedToken {
			name = k.addr.String() + " " + k.name
		}
		out = append(out, SavedServed{Site: k.site, Kind: servedKindNames[k.kind], Name: name,
			Versions: append([]ServedVersion(nil), p.v[:p.n]...)})
		return true
	})
	return out
}

// Restore puts saved pairs back in the table, those served within
// GraceWindow before now, up to its bounds. A client's address is keyed
// as the table keys it now (see addressKey), whatever it was saved as.
func (s *Served) Restore(saved []SavedServed, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range saved {
		k, group, ok := savedServedKey(&p)
		if !ok {
			continue
		}
		for _, v := range p.Versions {
			if age := now.Sub(v.At); age >= 0 && age <= robotstxt.GraceWindow {
				s.noteLocked(k, group, v.Hash, v.At)
			}
		}
	}
}

// savedServedKey reads the key of a saved pair, and its group.
func savedServedKey(p *SavedServed) (servedKey, string, bool) {
	k := servedKey{site: p.Site}
	for kind, n := range servedKindNames {
		if n != "" && n == p.Kind {
			k.kind = servedKind(kind)
		}
	}
	switch k.kind {
	case servedToken:
		k.name = strings.ToLower(p.Name)
		return k, "token " + k.name, k.name != ""
	case servedClient, servedAgent:
		ip, name, ok := strings.Cut(p.Name, " ")
		a, err := netip.ParseAddr(ip)
		if !ok || err != nil || name == "" {
			return k, "", false
		}
		k.addr, k.name = addressKey(a), name
		return k, k.addr.String(), k.addr.IsValid()
	}
	return k, "", false
}
