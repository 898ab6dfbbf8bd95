package agent

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/robotsenforce/caddy-robots-enforce/internal/testua"
)

func TestClassify(t *testing.T) {
	const (
		browser   = ClassBrowser
		crawler   = ClassCrawler
		automated = ClassAutomated
	)
	tests := []struct {
		ua       string
		class    ClientClass
		sign     Automation
		token    string
		category Category
	}{
		{"", automated, AutomatedNoUserAgent, "", CategoryNone},
		{" \t ", automated, AutomatedNoUserAgent, "", CategoryNone},
		// Catalogued crawlers.
		{testua.Googlebot, crawler, AutomatedCatalogue, "Googlebot", CategorySearch},
		{testua.GooglebotMob, crawler, AutomatedCatalogue, "Googlebot", CategorySearch},
		{testua.GPTBot, crawler, AutomatedCatalogue, "GPTBot", CategoryAI},
		{testua.ClaudeBot, crawler, AutomatedCatalogue, "ClaudeBot", CategoryAI},
		{testua.PerplexityBot, crawler, AutomatedCatalogue, "PerplexityBot", CategoryAI},
		{testua.Amazonbot, crawler, AutomatedCatalogue, "Amazonbot", CategoryAI},
		{testua.Applebot, crawler, AutomatedCatalogue, "Applebot", CategorySearch},
		{testua.Bytespider, crawler, AutomatedCatalogue, "Bytespider", CategoryAI},
		{testua.CCBot, crawler, AutomatedCatalogue, "CCBot", CategoryAI},
		{testua.Slurp, crawler, AutomatedCatalogue, "Slurp", CategorySearch},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", crawler, AutomatedCatalogue, "SemrushBot", CategorySEO},
		{"Scrapy/2.11.0 (+https://scrapy.org)", crawler, AutomatedCatalogue, "Scrapy", CategoryCrawler},
		// Catalogued clients that are not crawlers.
		{testua.Facebook, automated, AutomatedCatalogue, "facebookexternalhit", CategorySocial},
		{"curl/8.4.0", automated, AutomatedCatalogue, "curl", CategoryTool},
		{"Wget/1.21.4", automated, AutomatedCatalogue, "Wget", CategoryTool},
		{"python-requests/2.31.0", automated, AutomatedCatalogue, "python-requests", CategoryTool},
		{"Python-urllib/3.11", automated, AutomatedCatalogue, "Python-urllib", CategoryTool},
		{"python-httpx/0.27.0", automated, AutomatedCatalogue, "python-httpx", CategoryTool},
		{"Python/3.11 aiohttp/3.9.1", automated, AutomatedCatalogue, "Python", CategoryTool},
		{"Go-http-client/1.1", automated, AutomatedCatalogue, "Go-http-client", CategoryTool},
		{"okhttp/4.12.0", automated, AutomatedCatalogue, "okhttp", CategoryTool},
		{"Apache-HttpClient/4.5.14 (Java/17.0.8)", automated, AutomatedCatalogue, "Apache-HttpClient", CategoryTool},
		{"Java/17.0.8", automated, AutomatedCatalogue, "Java", CategoryTool},
		{"libwww-perl/6.72", automated, AutomatedCatalogue, "libwww-perl", CategoryTool},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36", automated, AutomatedCatalogue, "HeadlessChrome", CategoryTool},
		{"Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1", automated, AutomatedCatalogue, "PhantomJS", CategoryTool},
		{"node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", automated, AutomatedCatalogue, "node-fetch", CategoryTool},
		{"axios/1.6.8", automated, AutomatedCatalogue, "axios", CategoryTool},
		{"undici", automated, AutomatedCatalogue, "undici", CategoryTool},
		{"PostmanRuntime/7.37.3", automated, AutomatedCatalogue, "PostmanRuntime", CategoryTool},
		{"HTTPie/3.2.2", automated, AutomatedCatalogue, "HTTPie", CategoryTool},
		{"kube-probe/1.29", automated, AutomatedCatalogue, "kube-probe", CategoryMonitor},
		{"Prometheus/2.51.0", automated, AutomatedCatalogue, "Prometheus", CategoryMonitor},
		{"ELB-HealthChecker/2.0", automated, AutomatedCatalogue, "ELB-HealthChecker", CategoryMonitor},
		{"Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", automated, AutomatedCatalogue, "UptimeRobot", CategoryMonitor},
		// A crawler keyword: a crawler.
		{"Mozilla/5.0 (compatible; FooBot/1.0)", crawler, AutomatedKeyword, "FooBot", CategoryNone},
		{"NewsCrawler/3 (+https://news.example)", crawler, AutomatedKeyword, "NewsCrawler", CategoryNone},
		{"my-fetcher", crawler, AutomatedKeyword, "my-fetcher", CategoryNone},
		{"WebScraper/1", crawler, AutomatedKeyword, "WebScraper", CategoryNone},
		{"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", crawler, AutomatedKeyword, "MJ12bot", CategoryNone},
		{"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36; 360Spider", crawler, AutomatedKeyword, "360Spider", CategoryNone},
		// A crawler keyword beats a tool's token; a monitor's word beats both.
		{"python-requests/2.31 (compatible; ExampleCrawler/1.0)", crawler, AutomatedKeyword, "ExampleCrawler", CategoryNone},
		{"HetrixTools Uptime Monitoring Bot. https://hetrix.tools/uptime-monitoring-bot.html", automated, AutomatedCatalogue, "HetrixTools", CategoryMonitor},
		{"SentryUptimeBot/1.0 (+http://docs.sentry.io/product/alerts/uptime-monitoring/)", automated, AutomatedKeyword, "SentryUptimeBot", CategoryNone},
		{"Better Uptime Bot Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/74.0.3729.169 Safari/537.36", automated, AutomatedKeyword, "Uptime", CategoryNone},
		// A link, or the "compatible" convention, with no other sign.
		{"Foo/1.0 (+http://foo.example/info)", crawler, AutomatedLink, "", CategoryNone},
		{"Mozilla/5.0 (compatible; Dataprovider.com)", crawler, AutomatedLink, "", CategoryNone},
		// Not shaped like a browser's.
		{"Dalvik/2.1.0 (Linux; U; Android 11; SM-A125F Build/RP1A.200720.012)", automated, AutomatedShape, "", CategoryNone},
		{"Spotify/8.9.10 iOS/17.4 (iPhone15,2)", automated, AutomatedShape, "", CategoryNone},
		// Browsers.
		{testua.Chrome, browser, NotAutomated, "", CategoryNone},
		{testua.Firefox, browser, NotAutomated, "", CategoryNone},
		{testua.Safari, browser, NotAutomated, "", CategoryNone},
		{testua.IE11, browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Linux; Android 10; CUBOT_X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727)", browser, NotAutomated, "", CategoryNone},
		{"Opera/9.80 (J2ME/MIDP; Opera Mini/9.80 (S60; SymbOS; Opera Mobi/23.348; U; en) Presto/2.5.25 Version/10.54", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/459.0.0.45.108;FBCR/OrangeBotswana;FBDV/iPhone15,2]", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Linux; Android 9; Redmi 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/101.0.4951.41 Mobile Safari/537.36 (Ecosia android@101.0.4951.41)", browser, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Windows; U; Windows NT 6.1; en-US; rv:1.9.3a1) Gecko/20100208 MozillaDeveloperPreview/3.7a1", browser, NotAutomated, "", CategoryNone},
	}
	c := NewClassifier(0)
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
		got := c.Classify(&tok)
		want := Classification{Class: tt.class, Automation: tt.sign, Token: tt.token, Category: tt.category}
		if got != want {
			t.Errorf("Classify(%q) = %+v, want %+v", tt.ua, got, want)
		}
		if got.Automated() != (tt.class != ClassBrowser) {
			t.Errorf("Automated(%q) = %v, want %v", tt.ua, got.Automated(), tt.class != ClassBrowser)
		}
	}
}

