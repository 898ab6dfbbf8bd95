package lint

// Checks of records that are not rules: sitemaps, and Cloudflare's
// Content-Signal.

import (
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// sitemaps reports sitemap records whose value is not an absolute http or
// https URL, which the sitemaps protocol requires and crawlers cannot
// resolve otherwise.
func (l *linter) sitemaps() {
	for _, rec := range l.r.Records() {
		k := strings.ToLower(rec.Key)
		if !strings.HasPrefix(k, "sitemap") && !strings.HasPrefix(k, "site-map") {
			continue
		}
		u, err := url.Parse(rec.Value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			l.add(rec.Line, rules.Warning, CodeSitemapURL, "sitemap %q is not an absolute http or https URL: crawlers cannot fetch it", rec.Value)
		}
	}
}

// contentSignals notes Cloudflare's Content-Signal records
// (contentsignals.org, draft-romm-aipref-contentsignals): a usage
// preference outside RFC 9309 and the IETF's AIPREF drafts, which the
// parser keeps and does not read. Where the group has no Content-Usage
// rule and the record's search and ai-train signals say yes or no, the
// finding gives the Content-Usage line that says the same in the AIPREF
// vocabulary (draft-ietf-aipref-vocab-07 §4: "search" and "train-ai");
// ai-input has no AIPREF category.
func (l *linter) contentSignals() {
	usage := map[int]bool{} // group lines of groups with Content-Usage rules
	for _, g := range l.groups {
		if len(g.Usage) > 0 {
			usage[g.Line] = true
		}
	}
	for _, rec := range l.r.Records() {
		if !equalFoldASCII(rec.Key, "content-signal") {
			continue
		}
		msg := "Content-Signal is Cloudflare's usage preference record, not part of RFC 9309 or of AIPREF: " +
			"kept, not read; crawlers that follow AIPREF read Content-Usage (draft-ietf-aipref-attach-05 §3)"
		if line := contentUsageFor(rec.Value); line != "" && rec.GroupLine > 0 && !usage[rec.GroupLine] {
			msg += `; the same preference for them: "` + line + `"`
		}
		l.add(rec.Line, rules.Info, CodeContentSignal, "%s", msg)
	}
}

// contentUsageFor returns the Content-Usage line that states a
// Content-Signal value's search and ai-train signals, or "" when the value
// is not a dictionary of yes and no tokens or states neither.
func contentUsageFor(signal string) string {
	dict, err := httpsfv.UnmarshalDictionary([]string{signal})
	if err != nil {
		return ""
	}
	var parts []string
	for _, m := range []struct{ signal, label string }{{"ai-train", rules.LabelTrainAI}, {"search", rules.LabelSearch}} {
		member, ok := dict.Get(m.signal)
		if !ok {
			continue
		}
		item, ok := member.(httpsfv.Item)
		if !ok {
			return ""
		}
		switch item.Value {
		case httpsfv.Token("yes"):
			parts = append(parts, m.label+"=y")
		case httpsfv.Token("no"):
			parts = append(parts, m.label+"=n")
		default:
			return ""
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Content-Usage: " + strings.Join(parts, ", ")
}
