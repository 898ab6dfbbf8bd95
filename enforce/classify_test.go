package enforce

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ua       string
		want     Automation
		token    string
		category Category
	}{
		{"", AutomatedNoUserAgent, "", CategoryNone},
		{" \t ", AutomatedNoUserAgent, "", CategoryNone},
		{uaGooglebot, AutomatedCatalogue, "Googlebot", CategorySearch},
		{uaGooglebotMob, AutomatedCatalogue, "Googlebot", CategorySearch},
		{uaGPTBot, AutomatedCatalogue, "GPTBot", CategoryAI},
		{uaClaudeBot, AutomatedCatalogue, "ClaudeBot", CategoryAI},
		{uaPerplexityBot, AutomatedCatalogue, "PerplexityBot", CategoryAI},
		{uaAmazonbot, AutomatedCatalogue, "Amazonbot", CategoryAI},
		{uaApplebot, AutomatedCatalogue, "Applebot", CategorySearch},
		{uaBytespider, AutomatedCatalogue, "Bytespider", CategoryAI},
		{uaCCBot, AutomatedCatalogue, "CCBot", CategoryAI},
		{uaSlurp, AutomatedCatalogue, "Slurp", CategorySearch},
		{uaFacebook, AutomatedCatalogue, "facebookexternalhit", CategorySocial},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", AutomatedCatalogue, "SemrushBot", CategorySEO},
		{"curl/8.4.0", AutomatedCatalogue, "curl", CategoryTool},
		{"Wget/1.21.4", AutomatedCatalogue, "Wget", CategoryTool},
		{"python-requests/2.31.0", AutomatedCatalogue, "python-requests", CategoryTool},
		{"Python-urllib/3.11", AutomatedCatalogue, "Python-urllib", CategoryTool},
		{"python-httpx/0.27.0", AutomatedCatalogue, "python-httpx", CategoryTool},
		{"Python/3.11 aiohttp/3.9.1", AutomatedCatalogue, "Python", CategoryTool},
		{"Go-http-client/1.1", AutomatedCatalogue, "Go-http-client", CategoryTool},
		{"okhttp/4.12.0", AutomatedCatalogue, "okhttp", CategoryTool},
		{"Apache-HttpClient/4.5.14 (Java/17.0.8)", AutomatedCatalogue, "Apache-HttpClient", CategoryTool},
		{"Java/17.0.8", AutomatedCatalogue, "Java", CategoryTool},
		{"libwww-perl/6.72", AutomatedCatalogue, "libwww-perl", CategoryTool},
		{"Scrapy/2.11.0 (+https://scrapy.org)", AutomatedCatalogue, "Scrapy", CategoryTool},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36", AutomatedCatalogue, "HeadlessChrome", CategoryTool},
		{"Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1", AutomatedCatalogue, "PhantomJS", CategoryTool},
		{"node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", AutomatedCatalogue, "node-fetch", CategoryTool},
		{"axios/1.6.8", AutomatedCatalogue, "axios", CategoryTool},
		{"undici", AutomatedCatalogue, "undici", CategoryTool},
		{"Ruby", AutomatedCatalogue, "Ruby", CategoryTool},
		{"PostmanRuntime/7.37.3", AutomatedCatalogue, "PostmanRuntime", CategoryTool},
		{"insomnia/2023.5.8", AutomatedCatalogue, "insomnia", CategoryTool},
		{"HTTPie/3.2.2", AutomatedCatalogue, "HTTPie", CategoryTool},
		// Keywords, in the product name or a comment word.
		{"Mozilla/5.0 (compatible; FooBot/1.0)", AutomatedKeyword, "FooBot", CategoryNone},
		{"NewsCrawler/3 (+https://news.example)", AutomatedKeyword, "NewsCrawler", CategoryNone},
		{"my-fetcher", AutomatedKeyword, "my-fetcher", CategoryNone},
		{"WebScraper/1", AutomatedKeyword, "WebScraper", CategoryNone},
		{"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)", AutomatedKeyword, "MJ12bot", CategoryNone},
		{"Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/50.0.2661.102 Safari/537.36; 360Spider", AutomatedKeyword, "360Spider", CategoryNone},
		// The parser: an unknown product with a site in its comment.
		{"Foo/1.0 (+http://foo.example/info)", AutomatedParser, "", CategoryNone},
		// Browsers.
		{uaChrome, NotAutomated, "", CategoryNone},
		{uaFirefox, NotAutomated, "", CategoryNone},
		{uaSafari, NotAutomated, "", CategoryNone},
		{uaIE11, NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0", NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1", NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36", NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Linux; Android 10; CUBOT_X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36", NotAutomated, "", CategoryNone},
		{"Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", NotAutomated, "", CategoryNone},
	}
	c := NewClassifier(0)
	for _, tt := range tests {
		tok := Tokenize(tt.ua)
		got := c.Classify(&tok)
		want := Classification{Automation: tt.want, Token: tt.token, Category: tt.category}
		if got != want {
			t.Errorf("Classify(%q) = %+v, want %+v", tt.ua, got, want)
		}
		if got.Automated() != (tt.want != NotAutomated) {
			t.Errorf("Automated(%q) = %v, want %v", tt.ua, got.Automated(), tt.want != NotAutomated)
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
		{"Bo", false}, {"Robo", false}, {"Scrape", false}, {"fetch", false}, {"Spide", false},
		{"CUBOT_X30", false}, {"Cubot", false}, {"Chrome", false}, {"", false},
	}
	for _, tt := range tests {
		if got := hasKeyword(tt.word); got != tt.want {
			t.Errorf("hasKeyword(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
}

func TestClassifierBrowser(t *testing.T) {
	c := NewClassifier(0)
	tests := []struct{ ua, name, version string }{
		{uaChrome, "Chrome", "124.0.0.0"},
		{uaFirefox, "Firefox", "125.0"},
		{uaSafari, "Safari", "17.4"},
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
	if name, _ := zero.Browser(uaChrome); name != "Chrome" {
		t.Errorf("zero Classifier: Browser(%q) = %q, want %q", uaChrome, name, "Chrome")
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
	for _, ua := range []string{long + " (+http://a.example/)", long + " Chrome/1", long + "x"} {
		tok := Tokenize(ua)
		c.Classify(&tok)
	}
	for i := range c.parses.sets {
		for w := range c.parses.sets[i] {
			if e := c.parses.sets[i][w].Load(); e != nil && len(e.key) > MaxCacheKeyLength {
				t.Errorf("cache key of %d octets, want at most %d", len(e.key), MaxCacheKeyLength)
			}
		}
	}
	// Headers that share the copied prefix are still told apart.
	bot := Tokenize(long + " (+http://a.example/)")
	browser := Tokenize(long + " Chrome/1")
	if got := c.Classify(&bot).Automation; got != AutomatedParser {
		t.Errorf("Classify(long bot header) = %v, want %v", got, AutomatedParser)
	}
	if got := c.Classify(&browser).Automation; got != NotAutomated {
		t.Errorf("Classify(long browser header) = %v, want %v", got, NotAutomated)
	}
}

func TestClassifyWarmAllocs(t *testing.T) {
	c := NewClassifier(0)
	for _, ua := range []string{uaChrome, uaSafari, uaGooglebotMob, "", "Foo/1.0 (+http://foo.example/info)"} {
		tok := Tokenize(ua)
		c.Classify(&tok) // warm the cache
		if n := testing.AllocsPerRun(100, func() { c.Classify(&tok) }); n != 0 {
			t.Errorf("warm Classify(%q) allocates %v times, want 0", ua, n)
		}
	}
}

func TestClassifierConcurrent(t *testing.T) {
	uas := []string{
		uaChrome, uaFirefox, uaSafari, uaIE11, uaGooglebot, uaGPTBot, "curl/8.4.0",
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
	}{{uaChrome, false}, {"Foo/1.0 (+http://foo.example/info)", true}, {uaGPTBot, true}} {
		tok := Tokenize(tt.ua)
		if got := c.Classify(&tok).Automated(); got != tt.want {
			t.Errorf("zero Classifier: Automated(%q) = %v, want %v", tt.ua, got, tt.want)
		}
	}
}

func TestWildcardPolicy(t *testing.T) {
	tests := []struct {
		name      string
		want      WildcardPolicy
		automated bool // Binds(true)
		browsers  bool // Binds(false)
	}{
		{"bots", WildcardBots, true, false},
		{"all", WildcardAll, true, true},
		{"none", WildcardNone, false, false},
	}
	for _, tt := range tests {
		p, err := ParseWildcardPolicy(tt.name)
		if err != nil || p != tt.want {
			t.Errorf("ParseWildcardPolicy(%q) = %v, %v, want %v, nil", tt.name, p, err, tt.want)
		}
		if p.String() != tt.name {
			t.Errorf("%v.String() = %q, want %q", tt.want, p.String(), tt.name)
		}
		if p.Binds(true) != tt.automated || p.Binds(false) != tt.browsers {
			t.Errorf("%v.Binds(true, false) = %v, %v, want %v, %v", p, p.Binds(true), p.Binds(false), tt.automated, tt.browsers)
		}
		var q WildcardPolicy
		if text, err := p.MarshalText(); err != nil || q.UnmarshalText(text) != nil || q != p {
			t.Errorf("%v: MarshalText/UnmarshalText round trip gave %v", p, q)
		}
	}
	var zero WildcardPolicy
	if zero != WildcardBots {
		t.Errorf("zero WildcardPolicy = %v, want bots", zero)
	}
	for _, bad := range []string{"", "Bots", "browsers", "all "} {
		_, err := ParseWildcardPolicy(bad)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) || !strings.HasPrefix(err.Error(), "wildcard policy") {
			t.Errorf("ParseWildcardPolicy(%q) error = %v, want one naming the value", bad, err)
		}
	}
}

func TestCatalogue(t *testing.T) {
	entries, errs := parseCatalogue(crawlersTxt)
	for _, err := range errs {
		t.Errorf("crawlers.txt: %v", err)
	}
	if len(entries) < 150 {
		t.Errorf("crawlers.txt has %d entries, want at least 150", len(entries))
	}
	for _, e := range entries {
		switch {
		case !isToken(e.Token):
			t.Errorf("catalogue token %q is not a run of [A-Za-z_-]", e.Token)
		case isGenericShape(e.Token):
			t.Errorf("catalogue token %q is generic by its shape, and would never count", e.Token)
		case LookupCrawler(e.Token) != e.Category:
			t.Errorf("LookupCrawler(%q) = %v, want %v", e.Token, LookupCrawler(e.Token), e.Category)
		case LookupCrawler(strings.ToUpper(e.Token)) != e.Category:
			t.Errorf("LookupCrawler(%q) = %v, want %v", strings.ToUpper(e.Token), LookupCrawler(strings.ToUpper(e.Token)), e.Category)
		case e.Category <= CategoryNone || e.Category > CategoryTool:
			t.Errorf("catalogue token %q has category %v", e.Token, e.Category)
		}
	}
	if got := len(Crawlers()); got != len(entries) {
		t.Errorf("len(Crawlers()) = %d, want %d", got, len(entries))
	}
	for _, tok := range []string{"", "Chrome", "Googlebot/2.1", "Googlebo", "Googlebotx", "GPT\rBot"} {
		if got := LookupCrawler(tok); got != CategoryNone {
			t.Errorf("LookupCrawler(%q) = %v, want none", tok, got)
		}
	}
}

func TestParseCatalogueErrors(t *testing.T) {
	text := "Foo search\nBar\nBaz9 ai\nQux nonsense\nfoo seo\n# comment\n\nOK tool # trailing comment\n"
	entries, errs := parseCatalogue(text)
	if len(entries) != 2 || entries[0] != (Crawler{"Foo", CategorySearch}) || entries[1] != (Crawler{"OK", CategoryTool}) {
		t.Errorf("parseCatalogue: entries = %v, want [{Foo search} {OK tool}]", entries)
	}
	wantLines := []string{"crawlers.txt:2:", "crawlers.txt:3:", "crawlers.txt:4:", "crawlers.txt:5:"}
	if len(errs) != len(wantLines) {
		t.Fatalf("parseCatalogue: %d errors (%v), want %d", len(errs), errs, len(wantLines))
	}
	for i, err := range errs {
		if !strings.HasPrefix(err.Error(), wantLines[i]) {
			t.Errorf("parseCatalogue: error %d = %q, want it to start %q", i, err, wantLines[i])
		}
	}
}
