//go:build ignore

// extract builds the labelled User-Agent sets of this directory from copies
// of their public sources (see README.md, which names each source's commit
// and licence). Run it from the repository's root:
//
//	go run testdata/useragents/extract.go \
//		-crawlers crawler-user-agents.json -uap-ua test_ua.yaml \
//		-uap-device test_device.yaml -top top-user-agents.json
//
// It labels each header browser, crawler or automated by the rules written
// here, never by the classifier under test, and puts about a quarter of the
// headers, chosen by a hash of what groups them (a crawler's pattern, a
// browser family), in the held-out part.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const (
	browser   = "browser"
	crawler   = "crawler"
	automated = "automated"
)

// tagClass maps the tags of monperrus/crawler-user-agents to classes. A
// pattern with any crawler tag is a crawler.
var tagClass = map[string]string{
	"search-engine": crawler, "ai-crawler": crawler, "seo": crawler, "archiver": crawler,
	"academic": crawler, "advertising": crawler, "scanner": crawler, "feed-reader": crawler,
	"monitoring": automated, "social-preview": automated, "http-library": automated,
	"browser-automation": automated,
}

// patternClass overrides the tags of a few patterns, where the tag says
// less than what the client is: crawling frameworks and site copiers filed
// as HTTP libraries, and Meta's crawlers filed as link previewers (Meta
// documents meta-externalagent as a crawler for AI training and
// meta-webindexer as an indexer).
var patternClass = map[string]string{
	"phpcrawl": crawler, "SimpleCrawler": crawler, "crawler4j": crawler, "Scrapy": crawler,
	"colly": crawler, "larbin": crawler, "GoParserBot": crawler, "rawweb-bot": crawler,
	"HTTrack": crawler, `newspaper\/`: crawler, "trafilatura": crawler,
	`meta-externalagent\/`: crawler, "meta-webindexer": crawler,
}

// uapBrowsers are the browser families of ua-parser's test_ua.yaml whose
// headers are people's browsers: stand-alone, in-app, TV, console and
// feature-phone browsers. Families of automation tools, mail clients and
// embedded runtimes are left out.
var uapBrowsers = []string{
	"115 Browser", "1Password", "360 Secure Browser", "AOL", "AOL Desktop Gold Browser",
	"AOL Shield Browser", "AVG", "Aloha Browser", "Amazon Silk", "Android", "Atom Browser",
	"Avast Secure Browser", "Avira", "BOLT", "Baidu Browser", "Baidu Explorer", "Basilisk",
	"BlackBerry WebKit", "Brave", "Bunjalloo", "CCleaner", "Chrome", "Chrome Frame",
	"Chrome Mobile", "Chrome Mobile WebView", "Chrome Mobile iOS", "Chromium",
	"Chromium GOST Browser", "Coc Coc", "Comodo Dragon", "Conkeror", "Craving Explorer Browser",
	"Crosswalk", "Decentr Web3 Browser", "Dolfin", "Dolphin", "Dragon", "DuckDuckGo",
	"DuckDuckGo Mobile", "Ecosia Android", "Ecosia iOS", "Edge", "Edge Mobile", "Espial",
	"Facebook", "Facebook Messenger", "FireWeb", "Firefox", "Firefox (Shiretoko)", "Firefox Beta",
	"Firefox Mobile", "Firefox iOS", "Flipboard", "Google", "HbbTV", "HeyTap Browser",
	"HiBrowser", "Hola Browser", "Honor Browser", "Huawei Browser", "IE", "IE Large Screen",
	"IE Mobile", "ICE Browser", "IceCat", "Instabridge", "Instagram", "Iron", "JiSu Browser",
	"KakaoTalk", "Kindle", "Konqueror", "LINE", "Ladybird", "Lite Browser", "LuaKit",
	"Mail.ru Chromium Browser", "Maxthon", "Midori", "Mint Browser", "MiuiBrowser", "Minimo",
	"Mobile Safari", "Mobile Safari UI/WKWebView", "MozillaDeveloperPreview", "MullvadBrowser",
	"Mypal Browser", "NCSA Mosaic", "NetCast Smart TV", "NetFront", "NetFront NX",
	"Nokia Browser", "Nokia OSS Browser", "Norton", "ONE Browser", "Obigo", "Oculus Browser",
	"Odin", "Onefootball", "Opera", "Opera Coast", "Opera GX", "Opera Mini", "Opera Mobile",
	"Opera Neon", "Opera Tablet", "Opera Touch", "Otter", "Ovi Browser", "Pale Moon",
	"Phantom Browser", "Phoenix Browser", "Pinterest", "Planetweb", "Puffin", "QAX Browser",
	"QQ Browser", "QQ Browser Mini", "QQ Browser Mobile", "QtCarBrowser", "Quark", "Quark PC",
	"QupZilla", "Rekonq", "RockMelt", "Safari", "Sailfish Browser", "Samsung Internet",
	"Sber Browser", "Seznam prohlížeč", "Skyfire", "Sleipnir", "Smart Lenovo Browser",
	"SmartTV WebBrowser", "Snapchat", "Snowshoe", "Sparrow Browser", "Steam Client",
	"Steam Deck", "Steam GameOverlay", "Talon Cyber Security Browser", "Teleca Browser",
	"Telegram", "Tenta Browser", "ThunderBrowse", "TikTok", "TopBuzz", "Twitter", "UC Browser",
	"UP.Browser", "Vewd Browser", "Vivaldi", "VivoBrowser", "WeChat Browser", "WeTab", "Weibo",
	"Waterfox", "WebKit Nightly", "Whale", "Wolvic Browser", "Yandex Browser", "iBrowser Mini",
	"mDolphin", "qutebrowser", "webOS Browser",
}

