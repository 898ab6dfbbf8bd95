package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// PublishedList is one range list a crawler's operator publishes, in the
// JSON format ParseRangeList reads.
type PublishedList struct {
	// Name identifies the list in metrics and storage ("googlebot").
	Name string
	// URL is where the operator publishes it.
	URL string
	// Tokens are the product tokens an address in the list proves.
	Tokens []string
	// Doc is the operator's page that documents the list.
	Doc string
}

// BuiltinLists returns the built-in table of published range lists. The
// returned slice is a copy.
//
// Where each row comes from: the URL and the tokens as the operator's Doc
// page gives them, read through the search tool in November 2026 (pages and
// code corpora: the operators' pages themselves where stored, otherwise
// several independent tools that fetch the same URL). Rows marked
// "unconfirmed" are ones whose URL or token mapping was seen only in
// third-party sources.
func BuiltinLists() []PublishedList {
	return append([]PublishedList(nil), builtinLists...)
}

const (
	googleDoc     = "https://developers.google.com/crawling/docs/crawlers-fetchers/verify-google-requests"
	openAIDoc     = "https://platform.openai.com/docs/bots"
	perplexityDoc = "https://docs.perplexity.ai/docs/resources/perplexity-crawlers"
)

var builtinLists = []PublishedList{
	// Google's verification page (stored copy read) names three categories
	// and their files under developers.google.com/static/crawling/ipranges/.
	// common-crawlers.json is the former search/apis/ipranges/googlebot.json,
	// which now redirects there. The tokens are those Google's "common
	// crawlers" page lists; Google-Extended is a robots.txt token only and
	// sends no requests of its own.
	{Name: "googlebot", URL: "https://developers.google.com/static/crawling/ipranges/common-crawlers.json", Doc: googleDoc,
		Tokens: []string{"Googlebot", "Googlebot-Image", "Googlebot-News", "Googlebot-Video", "Storebot-Google",
			"Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video", "Google-CloudVertexBot"}},
	// Special-case crawlers (AdsBot and the like), resolving to
	// rate-limited-proxy-*.google.com.
	{Name: "google-special", URL: "https://developers.google.com/static/crawling/ipranges/special-crawlers.json", Doc: googleDoc,
		Tokens: []string{"AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google", "APIs-Google", "Google-Safety"}},
	// User-triggered fetchers controlled by Google (resolving to google.com).
	// Its sibling user-triggered-fetchers.json is left out on purpose: Google
	// says those addresses resolve to gae.googleusercontent.com and serve
	// Google Cloud customers' own fetches, so an address there proves no
	// Google product. Token mapping unconfirmed beyond Google's examples.
	{Name: "google-user-triggered", URL: "https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers-google.json", Doc: googleDoc,
		Tokens: []string{"FeedFetcher-Google", "Google-Read-Aloud", "Google-Site-Verification"}},
	// Microsoft documents one list for bingbot.
	{Name: "bingbot", URL: "https://www.bing.com/toolbox/bingbot.json", Doc: "https://www.bing.com/webmasters/help/how-to-verify-bingbot-3905dc26",
		Tokens: []string{"bingbot"}},
	// OpenAI publishes one list per crawler; each proves only its own token.
	{Name: "gptbot", URL: "https://openai.com/gptbot.json", Doc: openAIDoc, Tokens: []string{"GPTBot"}},
	{Name: "oai-searchbot", URL: "https://openai.com/searchbot.json", Doc: openAIDoc, Tokens: []string{"OAI-SearchBot"}},
	{Name: "chatgpt-user", URL: "https://openai.com/chatgpt-user.json", Doc: openAIDoc, Tokens: []string{"ChatGPT-User"}},
	// Perplexity: one list per agent. Some third-party tools cite the same
	// files under www.perplexity.com; the .ai host is the one most cite.
	{Name: "perplexitybot", URL: "https://www.perplexity.ai/perplexitybot.json", Doc: perplexityDoc, Tokens: []string{"PerplexityBot"}},
	{Name: "perplexity-user", URL: "https://www.perplexity.ai/perplexity-user.json", Doc: perplexityDoc, Tokens: []string{"Perplexity-User"}},
	// Apple: Applebot's page links the list (Applebot-Extended is a
	// robots.txt token only).
	{Name: "applebot", URL: "https://search.developer.apple.com/applebot.json", Doc: "https://support.apple.com/en-us/119829",
		Tokens: []string{"Applebot"}},
	// Common Crawl's CCBot page.
	{Name: "ccbot", URL: "https://index.commoncrawl.org/ccbot.json", Doc: "https://commoncrawl.org/ccbot", Tokens: []string{"CCBot"}},
	// DuckDuckGo's help pages for each bot.
	{Name: "duckduckbot", URL: "https://duckduckgo.com/duckduckbot.json", Doc: "https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot",
		Tokens: []string{"DuckDuckBot"}},
	{Name: "duckassistbot", URL: "https://duckduckgo.com/duckassistbot.json", Doc: "https://duckduckgo.com/duckduckgo-help-pages/results/duckassistbot",
		Tokens: []string{"DuckAssistBot"}},
	// Anthropic: one list for all three of its agents (unconfirmed: seen in
	// several third-party tools, not on a stored Anthropic page).
	{Name: "claudebot", URL: "https://claude.com/crawling/bots.json", Doc: "https://support.claude.com/en/articles/8896518",
		Tokens: []string{"ClaudeBot", "Claude-User", "Claude-SearchBot"}},
	// Mistral: its robots page documents a list for the index and the user
	// agent, none for MistralAI-Training (unconfirmed: third-party sources).
	{Name: "mistralai-index", URL: "https://mistral.ai/mistralai-index-ips.json", Doc: "https://docs.mistral.ai/robots", Tokens: []string{"MistralAI-Index"}},
	{Name: "mistralai-user", URL: "https://mistral.ai/mistralai-user-ips.json", Doc: "https://docs.mistral.ai/robots", Tokens: []string{"MistralAI-User"}},
}

