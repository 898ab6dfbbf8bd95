package verify

import (
	"net/http"
	"net/netip"
	"slices"
)

// ProvenTokens returns the product tokens a request from addr is proven
// to come from, whatever its User-Agent names: the tokens whose range
// lists, as loaded, hold addr (ListedTokens); those whose reverse DNS
// domains hold a name addr is already known, forward-confirmed, to have
// (an answer in the cache; no lookup is started); and, for a request r
// that carries Web Bot Auth signatures, the tokens of the signature agents
// whose signature of r verifies (a replay from another client does not:
// see wba_replay.go). It waits for nothing: a signature whose agent's
// directory is not in yet proves nothing now. nil when none. The slice
// may be shared: do not modify it. r may be nil.
//
// It answers who a request is, for consequences that must follow a
// crawler whatever name it gives (an escalation): a client in Googlebot's
// range list that sends a browser's header is Googlebot all the same, and
// so is a request its signature agent signed.
func (v *Verifier) ProvenTokens(addr netip.Addr, r *http.Request) []string {
	if !addr.IsValid() {
		return nil
	}
	listed := v.ListedTokens(addr)
	var out []string
	add := func(name string) {
		if out == nil {
			out = append(make([]string, 0, len(listed)+2), listed...)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if ent := v.dns.get(unmap(addr)); ent != nil && ent.state == dnsDone && len(ent.names) > 0 && v.cfg.Now().UnixNano() < ent.expires {
		for _, e := range v.tokens.byName {
			if len(e.suffixes) > 0 && ent.outcome(e) == Verified {
				add(e.name)
			}
		}
	}
	if v.wba != nil && r != nil && len(r.Header["Signature-Input"]) > 0 && len(r.Header["Signature-Agent"]) > 0 {
		for _, e := range v.wba.signedFor(r) {
			if res, decided := v.wba.verify(e, r, addr); decided && res.Outcome == Verified {
				add(e.name)
			}
		}
	}
	if out == nil {
		return listed // shared, uncopied: the common case allocates nothing
	}
	return out
}

// signedFor returns the tokens whose agents a Web Bot Auth signature of r
// names, each once.
func (w *wbaState) signedFor(r *http.Request) []*tokenEntry {
	sigs, err := parseSignatureInput(r.Header["Signature-Input"])
	if err != nil {
		return nil
	}
	var out []*tokenEntry
	for _, si := range sigs {
		if si.tag != webBotAuthTag {
			continue
		}
		origin, ok := signedAgent(si, r.Header["Signature-Agent"])
		if !ok {
			continue
		}
		for _, e := range w.agents[origin] {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}
