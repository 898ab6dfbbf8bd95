package agent

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// crawlersTxt is the catalogue of automated clients; its header documents
// the format and the sources.
//
//go:embed crawlers.txt
var crawlersTxt string

// Category is the kind of automated client a catalogued token belongs to.
type Category uint8

const (
	// CategoryNone: the token is not in the catalogue.
	CategoryNone Category = iota
	// CategorySearch: search engine crawlers and their fetchers.
	CategorySearch
	// CategoryAI: crawlers, fetchers and agents of AI companies.
	CategoryAI
	// CategorySEO: SEO, marketing and link-analysis crawlers.
	CategorySEO
	// CategorySocial: link previewers of social networks and messengers.
	CategorySocial
	// CategoryArchive: web archives and site copiers.
	CategoryArchive
	// CategoryMonitor: uptime, performance and health checkers.
	CategoryMonitor
	// CategoryFeed: feed readers and aggregators.
	CategoryFeed
	// CategoryScanner: security and internet-wide scanners.
	CategoryScanner
	// CategoryTool: HTTP libraries, command-line clients, API tools and
	// headless browsers.
	CategoryTool
	// CategoryCrawler: general-purpose crawlers and crawling frameworks,
	// whatever they are used for.
	CategoryCrawler
)

var categoryNames = [...]string{
	CategoryNone:    "none",
	CategorySearch:  "search",
	CategoryAI:      "ai",
	CategorySEO:     "seo",
	CategorySocial:  "social",
	CategoryArchive: "archive",
	CategoryMonitor: "monitor",
	CategoryFeed:    "feed",
	CategoryScanner: "scanner",
	CategoryTool:    "tool",
	CategoryCrawler: "crawler",
}

// Class returns the class of client a category's tokens mark (see
// ClientClass): crawlers for search, ai, seo, archive, feed, scanner and
// crawler, which visit sites unasked, on their own schedule; other
// automated clients for tool, monitor and social, which fetch what a
// person or an operator points them at: a link to preview, a site to
// check, an API to call. CategoryNone marks no class; it returns
// ClassBrowser.
func (c Category) Class() ClientClass {
	switch c {
	case CategorySearch, CategoryAI, CategorySEO, CategoryArchive, CategoryFeed, CategoryScanner, CategoryCrawler:
		return ClassCrawler
	case CategorySocial, CategoryMonitor, CategoryTool:
		return ClassAutomated
	}
	return ClassBrowser
}

// String returns the category's name as crawlers.txt spells it, or "none".
func (c Category) String() string {
	if int(c) < len(categoryNames) {
		return categoryNames[c]
	}
	return fmt.Sprintf("category(%d)", uint8(c))
}

// parseCategory reads a category name of crawlers.txt.
func parseCategory(s string) (Category, bool) {
	i := slices.Index(categoryNames[:], s)
	if i <= int(CategoryNone) {
		return CategoryNone, false
	}
	return Category(i), true
}

// A Crawler is one entry of the catalogue of automated clients: a crawler,
// or another automated client, as its Category's Class says.
type Crawler struct {
	// Token is the product token, as the catalogue spells it.
	Token string
	// Category is the kind of client.
	Category Category
	// Source is the key of the source that documents the entry (see
	// CatalogueSources).
	Source string
	// UserTriggered says its operator documents it as a user-triggered
	// fetcher: it fetches a page because a person asked for it.
	UserTriggered bool
}

// A CatalogueSource is a source the catalogue's entries come from.
type CatalogueSource struct {
	// Key names the source in the entries.
	Key string
	// Where says what and where the source is: its title, address and
	// version.
	Where string
}

// Crawlers returns the catalogue of automated clients, in file order.
func Crawlers() []Crawler { return slices.Clone(catalogue) }

// CatalogueSources returns the sources of the catalogue's entries, in file
// order.
func CatalogueSources() []CatalogueSource { return slices.Clone(catalogueSources) }

// LookupCrawler returns the category of the catalogued token tok, compared
// case-insensitively, or CategoryNone. It does not allocate.
func LookupCrawler(tok string) Category {
	if !isToken(tok) {
		return CategoryNone
	}
	if k := kindOf(tok); k != kindGeneric {
		return Category(k)
	}
	return CategoryNone
}

// A catalogueError is a line of crawlers.txt that could not be used.
type catalogueError struct {
	line int
	msg  string
}

func (e catalogueError) Error() string {
	return fmt.Sprintf("crawlers.txt:%d: %s", e.line, e.msg)
}