// TestClassifyRealHeaders checks the headers that were read wrong before
// the client classes, each a real one.
func TestClassifyRealHeaders(t *testing.T) {
	tests := []struct {
		name  string
		ua    string
		class ClientClass
		token string
	}{
		// Not shaped like a browser's, and no bot word: monitors,
		// validators, CDNs and link previewers. They read as browsers.
		{"Site24x7 monitor", "Site24x7", ClassAutomated, ""},
		{"CloudFront fetching from the origin", "Amazon CloudFront", ClassAutomated, ""},
		{"W3C markup validator", "W3C_Validator/1.3", ClassAutomated, "W3C_Validator"},
		{"Chatwork link preview", "Chatwork LinkPreview v1", ClassAutomated, "LinkPreview"},
		// A device model with "bot" in it, inside a browser's platform
		// comment: a person, who was bound as a bot.
		{
			"Android WebView on an M bot 60",
			"Mozilla/5.0 (Linux; Android 7.0; M bot 60 Build/NRD90M; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/64.0.3282.137 Mobile Safari/537.36",
			ClassBrowser, "",
		},
		// Words joined by "+": PiplBot was no candidate.
		{"plus for spaces", "Mozilla/5.0+(compatible;+PiplBot;+http://www.pipl.com/bot/)", ClassCrawler, "PiplBot"},
		// A token that is a product's version.
		{"Teoma as Ask Jeeves' version", "Mozilla/2.0 (compatible; Ask Jeeves/Teoma; +http://sp.ask.com/docs/about/tech_crawling.html)", ClassCrawler, "Teoma"},
		{"simplecrawler as Node's version", "Node/simplecrawler 1.1.9 (https://github.com/simplecrawler/simplecrawler)", ClassCrawler, "simplecrawler"},
	}
	c := NewClassifier(0)
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
		if got := c.Classify(&tok); got.Class != tt.class || got.Token != tt.token {
			t.Errorf("%s: Classify(%q) = %v %v %q, want %v, token %q", tt.name, tt.ua, got.Class, got.Automation, got.Token, tt.class, tt.token)
		}
	}
}

