package rules

// Cloudflare's Content-Signal line (contentsignals.org; the categories are
// also described in draft-romm-aipref-contentsignals-00): a usage
// preference in a robots.txt group, such as
//
//	User-Agent: *
//	Content-Signal: search=yes, ai-train=no
//	Allow: /
//
// The signals are search, ai-input and ai-train, each yes or no; a signal
// left out neither grants nor restricts that use. Cloudflare's managed
// robots.txt adds use=immediate, reference or full, a level of reuse. This
// file reads the line into the vocabulary of draft-ietf-aipref-vocab-08,
// so that a group's Content-Signal and Content-Usage lines give one
// preference (usage_set.go):
//
//	search   → search   (search results: links and short excerpts)
//	ai-train → train-ai (training or fine-tuning; -08 narrows train-ai
//	                     to generative models)
//	ai-input → ai-use   (input to a model for an answer, as RAG)
//	yes → y, no → n; use= has no category and is not carried.
//
// Like a Content-Usage rule, the value may start with a path, which ends at
// the first space or tab and scopes the line (draft-ietf-aipref-attach-05
// §3.2's syntax). contentsignals.org's own examples have none; a value
// that starts with "/" cannot be a list of signals, so a file without paths
// reads the same either way.

import (
	"fmt"
	"strings"
)

// The keys of a Content-Signal line (contentsignals.org). Keys and values
// are read ignoring ASCII case.
const (
	signalSearch  = "search"
	signalAIInput = "ai-input"
	signalAITrain = "ai-train"
	signalUse     = "use" // Cloudflare's level of reuse: immediate, reference or full
)

// A signalLine is a Content-Signal value read into the vocabulary, with
// what a diagnostic needs.
type signalLine struct {
	st          statement // the signals as preferences; no extras, no err
	use         string    // the use level, lower-case, or ""
	malformed   []string  // members that are not key=value
	unknownKeys []string  // keys other than the four
	badValues   []string  // "key=value" of a known key with another value
	repeated    []string  // keys given twice with different values
}

// parseSignals reads a Content-Signal value: members separated by ",",
// each key "=" value with optional white space around the parts. A member
// that cannot be read is skipped, and the others still count: the line is
// not a structured field, and Cloudflare's spelling ("search=yes,ai-train=no")
// is one of several in use. A key given twice combines as two statements
// do (draft-ietf-aipref-vocab-08 §5.1): no wins.
func parseSignals(v string) signalLine {
	var sl signalLine
	seen := map[string]Preference{}
	for _, m := range strings.Split(v, ",") {
		if m = trimSpace(m); m == "" {
			continue
		}
		k, val, ok := strings.Cut(m, "=")
		k, val = trimSpace(k), trimSpace(val)
		if !ok || !isSignalKey(k) {
			sl.malformed = append(sl.malformed, m)
			continue
		}
		key := toLowerASCII(k)
		var cat *Preference
		switch key {
		case signalSearch:
			cat = &sl.st.search
		case signalAITrain:
			cat = &sl.st.trainAI
		case signalAIInput:
			cat = &sl.st.aiUse
		case signalUse:
			if lv := toLowerASCII(val); lv == "immediate" || lv == "reference" || lv == "full" {
				sl.use = lv
			} else {
				sl.badValues = append(sl.badValues, m)
			}
			continue
		default:
			sl.unknownKeys = append(sl.unknownKeys, k)
			continue
		}
		var p Preference
		switch {
		case equalFoldASCII(val, "yes"):
			p = PreferenceAllowed
		case equalFoldASCII(val, "no"):
			p = PreferenceDisallowed
		default:
			sl.badValues = append(sl.badValues, m)
			continue
		}
		if q, ok := seen[key]; ok && q != p {
			sl.repeated = append(sl.repeated, key)
		}
		seen[key] = p
		*cat = cat.combine(p)
	}
	return sl
}

// isSignalKey reports whether k can be a key: a run of letters, digits,
// "-", "_", "." and "*", as the keys of structured fields are; anything
// else (white space, quotes, a path) means the member is malformed.
func isSignalKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// signalMessage writes the message of a diagnostic of a Content-Signal
// line: arg is a member ("key=value") or, for an unknown or repeated key,
// the key, or u the line's rule.
func signalMessage(code diagCode, arg string, u UsageRule) string {
	switch code {
	case diagSignalOutsideGroup:
		return `content-signal before any user-agent line: applies to no group (contentsignals.org puts it in a group, such as "User-agent: *")`
	case diagSignalEmpty:
		return fmt.Sprintf("content-signal states no signal: every category is unknown under %s", usagePathOrRoot(u.Path))
	case diagSignalUse:
		return fmt.Sprintf("use=%s (Cloudflare's level of reuse: immediate, reference or full) has no category in draft-ietf-aipref-vocab-08: "+
			"not carried into Content-Usage", parseSignals(u.Preference).use)
	case diagSignalMalformed:
		hint := ""
		if arg[0] == '*' || arg[0] == '/' {
			hint = `; a path comes first and starts with "/"`
		}
		return fmt.Sprintf("signal %q is not key=value: ignored%s", arg, hint)
	case diagSignalUnknownKey:
		return fmt.Sprintf("signal %q is not one of %s, %s, %s and %s (contentsignals.org): ignored",
			arg, signalSearch, signalAIInput, signalAITrain, signalUse)
	case diagSignalRepeated:
		return fmt.Sprintf("%s is given both yes and no: no wins, as when statements combine (draft-ietf-aipref-vocab-08 §5.1)", arg)
	}
	k, val, _ := strings.Cut(arg, "=")
	k, val = trimSpace(k), trimSpace(val)
	if equalFoldASCII(k, signalUse) {
		return fmt.Sprintf("use takes immediate, reference or full: %q is ignored", val)
	}
	hint := ""
	if equalFoldASCII(val, "y") || equalFoldASCII(val, "n") {
		hint = " (y and n are Content-Usage's values)"
	}
	return fmt.Sprintf("%s takes yes or no%s: %q leaves its preference unknown", toLowerASCII(k), hint, val)
}

// contentSignal handles a Content-Signal line. It belongs to the open
// group and, as a Content-Usage line, does not end its run of user-agent
// lines (see contentUsage).
func (p *parser) contentSignal(num int, v string) {
	if p.open < 0 {
		p.diag(num, Error, diagSignalOutsideGroup, span{}, 0)
		return
	}
	p.prefSeen = true
	path, signals := splitUsageValue(v)
	sl := parseSignals(signals)
	for _, m := range sl.malformed {
		p.diag(num, Warning, diagSignalMalformed, p.text.intern(m), 0)
	}
	for _, k := range sl.unknownKeys {
		p.diag(num, Warning, diagSignalUnknownKey, p.text.intern(k), 0)
	}
	for _, m := range sl.badValues {
		p.diag(num, Warning, diagSignalBadValue, p.text.intern(m), 0)
	}
	for _, k := range sl.repeated {
		p.diag(num, Warning, diagSignalRepeated, p.text.intern(k), 0)
	}
	rule := uint32(len(p.r.usage)) // the rule this line adds, which the messages below read again
	if sl.use != "" {
		p.diag(num, Info, diagSignalUse, span{}, rule)
	}
	st := sl.st
	if st.trainAI == PreferenceUnknown && st.aiUse == PreferenceUnknown && st.search == PreferenceUnknown && sl.use == "" &&
		len(sl.malformed)+len(sl.unknownKeys)+len(sl.badValues) == 0 {
		p.diag(num, Warning, diagSignalEmpty, span{}, rule)
	}
	p.usageRule(num, ContentSignal, path, signals, st)
}
