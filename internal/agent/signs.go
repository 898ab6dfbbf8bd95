package agent

// signs are what a User-Agent header shows of the client that sent it,
// read from every piece of the header within MaxUserAgentLength as
// Tokenize reads it (see signReader), and kept in its Tokens for the
// Classifier.
type signs struct {
	// crawler is the first candidate the catalogue files under a crawler's
	// category; other the first it files under another category (tools,
	// monitors, link previewers).
	crawler, other mark
	// keyword is the first product name, version or comment word holding a
	// crawler keyword (see hasKeyword), and role the first naming a monitor
	// or a link previewer (see hasRoleWord), among the words whose own
	// candidate the catalogue does not file.
	keyword, role mark
	// browser says the header is shaped like a browser's (see
	// Classifier).
	browser bool
	// compatible says the header is a crawler's by the old convention
	// "Mozilla/<version> (compatible; <name>…)": a browser's name, then a
	// comment that starts "compatible" and names no browser (MSIE).
	compatible bool
	// link says the header holds a URL or an e-mail address: where
	// crawlers say who runs them.
	link bool
}

// A mark is a sign found in a header: the word or candidate that shows it,
// as an offset and a length into the header, and, for a catalogued
// candidate, its category. A mark of length 0 is none.
type mark struct {
	at, n uint16
	cat   Category
}

// note keeps the sign header[at:at+n], unless the mark holds one already.
func (m *mark) note(at, n int, cat Category) {
	if m.n == 0 {
		*m = mark{uint16(at), uint16(n), cat}
	}
}

// earlier returns whichever of a and b comes first in the header.
func earlier(a, b mark) mark {
	if a.n == 0 || b.n != 0 && b.at < a.at {
		return b
	}
	return a
}

// A signReader gathers the signs of a header, piece by piece, as a scanner
// reads them (see Tokenize). Signs inside the comment that follows the first
// word count only when the header turns out not to be a browser's, whose
// platform comment that is: it keeps them apart until it knows.
type signReader struct {
	sg, pf    signs // the signs outside, and inside, the first comment
	words     int   // words read
	lead      bool  // the first word is Mozilla/<digit> or Opera/<digit>
	inComment bool  // the first comment follows the first word
	compat    bool  // the first comment's first word is "compatible"
	msie      bool  // the first comment holds "MSIE"
	engine    bool  // a rendering engine's name appears
	named     bool  // a browser's name appears
}

// piece notes the signs of the piece sc read last from the header h; kind
// is what the static tables know of its candidate.
func (r *signReader) piece(sc *scanner, h string, kind tokenKind) {
	if !sc.version {
		r.words++
	}
	tok := h[sc.pstart:sc.prun]
	switch {
	case r.words == 1 && !sc.version:
		r.lead = (equalFold(tok, "Mozilla") || equalFold(tok, "Opera")) &&
			sc.nameEnd+1 < sc.end && isDigit(h[sc.nameEnd+1])
	case r.words == 2 && !sc.version && sc.depth > 0 && sc.comments == 1:
		r.inComment = true
		r.compat = equalFold(tok, "compatible")
	}
	into := &r.sg
	if r.inComment && sc.comments == 1 && sc.depth > 0 {
		into = &r.pf
		r.msie = r.msie || equalFold(tok, "MSIE")
	}
	if !r.engine && !sc.version {
		r.engine = isEngine(tok)
	}
	if !r.named {
		r.named = isBrowserName(tok) || !sc.version && sc.pend != sc.prun && isBrowserName(h[sc.pstart:sc.pend])
	}

	if kind != 0 && kind != kindGeneric {
		if cat := Category(kind); cat.Class() == ClassCrawler {
			into.crawler.note(sc.pstart, len(tok), cat)
		} else {
			into.other.note(sc.pstart, len(tok), cat)
		}
		return // the catalogue knows better than a keyword
	}
	if kind == kindGeneric && sc.pend == sc.prun {
		return // a generic word, whole: "Mozilla", "AppleWebKit"
	}
	if into.keyword.n != 0 && into.role.n != 0 {
		return
	}
	w := h[sc.pstart:sc.pend]
	keyword, role := wordSigns(w)
	if keyword {
		into.keyword.note(sc.pstart, len(w), CategoryNone)
	}
	if role {
		into.role.note(sc.pstart, len(w), CategoryNone)
	}
}

// finish returns the signs of the header, once sc has read all of it.
func (r *signReader) finish(sc *scanner) signs {
	sg := r.sg
	// A platform comment names a system and a device; one that gives a
	// URL or an address is a crawler's, dressed as a browser's.
	platformShape := r.lead && r.inComment && r.engine && (!r.compat || r.msie) && sc.firstLinks == 0
	sg.browser = platformShape || r.named
	sg.compatible = r.lead && r.inComment && r.compat && !r.msie && !r.named
	sg.link = sc.links > 0 || sc.firstLinks > 0
	if !platformShape {
		// No browser's platform comment: what the first comment holds
		// counts as any word does.
		sg.crawler = earlier(sg.crawler, r.pf.crawler)
		sg.other = earlier(sg.other, r.pf.other)
		sg.keyword = earlier(sg.keyword, r.pf.keyword)
		sg.role = earlier(sg.role, r.pf.role)
	}
	return sg
}

