package verify

import (
	"net/http"
	"net/netip"
)

// ProvenTokens returns the product tokens a request from addr is proven
// to come from, whatever its User-Agent names: the tokens whose range
// lists, as loaded, hold addr (ListedTokens), then those whose reverse DNS
// domains hold a name addr is already known, forward-confirmed, to have
// (an answer in the cache; no lookup is started). It waits for nothing
// and takes no lock on the lists; nil when none. The slice may be shared:
// do not modify it. r is for the signatures of a future method and may
// be nil.
//
// It answers who an address is, for consequences that must follow a
// crawler whatever name it gives (an escalation): a client in Googlebot's
// range list that sends a browser's header is Googlebot all the same.
func (v *Verifier) ProvenTokens(addr netip.Addr, _ *http.Request) []string {
	if !addr.IsValid() {
		return nil
	}
	listed := v.ListedTokens(addr)
	ent := v.dns.get(unmap(addr))
	if ent == nil || ent.state != dnsDone || len(ent.names) == 0 || v.cfg.Now().UnixNano() >= ent.expires {
		return listed // shared, uncopied: the common case allocates nothing
	}
	out := append([]string(nil), listed...)
	for _, e := range v.tokens.byName {
		if len(e.suffixes) == 0 || ent.outcome(e) != Verified {
			continue
		}
		dup := false
		for _, o := range out {
			if o == e.name {
				dup = true
			}
		}
		if !dup {
			out = append(out, e.name)
		}
	}
	return out
}