// uapApps are the families of uapBrowsers that are apps with a browser in
// them: their in-app browser sends the system browser's header, starting
// "Mozilla/", and the app's own requests to its API send a header of the
// app's ("Instagram 415.0.0.36.76 Android (…)", "[FBAN/FB4A;…]"), which is
// labelled automated.
var uapApps = []string{
	"1Password", "Baidu Explorer", "Facebook", "Facebook Messenger", "Flipboard", "Google",
	"Instagram", "KakaoTalk", "LINE", "Onefootball", "Pinterest", "Snapchat", "Telegram",
	"TikTok", "TopBuzz", "Twitter", "WeChat Browser", "Weibo",
}

// uapAutomated are the families of ua-parser's test_ua.yaml whose headers
// are programs rather than people's browsers: HTTP libraries and tools, SDKs,
// native apps' API clients, updaters, monitors and link previewers.
var uapAutomated = []string{
	"AHC", "AncestryAndroid", "AngryBirdsBlack", "AnyConnect", "Apache-CXF", "Apache-HttpClient",
	"Apple Watch App", "ArcGIS Earth", "ArcGIS Pro", "ArcGIS Runtime SDK for Android",
	"ArcGIS Runtime SDK for NET", "ArcGIS Runtime SDK for Qt", "ArcGIS Runtime SDK for iOS",
	"ArcMap", "Axel", "Bing for iPad", "Boto", "Boto3", "Box", "Box Sync", "CFNetwork",
	"Catchpoint", "Catchpoint bot", "Chesscom-Android", "CloudCockpitBackend", "CloudFoundry",
	"Collector for ArcGIS", "Cooliris", "Cyberduck", "DAVdroid", "DEPoker", "Debian APT-HTTP",
	"ESPN", "Evolution", "ExchangeServicesClient", "ExchangeWebServices", "Explorer for ArcGIS",
	"FME", "FacebookBot", "GeoEvent Server", "Ghost", "Glo-De", "GmailImageProxy", "Go-CF-client",
	"Go-http-client", "Google-HTTP-Java-Client", "GuzzleHttp", "HTTPClient", "HTTPie",
	"HeadlessChrome", "IMPlusFull", "Island for iPhone", "JAEGER_SECURITY", "JDSports", "JNLP",
	"JOSM", "Java", "Java-EurekaClient", "Jersey", "JetS3t", "Kurio App", "LinkedInBot",
	"Luminary", "MacAppStore", "Microsoft SkyDriveSync", "Microsoft-CryptoAPI", "MobileRSSFree",
	"Monitis", "NewRelicPingerBot", "NightstandPaid", "Node-oauth", "OpenBSD ftp",
	"Outlook-iOS", "Owncloud", "Parking Mania Free", "PhantomJS", "PingdomBot", "Planet Boing!",
	"PlayTube", "Poof", "PostmanRuntime", "PyAMF", "PycURL", "Python Requests", "Python aiohttp",
	"Python-urllib", "QGIS", "RCM CardDAV plugin", "RackspaceBot", "ReactorNetty",
	"Reader Notifier", "Roadrunner", "Roku", "Rummy LITE iPad", "Ruxit Synthetic", "S3 Browser",
	"S3Gof3r", "SAP CPI", "SAP NetWeaver Application Server", "Salesforce", "Site24x7",
	"Slack-ImgProxy", "Slackbot-LinkExpanding", "SophosAgent", "SophosUpdateManager",
	"StatusCakeBot", "Surveyon", "Tableau", "Transmit", "Twitterbot", "Ubuntu APT-HTTP",
	"Vert.x-WebClient", "ViaFree", "WebPageTest.org bot", "WeltMobile", "Wget", "WhatsApp",
	"WinHTTP", "Windows-Update-Agent", "WormsiPhone", "YahooMailProxy", "YottaaMonitor",
	"akka-http", "aria2", "aws-cli", "aws-sdk-cpp", "aws-sdk-dotnet-45", "aws-sdk-go",
	"aws-sdk-go-v2", "aws-sdk-java", "aws-sdk-nodejs", "aws-sdk-ruby2", "axios",
	"babbelIndonesian", "curl", "go-cli", "go-resty", "got", "http.rb", "ibm-cos-sdk-java",
	"iTunes", "jupdate", "lftp", "libcurl-agent", "libwww-perl", "lua-resty-http", "minio-go",
	"okhttp", "ping-service", "rclone", "reqwest", "rusoto", "s3fs", "sap xsuaa",
	"sap-leonardo-iot-sdk-nodejs", "scalaj-http", "unirest-java", "ureq", "urlgrabber", "wget2",
}