// isEngine reports whether the product name tok is a browser engine's, as
// browsers' headers name them.
func isEngine(tok string) bool {
	switch len(tok) {
	case 5:
		return equalFold(tok, "Gecko") || equalFold(tok, "KHTML")
	case 6:
		return equalFold(tok, "WebKit") || equalFold(tok, "Presto") || equalFold(tok, "Goanna")
	case 7:
		return equalFold(tok, "Trident")
	case 11:
		return equalFold(tok, "AppleWebKit")
	}
	return false
}

// isBrowserName reports whether tok, a candidate or a product name, names
// a browser that may not follow the Mozilla shape: feature phones', TVs'
// and old mobile browsers, and J2ME phones, which give their MIDP profile
// ("Profile/MIDP-2.0").
func isBrowserName(tok string) bool {
	if len(tok) < 5 || len(tok) > 10 {
		return false
	}
	switch tok[0] | 0x20 {
	case 'o', 'u', 'm', 'h', 'b', 'd', 'n', 'i', 'l', 'q':
	default:
		return false
	}
	switch len(tok) {
	case 5:
		return equalFold(tok, "Opera") || equalFold(tok, "UCWEB") || equalFold(tok, "Obigo") ||
			equalFold(tok, "HbbTV") || equalFold(tok, "MIDP-")
	case 6:
		return equalFold(tok, "Midori")
	case 7:
		return equalFold(tok, "Browser") || equalFold(tok, "Dolphin")
	case 8:
		return equalFold(tok, "NetFront") || equalFold(tok, "iBrowser") || equalFold(tok, "Ladybird")
	case 9:
		return equalFold(tok, "UCBrowser") || equalFold(tok, "QQBrowser")
	case 10:
		return equalFold(tok, "MQQBrowser") || equalFold(tok, "OneBrowser") || equalFold(tok, "UP.Browser")
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// hasKeyword reports whether the product name w contains, ignoring case,
// "bot", "crawl", "spider", "fetcher" or "scraper": the words crawlers
// name themselves with. It reads whole product names, digits included, so
// "MJ12bot" and "AI2Bot" count. "bot" counts where it ends a name or a
// part of one ("Googlebot", "AhrefsBot", "BotSeer", "bot_v1") or is plural,
// not where a longer word starts with it ("Botswana", "boto"). Names of
// Cubot phones, which Android browsers send, do not count.
func hasKeyword(w string) bool {
	keyword, _ := wordSigns(w)
	return keyword
}

// hasRoleWord reports whether the product name w contains, ignoring case,
// "uptime", "monitor", "healthcheck", "validator", "linkcheck", "preview"
// or "unfurl": the words that clients automated but not crawlers call
// themselves by: uptime and health monitors, validators and link checkers,
// link previewers. They outweigh a crawler keyword (see Classifier), since
// "UptimeBot" and "LinkPreviewBot" are a monitor and a link previewer that
// call themselves bots.
func hasRoleWord(w string) bool {
	_, role := wordSigns(w)
	return role
}

// wordSigns reports whether the product name w holds a crawler keyword (see
// hasKeyword) and a role word (see hasRoleWord), in one pass.
func wordSigns(w string) (keyword, role bool) {
	cubot := len(w) >= 5 && equalFold(w[:5], "cubot")
	for i := 0; i+3 <= len(w) && !(keyword && role); i++ {
		rest := w[i:]
		switch w[i] | 0x20 {
		case 'b':
			if cubot || keyword || !foldedPrefix(rest, "bot") {
				continue
			}
			j := i + 3
			keyword = j == len(w) || w[j] < 'a' || w[j] > 'z' ||
				w[j] == 's' && (j+1 == len(w) || w[j+1] < 'a' || w[j+1] > 'z')
		case 'c':
			keyword = keyword || len(rest) >= 5 && foldedPrefix(rest, "crawl")
		case 's':
			keyword = keyword || len(rest) >= 6 && foldedPrefix(rest, "spider") ||
				len(rest) >= 7 && foldedPrefix(rest, "scraper")
		case 'f':
			keyword = keyword || len(rest) >= 7 && foldedPrefix(rest, "fetcher")
		case 'u':
			role = role || len(rest) >= 6 && (foldedPrefix(rest, "uptime") || foldedPrefix(rest, "unfurl"))
		case 'm':
			role = role || len(rest) >= 7 && foldedPrefix(rest, "monitor")
		case 'h':
			role = role || len(rest) >= 11 && foldedPrefix(rest, "healthcheck")
		case 'v':
			role = role || len(rest) >= 9 && foldedPrefix(rest, "validator")
		case 'l':
			role = role || len(rest) >= 9 && foldedPrefix(rest, "linkcheck")
		case 'p':
			role = role || len(rest) >= 7 && foldedPrefix(rest, "preview")
		}
	}
	return keyword, role
}

// foldedPrefix reports whether s starts with the lower-case word kw,
// ignoring the case of s.
func foldedPrefix(s, kw string) bool {
	for j := 0; j < len(kw); j++ {
		if s[j]|0x20 != kw[j] {
			return false
		}
	}
	return true
}