func TestHasKeyword(t *testing.T) {
	tests := []struct {
		word string
		want bool
	}{
		{"Googlebot", true}, {"bingbot", true}, {"SemrushBot", true}, {"BOT", true},
		{"Crawl4AI", true}, {"Baiduspider", true}, {"kagi-fetcher", true}, {"ai-scraper", true},
		{"BotSeer", true}, {"bot_v1", true}, {"bots", true}, {"Bots-Live", true}, {"Dubbotbot", true},
		{"Bo", false}, {"Robo", false}, {"Scrape", false}, {"fetch", false}, {"Spide", false},
		{"CUBOT_X30", false}, {"Cubot", false}, {"Chrome", false}, {"", false},
		{"OrangeBotswana", false}, {"Boto3", false}, {"botocore", false}, {"Abbott", false}, {"botsy", false},
	}
	for _, tt := range tests {
		if got := hasKeyword(tt.word); got != tt.want {
			t.Errorf("hasKeyword(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
}

func TestHasRoleWord(t *testing.T) {
	tests := []struct {
		word string
		want bool
	}{
		{"UptimeRobot", true}, {"LinkPreview", true}, {"W3C_Validator", true}, {"monitoring360bot", true},
		{"ArenaUnfurlBot", true}, {"HEALTHCHECK", true}, {"MB-LinkChecker", true},
		{"Uptim", false}, {"Googlebot", false}, {"Previe", false}, {"", false}, {"Chrome", false},
	}
	for _, tt := range tests {
		if got := hasRoleWord(tt.word); got != tt.want {
			t.Errorf("hasRoleWord(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
}

func TestClassifierBrowser(t *testing.T) {
	c := NewClassifier(0)
	tests := []struct{ ua, name, version string }{
		{testua.Chrome, "Chrome", "124.0.0.0"},
		{testua.Firefox, "Firefox", "125.0"},
		{testua.Safari, "Safari", "17.4"},
	}
	for _, tt := range tests {
		for range 2 { // cold, then cached
			name, version := c.Browser(tt.ua)
			if name != tt.name || version != tt.version {
				t.Errorf("Browser(%q) = %q, %q, want %q, %q", tt.ua, name, version, tt.name, tt.version)
			}
		}
	}
	var zero Classifier
	if name, _ := zero.Browser(testua.Chrome); name != "Chrome" {
		t.Errorf("zero Classifier: Browser(%q) = %q, want %q", testua.Chrome, name, "Chrome")
	}
}

func TestClassifierCacheBounded(t *testing.T) {
	for _, size := range []int{1, 2, 7, 64} {
		c := NewClassifier(size)
		for i := range 1000 {
			tok := Tokenize(fmt.Sprintf("Foo%d/1.0", i))
			c.Classify(&tok)
		}
		if n, most := c.cached(), max(size-size%2, 2); n > most || n == 0 {
			t.Errorf("NewClassifier(%d): %d entries after 1000 headers, want 1 to %d", size, n, most)
		}
	}
}

func TestClassifierCacheKey(t *testing.T) {
	c := NewClassifier(16)
	long := strings.Repeat("A", MaxCacheKeyLength)
	// Headers that reach the parser: no catalogued token, keyword or link.
	// It reads a lone product whose name holds "search" as a bot's.
	bot, other := long+"search/1.0", long+"x/1.0"
	for _, ua := range []string{bot, other, long + "y"} {
		tok := Tokenize(ua)
		c.Classify(&tok)
	}
	if c.cached() == 0 {
		t.Fatalf("no parse cached after three headers that reach the parser")
	}
	for i := range c.parses.sets {
		for w := range c.parses.sets[i] {
			if e := c.parses.sets[i][w].Load(); e != nil && len(e.key) > MaxCacheKeyLength {
				t.Errorf("cache key of %d octets, want at most %d", len(e.key), MaxCacheKeyLength)
			}
		}
	}
	// Headers that share the copied prefix are still told apart.
	for ua, want := range map[string]Automation{bot: AutomatedParser, other: AutomatedShape} {
		tok := Tokenize(ua)
		if got := c.Classify(&tok).Automation; got != want {
			t.Errorf("Classify(long header ending %q) = %v, want %v", ua[MaxCacheKeyLength:], got, want)
		}
	}
}

func TestClassifyWarmAllocs(t *testing.T) {
	c := NewClassifier(0)
	for _, ua := range []string{testua.Chrome, testua.Safari, testua.GooglebotMob, "", "Foo/1.0 (+http://foo.example/info)"} {
		tok := Tokenize(ua)
		c.Classify(&tok) // warm the cache
		if n := testing.AllocsPerRun(100, func() { c.Classify(&tok) }); n != 0 {
			t.Errorf("warm Classify(%q) allocates %v times, want 0", ua, n)
		}
	}
}

func TestClassifierConcurrent(t *testing.T) {
	uas := []string{
		testua.Chrome, testua.Firefox, testua.Safari, testua.IE11, testua.Googlebot, testua.GPTBot, "curl/8.4.0",
		"Foo/1.0 (+http://foo.example/info)", "Bar/2.0", "Baz/3.0 (+https://baz.example/)",
	}
	want := make([]Classification, len(uas))
	ref := NewClassifier(0)
	for i, ua := range uas {
		tok := Tokenize(ua)
		want[i] = ref.Classify(&tok)
	}
	c := NewClassifier(4) // small, so that goroutines evict each other's entries
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 500 {
				i := (g + n) % len(uas)
				tok := Tokenize(uas[i])
				if got := c.Classify(&tok); got != want[i] {
					t.Errorf("Classify(%q) = %+v under concurrency, want %+v", uas[i], got, want[i])
					return
				}
				c.Browser(uas[i])
			}
		})
	}
	wg.Wait()
	if n := c.cached(); n > 4 {
		t.Errorf("cache holds %d entries, want at most 4", n)
	}
}

func TestZeroClassifier(t *testing.T) {
	var c Classifier
	for _, tt := range []struct {
		ua   string
		want bool
	}{{testua.Chrome, false}, {"Foo/1.0 (+http://foo.example/info)", true}, {testua.GPTBot, true}} {
		tok := Tokenize(tt.ua)
		if got := c.Classify(&tok).Automated(); got != tt.want {
			t.Errorf("zero Classifier: Automated(%q) = %v, want %v", tt.ua, got, tt.want)
		}
	}
}

func TestWildcardPolicy(t *testing.T) {
	tests := []struct {
		name                        string
		want                        WildcardPolicy
		browser, crawler, automated bool // Binds of each class
	}{
		{"crawlers", WildcardCrawlers, false, true, false},
		{"automated", WildcardAutomated, false, true, true},
		{"all", WildcardAll, true, true, true},
		{"none", WildcardNone, false, false, false},
	}
	for _, tt := range tests {
		p, err := ParseWildcardPolicy(tt.name)
		if err != nil || p != tt.want {
			t.Errorf("ParseWildcardPolicy(%q) = %v, %v, want %v, nil", tt.name, p, err, tt.want)
		}
		if p.String() != tt.name {
			t.Errorf("%v.String() = %q, want %q", tt.want, p.String(), tt.name)
		}
		if p.Binds(ClassBrowser) != tt.browser || p.Binds(ClassCrawler) != tt.crawler || p.Binds(ClassAutomated) != tt.automated {
			t.Errorf("%v.Binds(browser, crawler, automated) = %v, %v, %v, want %v, %v, %v", p,
				p.Binds(ClassBrowser), p.Binds(ClassCrawler), p.Binds(ClassAutomated), tt.browser, tt.crawler, tt.automated)
		}
		var q WildcardPolicy
		if text, err := p.MarshalText(); err != nil || q.UnmarshalText(text) != nil || q != p {
			t.Errorf("%v: MarshalText/UnmarshalText round trip gave %v", p, q)
		}
	}
	// The former name of "automated" is still read, and written anew.
	if p, err := ParseWildcardPolicy("bots"); err != nil || p != WildcardAutomated || p.String() != "automated" || WildcardBots != WildcardAutomated {
		t.Errorf("ParseWildcardPolicy(\"bots\") = %v, %v, want automated, nil", p, err)
	}
	var q WildcardPolicy
	if err := q.UnmarshalText([]byte("bots")); err != nil || q != WildcardAutomated {
		t.Errorf("UnmarshalText(\"bots\") = %v, %v, want automated", q, err)
	}
	var zero WildcardPolicy
	if zero != WildcardCrawlers {
		t.Errorf("zero WildcardPolicy = %v, want crawlers", zero)
	}
	for _, bad := range []string{"", "Bots", "crawler", "browsers", "all ", "Automated"} {
		_, err := ParseWildcardPolicy(bad)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) || !strings.HasPrefix(err.Error(), "wildcard policy") {
			t.Errorf("ParseWildcardPolicy(%q) error = %v, want one naming the value", bad, err)
		}
	}
	if _, err := WildcardPolicy(9).MarshalText(); err == nil {
		t.Errorf("WildcardPolicy(9).MarshalText() succeeded, want an error")
	}
}

func TestClientClassNames(t *testing.T) {
	for c, want := range map[ClientClass]string{ClassBrowser: "browser", ClassCrawler: "crawler", ClassAutomated: "automated", 7: "client_class(7)"} {
		if got := c.String(); got != want {
			t.Errorf("ClientClass(%d).String() = %q, want %q", c, got, want)
		}
	}
}