// deviceKeywords finds device models that read like a crawler's name, for
// the Android and iOS browser headers of test_device.yaml kept whatever
// the sample.
var deviceKeywords = regexp.MustCompile(`(?i)bot|crawl|spider|fetch|scrap`)

// deviceSample keeps one Android or iOS browser header of test_device.yaml
// in this many.
const deviceSample = 24

type row struct{ class, part, key, ua string }

type set struct {
	name string
	rows []row
}

// seen holds every header kept, in any set: a header is kept once, in the
// first set that has it.
var seen = map[string]bool{}

func (s *set) add(class, key, ua string) {
	if ua == "" || strings.ContainsAny(ua, "\t\r\n") || seen[ua] || len(ua) > 1024 {
		return
	}
	seen[ua] = true
	h := fnv.New32a()
	h.Write([]byte(s.name + "\x00" + key))
	part := "tune"
	if h.Sum32()%4 == 0 {
		part = "holdout"
	}
	s.rows = append(s.rows, row{class, part, key, ua})
}

func (s *set) write(dir, header string) {
	f, err := os.Create(filepath.Join(dir, s.name+".tsv"))
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, header)
	fmt.Fprintln(w, "# class\tpart\tkey\tuser-agent")
	for _, r := range s.rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.class, r.part, r.key, r.ua)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// uapCases reads the user_agent_string and family fields of a ua-parser
