package verify

// DNSDomains is one operator's documented reverse DNS domains: a PTR name
// of a genuine crawler address lies under one of Suffixes, and resolves
// back to the address.
type DNSDomains struct {
	// Tokens are the product tokens the domains prove.
	Tokens []string
	// Suffixes are domain suffixes, matched on a label boundary.
	Suffixes []string
	// Doc is the operator's page that documents them.
	Doc string
}

// BuiltinReverseDNS returns the built-in table of reverse DNS domains. The
// returned slice is a copy.
func BuiltinReverseDNS() []DNSDomains {
	return append([]DNSDomains(nil), builtinReverseDNS...)
}

var builtinReverseDNS = []DNSDomains{
	// Google's verification page: common crawlers resolve under
	// googlebot.com (crawl-*.googlebot.com, geo-crawl-*.geo.googlebot.com),
	// special-case crawlers and Google's own user-triggered fetchers under
	// google.com. googleusercontent.com is deliberately absent: Google Cloud
	// customers' machines resolve there, so it proves nothing about Google.
	{Tokens: []string{"Googlebot", "Googlebot-Image", "Googlebot-News", "Googlebot-Video", "Storebot-Google",
		"Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video", "Google-CloudVertexBot"},
		Suffixes: []string{"googlebot.com", "google.com"}, Doc: googleDoc},
	{Tokens: []string{"AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google", "APIs-Google", "Google-Safety",
		"FeedFetcher-Google", "Google-Read-Aloud", "Google-Site-Verification"},
		Suffixes: []string{"google.com"}, Doc: googleDoc},
	// Microsoft: bingbot resolves under search.msn.com.
	{Tokens: []string{"bingbot"}, Suffixes: []string{"search.msn.com"},
		Doc: "https://www.bing.com/webmasters/help/how-to-verify-bingbot-3905dc26"},
	// Apple: Applebot resolves under applebot.apple.com.
	{Tokens: []string{"Applebot"}, Suffixes: []string{"applebot.apple.com"}, Doc: "https://support.apple.com/en-us/119829"},
	// Yandex: its robots resolve under yandex.ru, yandex.net or yandex.com.
	{Tokens: []string{"YandexBot", "YandexImages", "YandexMobileBot", "YandexAccessibilityBot", "YandexRenderResourcesBot"},
		Suffixes: []string{"yandex.ru", "yandex.net", "yandex.com"},
		Doc:      "https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html"},
	// Baidu: Baiduspider resolves under baidu.com or baidu.jp.
	{Tokens: []string{"Baiduspider"}, Suffixes: []string{"baidu.com", "baidu.jp"},
		Doc: "https://help.baidu.com/question?prod_id=99&class=0&id=3001"},
	// Amazon: Amazonbot resolves under crawl.amazonbot.amazon.
	{Tokens: []string{"Amazonbot"}, Suffixes: []string{"crawl.amazonbot.amazon"}, Doc: "https://developer.amazon.com/amazonbot"},
	// Common Crawl: CCBot resolves under crawl.commoncrawl.org.
	{Tokens: []string{"CCBot"}, Suffixes: []string{"crawl.commoncrawl.org"}, Doc: "https://commoncrawl.org/ccbot"},
}
