package agent

import (
	"slices"
	"strings"
	"testing"
)

func TestCatalogue(t *testing.T) {
	entries, sources, errs := parseCatalogue(crawlersTxt)
	for _, err := range errs {
		t.Errorf("crawlers.txt: %v", err)
	}
	used := map[string]bool{}
	for _, e := range entries {
		used[e.Source] = true
	}
	for _, src := range sources {
		if !used[src.Key] {
			t.Errorf("crawlers.txt: source %q is declared but documents no entry", src.Key)
		}
	}
	if !slices.Equal(CatalogueSources(), sources) {
		t.Errorf("CatalogueSources() differs from the file's sources")
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
		case e.Category <= CategoryNone || e.Category > CategoryCrawler:
			t.Errorf("catalogue token %q has category %v", e.Token, e.Category)
		case e.Category.Class() == ClassBrowser:
			t.Errorf("catalogue token %q has category %v, which marks no class", e.Token, e.Category)
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
	text := "source doc https://example.com/doc\nFoo search doc\nBar doc\nBaz9 ai doc\nQux nonsense doc\nfoo seo doc\n" +
		"# comment\n\nOK tool doc # trailing comment\nLost tool nowhere\nsource doc again\nsource\n" +
		"Asker-User ai doc user\nOdd ai doc users\n"
	entries, sources, errs := parseCatalogue(text)
	want := []Crawler{{"Foo", CategorySearch, "doc", false}, {"OK", CategoryTool, "doc", false}, {"Asker-User", CategoryAI, "doc", true}}
	if !slices.Equal(entries, want) {
		t.Errorf("parseCatalogue: entries = %v, want %v", entries, want)
	}
	if len(sources) != 1 || sources[0] != (CatalogueSource{"doc", "https://example.com/doc"}) {
		t.Errorf("parseCatalogue: sources = %v, want [{doc https://example.com/doc}]", sources)
	}
	wantLines := []string{"crawlers.txt:3:", "crawlers.txt:4:", "crawlers.txt:5:", "crawlers.txt:6:", "crawlers.txt:10:", "crawlers.txt:11:", "crawlers.txt:12:", "crawlers.txt:14:"}
	if len(errs) != len(wantLines) {
		t.Fatalf("parseCatalogue: %d errors (%v), want %d", len(errs), errs, len(wantLines))
	}
	for i, err := range errs {
		if !strings.HasPrefix(err.Error(), wantLines[i]) {
			t.Errorf("parseCatalogue: error %d = %q, want it to start %q", i, err, wantLines[i])
		}
	}
}

func TestCategoryClass(t *testing.T) {
	for c, want := range map[Category]ClientClass{
		CategorySearch: ClassCrawler, CategoryAI: ClassCrawler, CategorySEO: ClassCrawler,
		CategoryArchive: ClassCrawler, CategoryFeed: ClassCrawler, CategoryScanner: ClassCrawler,
		CategoryCrawler: ClassCrawler, CategorySocial: ClassAutomated, CategoryMonitor: ClassAutomated,
		CategoryTool: ClassAutomated, CategoryNone: ClassBrowser,
	} {
		if got := c.Class(); got != want {
			t.Errorf("%v.Class() = %v, want %v", c, got, want)
		}
	}
}

// TestUserTriggered checks the fetchers the catalogue marks as acting for
// a person, as their operators document them, in any case, and that
// crawlers and unknown tokens are not.
func TestUserTriggered(t *testing.T) {
	for _, tok := range []string{"ChatGPT-User", "chatgpt-user", "Claude-User", "Perplexity-User", "meta-externalfetcher",
		"FeedFetcher-Google", "Google-Read-Aloud", "Google-Site-Verification", "GoogleProducer", "Google-NotebookLM"} {
		if !UserTriggered(tok) {
			t.Errorf("UserTriggered(%q) = false, want true", tok)
		}
	}
	for _, tok := range []string{"GPTBot", "ClaudeBot", "PerplexityBot", "Googlebot", "meta-externalagent", "", "ExampleBot", strings.Repeat("a", 100)} {
		if UserTriggered(tok) {
			t.Errorf("UserTriggered(%q) = true, want false", tok)
		}
	}
}