// CheckRangeFile reads and checks a local range list file as New reads it
// (see Config.RangeOverrides), so that a configuration adapter can report
// a missing or malformed list when the configuration is adapted, before
// any verifier is built. The error names the file and, for a JSON error,
// its line.
func CheckRangeFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err // names the file
	}
	switch {
	case st.IsDir():
		return fmt.Errorf("range list %s is a directory, not a file", path)
	case !st.Mode().IsRegular():
		// A FIFO or a device could block the configuration's loading.
		return fmt.Errorf("range list %s: not a regular file", path)
	}
	_, _, err = readRangeFile(path)
	return err
}

// readRangeFile reads and parses a local range list file; its error
// names the file and, for a JSON error, the line.
func readRangeFile(path string) ([]byte, RangeList, error) {
	body, err := readFileLimited(path, MaxListSize)
	if err != nil {
		return nil, RangeList{}, fmt.Errorf("range list %s: %w", path, err)
	}
	rl, err := ParseRangeList(body)
	if err != nil {
		return nil, RangeList{}, fmt.Errorf("range list %s%s: %w", path, jsonErrorLine(body, err), err)
	}
	return body, rl, nil
}

// jsonErrorLine returns ":<line>" for an error ParseRangeList found at a
// place in body (JSON syntax, a value of the wrong type, a bad entry), ""
// for any other.
func jsonErrorLine(body []byte, err error) string {
	var offset int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var entry *entryError
	trimmed := bytes.TrimLeft(body, " \t\r\n") // as ParseRangeList reads it
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	case errors.As(err, &entry):
		offset = entry.entryOffset(trimmed)
	}
	if offset < 0 || offset > int64(len(trimmed)) {
		return ""
	}
	offset += int64(len(body) - len(trimmed))
	return fmt.Sprintf(":%d", 1+bytes.Count(body[:offset], []byte("\n")))
}
