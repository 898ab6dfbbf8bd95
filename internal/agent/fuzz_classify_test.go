package agent

import (
	"strings"
	"testing"
)

// FuzzPlatformComment checks the rule that protects people: whatever a
// browser's platform comment holds after the system (a device model is
// free text), the header is a browser's, never a crawler's or another
// automated client's. Only a URL or an e-mail address in the comment, which
// no browser sends there, makes it a crawler's dressed as a browser's.
func FuzzPlatformComment(f *testing.F) {
	for _, model := range []string{
		"M bot 60 Build/NRD90M; wv", "SM-S918B", "K", "CUBOT_X30", "Googlebot", "curl/8.0; GPTBot/1.2",
		"UptimeRobot Build/X", "Spider-Man Edition", "Nexus 5X Build/MMB29P", "compatible; MSIE 6.0",
		"x+Crawler+y", "Pixel 9; Scraper Fetcher", "+",
	} {
		f.Add(model)
	}
	c := NewClassifier(64)
	f.Fuzz(func(t *testing.T, model string) {
		model = strings.Map(func(r rune) rune {
			if r == '(' || r == ')' || r == '\\' {
				return -1 // would end or escape the comment
			}
			return r
		}, model)
		if strings.Contains(model, "://") || strings.Contains(model, "@") || strings.Contains(strings.ToLower(model), "www.") {
			return // a link: not a browser's comment
		}
		for _, shape := range []string{
			"Mozilla/5.0 (Linux; Android 14; %s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36",
			"Mozilla/5.0 (Windows NT 10.0; %s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
			"Mozilla/5.0 (X11; Linux x86_64; %s; rv:125.0) Gecko/20100101 Firefox/125.0",
		} {
			ua := strings.Replace(shape, "%s", model, 1)
			if len(ua) > MaxUserAgentLength {
				return
			}
			tok := Tokenize(ua)
			if got := c.Classify(&tok); got.Class != ClassBrowser {
				t.Fatalf("Classify(%q) = %v (%v %q), want a browser: the words of a platform comment never count",
					ua, got.Class, got.Automation, got.Token)
			}
		}
	})
}