// test file.
func uapCases(path string) [][2]string {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*- user_agent_string: (.*)\n\s*family: (.*)$`)
	var out [][2]string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, [2]string{unquote(m[1]), unquote(m[2])})
	}
	return out
}

// unquote reads a YAML scalar as ua-parser's files write them.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'':
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		var v string
		if err := json.Unmarshal([]byte(s), &v); err == nil {
			return v
		}
		return s[1 : len(s)-1]
	}
	return s
}

func main() {
	crawlersPath := flag.String("crawlers", "", "crawler-user-agents.json of monperrus/crawler-user-agents")
	uapUA := flag.String("uap-ua", "", "tests/test_ua.yaml of ua-parser/uap-core")
	uapDevice := flag.String("uap-device", "", "tests/test_device.yaml of ua-parser/uap-core")
	topPath := flag.String("top", "", "src/index.json of microlinkhq/top-user-agents")
	out := flag.String("out", "testdata/useragents", "directory to write the sets to")
	flag.Parse()

	var crawlers []struct {
		Pattern   string   `json:"pattern"`
		Instances []string `json:"instances"`
		Tags      []string `json:"tags"`
	}
	b, err := os.ReadFile(*crawlersPath)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, &crawlers); err != nil {
		log.Fatal(err)
	}
	var botPatterns []*regexp.Regexp
	for _, c := range crawlers {
		botPatterns = append(botPatterns, regexp.MustCompile(c.Pattern))
	}
	isBot := func(ua string) bool {
		return slices.ContainsFunc(botPatterns, func(re *regexp.Regexp) bool { return re.MatchString(ua) })
	}

	// Browsers first, so that a header that a crawler list also gives (an
	// automation tool's that is a browser's, byte for byte) counts as the
	// browser's it is.
	top := &set{name: "top-user-agents"}
	var topUAs []string
	if b, err = os.ReadFile(*topPath); err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal(b, &topUAs); err != nil {
		log.Fatal(err)
	}
	for _, ua := range topUAs {
		top.add(browser, ua, ua)
	}

	uap := &set{name: "uap-core"}
	for _, c := range uapCases(*uapUA) {
		ua, family := c[0], c[1]
		switch {
		case slices.Contains(uapApps, family) && !strings.HasPrefix(ua, "Mozilla/"):
			uap.add(automated, family, ua)
		case slices.Contains(uapBrowsers, family) && !isBot(ua):
			uap.add(browser, family, ua)
		case slices.Contains(uapAutomated, family):
			uap.add(automated, family, ua)
		}
	}
	for _, c := range uapCases(*uapDevice) {
		ua, family := c[0], c[1]
		mobile := strings.HasPrefix(ua, "Mozilla/5.0 (Linux; Android ") || strings.HasPrefix(ua, "Mozilla/5.0 (Linux; U; Android ") ||
			strings.HasPrefix(ua, "Mozilla/5.0 (iPhone;") || strings.HasPrefix(ua, "Mozilla/5.0 (iPad;")
		if family == "Spider" || !mobile || !strings.Contains(ua, "AppleWebKit/") || isBot(ua) {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(ua))
		if deviceKeywords.MatchString(ua) || h.Sum32()%deviceSample == 0 {
			uap.add(browser, "device "+family, ua)
		}
	}

	mon := &set{name: "crawler-user-agents"}
	for _, c := range crawlers {
		class := ""
		for _, t := range c.Tags {
			switch tagClass[t] {
			case crawler:
				class = crawler
			case automated:
				if class == "" {
					class = automated
				}
			}
		}
		if o := patternClass[c.Pattern]; o != "" {
			class = o
		}
		if class == "" {
			continue
		}
		for _, ua := range c.Instances {
			mon.add(class, c.Pattern, ua)
		}
	}

	top.write(*out, "# microlinkhq/top-user-agents src/index.json: the most used browser headers; MIT. See README.md.\n")
	uap.write(*out, "# ua-parser/uap-core tests/test_ua.yaml and tests/test_device.yaml, labelled by family; Apache-2.0. See README.md.\n")
	mon.write(*out, "# monperrus/crawler-user-agents crawler-user-agents.json, labelled by tags; MIT. See README.md.\n")
	for _, s := range []*set{top, uap, mon} {
		n := map[string]int{}
		for _, r := range s.rows {
			n[r.class+" "+r.part]++
		}
		fmt.Println(s.name, len(s.rows), n)
	}
}