// parseCatalogue reads a catalogue in the format of crawlers.txt. Lines it
// cannot use are skipped and reported, and so are repeated tokens and
// sources after their first entry; tests require there be none.
func parseCatalogue(text string) ([]Crawler, []CatalogueSource, []error) {
	var (
		out     []Crawler
		sources []CatalogueSource
		errs    []error
		seen    = map[string]int{}
		keys    = map[string]int{}
	)
	for num, line := range strings.Split(text, "\n") {
		num++
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "source" {
			if len(fields) < 3 {
				errs = append(errs, catalogueError{num, "want \"source key where\""})
				continue
			}
			if first, dup := keys[fields[1]]; dup {
				errs = append(errs, catalogueError{num, fmt.Sprintf("source %q already declared on line %d", fields[1], first)})
				continue
			}
			keys[fields[1]] = num
			sources = append(sources, CatalogueSource{Key: fields[1], Where: strings.Join(fields[2:], " ")})
			continue
		}
		user := len(fields) == 4 && fields[3] == "user"
		if len(fields) != 3 && !user {
			errs = append(errs, catalogueError{num, fmt.Sprintf("want \"token category source [user]\", got %q", strings.Join(fields, " "))})
			continue
		}
		tok, name, src := fields[0], fields[1], fields[2]
		if !isToken(tok) {
			errs = append(errs, catalogueError{num, fmt.Sprintf("token %q is not a run of [A-Za-z_-]", tok)})
			continue
		}
		cat, ok := parseCategory(name)
		if !ok {
			errs = append(errs, catalogueError{num, fmt.Sprintf("unknown category %q", name)})
			continue
		}
		if _, ok := keys[src]; !ok {
			errs = append(errs, catalogueError{num, fmt.Sprintf("source %q not declared", src)})
			continue
		}
		k := strings.ToLower(tok)
		if first, dup := seen[k]; dup {
			errs = append(errs, catalogueError{num, fmt.Sprintf("token %q already listed on line %d", tok, first)})
			continue
		}
		seen[k] = num
		out = append(out, Crawler{Token: tok, Category: cat, Source: src, UserTriggered: user})
	}
	return out, sources, errs
}

// isToken reports whether s is a whole product token, as rules reads one.
func isToken(s string) bool { return rules.IsProductToken(s) }

// catalogue and catalogueSources are crawlers.txt, parsed once. They are
// never modified.
var catalogue, catalogueSources, _ = parseCatalogue(crawlersTxt)

// userTriggered holds the catalogue's user-triggered fetchers, by their
// token lower-case.
var userTriggered = func() map[string]bool {
	m := make(map[string]bool)
	for _, c := range catalogue {
		if c.UserTriggered {
			m[strings.ToLower(c.Token)] = true
		}
	}
	return m
}()

// UserTriggered reports whether tok, compared case-insensitively, names a
// user-triggered fetcher of the catalogue: one its operator documents as
// fetching a page because a person asked for it (ChatGPT-User,
// Claude-User, Perplexity-User, Google's user-triggered fetchers, ...).
func UserTriggered(tok string) bool {
	if len(tok) > 64 {
		return false
	}
	var buf [64]byte
	return userTriggered[string(lowerASCII(buf[:0], tok))]
}

// lowerASCII appends s to dst with ASCII letters lower-case.
func lowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// staticTokens answers, for a candidate, whether it is generic and which
// category the catalogue gives it, in one probe. It is built once from
// genericTokens and the catalogue and never modified.
var staticTokens = newTokenTable(genericTokens, catalogue)

// A tokenTable is an open-addressing hash table of tokens keyed by their
// folded head (see foldHead) and length. Go maps cost a hash of the whole
// key and, for mixed-case candidates, a lower-case copy; here a probe
// compares two numbers in a 16-octet slot, which matters because every
// candidate of every request is looked up.
type tokenTable struct {
	slots []tokenSlot
	rests []string // per slot: the octets past the eighth, lower case
	shift uint     // 64 - log2(len(slots))
}

type tokenSlot struct {
	head uint64 // folded head; 0 for an empty slot
	n    uint16 // length
	kind tokenKind
}

// A tokenKind is what the static tables know of a token: generic, or a
// catalogue category.
type tokenKind uint8

// kindGeneric marks a generic token; other kinds are Categories.
const kindGeneric tokenKind = 0xff

func newTokenTable(generic []string, crawlers []Crawler) *tokenTable {
	n := len(generic) + len(crawlers)
	bits := uint(4)
	for 1<<bits < 2*n { // at most half full
		bits++
	}
	t := &tokenTable{slots: make([]tokenSlot, 1<<bits), rests: make([]string, 1<<bits), shift: 64 - bits}
	for _, g := range generic {
		t.insert(g, kindGeneric)
	}
	for _, c := range crawlers {
		t.insert(c.Token, tokenKind(c.Category))
	}
	return t
}

// insert adds tok; the first kind given for a token wins. Tokens longer
// than 65535 octets are not kept.
func (t *tokenTable) insert(tok string, kind tokenKind) {
	if tok == "" || len(tok) > 0xffff {
		return
	}
	e := tokenSlot{head: foldHead(tok), n: uint16(len(tok)), kind: kind}
	rest := ""
	if len(tok) > 8 {
		rest = strings.ToLower(tok[8:])
	}
	mask := uint(len(t.slots) - 1)
	for i := uint(tokenHash(e.head, len(tok)) >> t.shift); ; i = (i + 1) & mask {
		s := &t.slots[i]
		switch {
		case s.head == 0:
			*s, t.rests[i] = e, rest
			return
		case s.head == e.head && s.n == e.n && t.rests[i] == rest:
			return
		}
	}
}

// lookup returns the kind of tok, whose folded head is head and whose
// tokenHash is hash, or 0 when the tables do not know it.
func (t *tokenTable) lookup(tok string, head, hash uint64) tokenKind {
	n := len(tok)
	if n > 0xffff {
		return 0
	}
	slots := t.slots
	mask := uint(len(slots) - 1)
	for i := uint(hash >> t.shift); ; i = (i + 1) & mask {
		s := &slots[i&mask]
		if s.head == 0 {
			return 0
		}
		if s.head == head && int(s.n) == n && (n <= 8 || equalFold(t.rests[i], tok[8:])) {
			return s.kind
		}
	}
}
