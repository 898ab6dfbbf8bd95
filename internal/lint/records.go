package lint

// Checks of records that are not rules: sitemaps.

import (
	"net/url"
	"strings"

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
