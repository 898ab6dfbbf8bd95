package enforce

// signs are what a User-Agent header shows of the client that sent it,
// read from every piece of the header within MaxUserAgentLength (see
// readSigns).
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
// where it starts, and, for a catalogued candidate, its category. The zero
// mark is none.
type mark struct {
	tok string
	at  int
	cat Category
}

// note keeps tok, at offset at, unless the mark holds one already.
func (m *mark) note(tok string, at int, cat Category) {
	if m.tok == "" {
		*m = mark{tok, at, cat}
	}
}

// earlier returns whichever of a and b comes first in the header.
func earlier(a, b mark) mark {
	if a.tok == "" || b.tok != "" && b.at < a.at {
		return b
	}
	return a
}

// readSigns reads the signs of the header h, whose last word the length
// limit cut when cut is set. Signs inside the comment that follows the
// first word count only when the header turns out not to be a browser's,
// whose platform comment that is: it reads them apart until it knows. It
// does not allocate.
func readSigns(h string, cut bool) (sg signs) {
	sc := scanner{s: h, cut: cut}
	var (
		pf        signs // the signs inside the first comment
		words     int   // words read
		lead      bool  // the first word is Mozilla/<digit> or Opera/<digit>
		inComment bool  // the first comment follows the first word
		compat    bool  // the first comment's first word is "compatible"
		msie      bool  // the first comment holds "MSIE"
		engine    bool  // a rendering engine's name appears
		named     bool  // a browser's name appears
	)
	for sc.nextPiece() {
		if !sc.version {
			words++
		}
		tok := h[sc.pstart:sc.prun]
		switch {
		case words == 1 && !sc.version:
			lead = (equalFold(tok, "Mozilla") || equalFold(tok, "Opera")) &&
				sc.nameEnd+1 < sc.end && isDigit(h[sc.nameEnd+1])
		case words == 2 && !sc.version && sc.depth > 0 && sc.comments == 1:
			inComment = true
			compat = equalFold(tok, "compatible")
		}
		into := &sg
		if inComment && sc.comments == 1 && sc.depth > 0 {
			into = &pf
			msie = msie || equalFold(tok, "MSIE")
		}
		engine = engine || !sc.version && isEngine(tok)
		named = named || isBrowserName(tok) || !sc.version && isBrowserName(h[sc.pstart:sc.pend])

		if len(tok) > 2 {
			if cat := lookupCategory(tok); cat != CategoryNone {
				if cat.Class() == ClassCrawler {
					into.crawler.note(tok, sc.pstart, cat)
				} else {
					into.other.note(tok, sc.pstart, cat)
				}
				continue // the catalogue knows better than a keyword
			}
		}
		w := h[sc.pstart:sc.pend]
		if hasKeyword(w) {
			into.keyword.note(w, sc.pstart, CategoryNone)
		}
		if hasRoleWord(w) {
			into.role.note(w, sc.pstart, CategoryNone)
		}
	}
	// A platform comment names a system and a device; one that gives a
	// URL or an address is a crawler's, dressed as a browser's.
	platformShape := lead && inComment && engine && (!compat || msie) && sc.firstLinks == 0
	sg.browser = platformShape || named
	sg.compatible = lead && inComment && compat && !msie && !named
	sg.link = sc.links > 0 || sc.firstLinks > 0
	if !platformShape {
		// No browser's platform comment: what the first comment holds
		// counts as any word does.
		sg.crawler = earlier(sg.crawler, pf.crawler)
		sg.other = earlier(sg.other, pf.other)
		sg.keyword = earlier(sg.keyword, pf.keyword)
		sg.role = earlier(sg.role, pf.role)
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
// "MJ12bot" and "AI2Bot" count. Names of Cubot phones, which Android
// browsers send, do not.
func hasKeyword(w string) bool {
	if len(w) >= 5 && equalFold(w[:5], "cubot") {
		return false
	}
	for i := 0; i+3 <= len(w); i++ {
		var kw string
		switch w[i] | 0x20 {
		case 'b':
			// "bot" ends a name ("Googlebot"), or a part of one
			// ("AhrefsBot", "BotSeer", "bot_v1"), or is plural: not
			// the start of a longer word ("Botswana", "boto").
			if j := i + 3; j < len(w) && 'a' <= w[j] && w[j] <= 'z' &&
				!(w[j] == 's' && (j+1 == len(w) || w[j+1] < 'a' || w[j+1] > 'z')) {
				continue
			}
			kw = "bot"
		case 'c':
			kw = "crawl"
		case 's':
			kw = "spider"
			if len(w)-i >= 2 && w[i+1]|0x20 == 'c' {
				kw = "scraper"
			}
		case 'f':
			kw = "fetcher"
		default:
			continue
		}
		if len(w)-i >= len(kw) && foldedPrefix(w[i:], kw) {
			return true
		}
	}
	return false
}

// roleWords name clients that are automated but not crawlers, in the
// words they call themselves by: uptime and health monitors, validators and
// link checkers, link previewers. They outweigh a crawler keyword, since
// "UptimeBot" and "LinkPreviewBot" are a monitor and a link previewer that
// call themselves bots.
var roleWords = [...]string{"uptime", "monitor", "healthcheck", "validator", "linkcheck", "preview", "unfurl"}

// hasRoleWord reports whether the product name w contains one of roleWords,
// ignoring case.
func hasRoleWord(w string) bool {
	for i := 0; i+6 <= len(w); i++ {
		switch w[i] | 0x20 {
		case 'u', 'm', 'h', 'v', 'l', 'p':
		default:
			continue
		}
		for _, rw := range roleWords {
			if len(w)-i >= len(rw) && foldedPrefix(w[i:], rw) {
				return true
			}
		}
	}
	return false
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
