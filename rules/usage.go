package rules

// AI usage preferences: the vocabulary of draft-ietf-aipref-vocab-08 and
// its exemplary serialisation, a structured-fields Dictionary (RFC 9651
// §3.2). Where a preference is attached (a robots.txt Content-Usage rule,
// the Content-Usage header field) is draft-ietf-aipref-attach-05; see
// usage_rule.go. Cloudflare's Content-Signal lines are read into the same
// vocabulary; see signal.go.
//
// Why -08 and not -07, which attach-05 cites: -08 adds the category
// ai-use, onto which Content-Signal's ai-input maps, and keeps the labels
// and the syntax of -07. A -07 reader ignores ai-use and passes it on in a
// header as an unknown member (vocab-07 §6.4), so the header this package
// writes is the one a -07 reader would write, but for the order of its
// members.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dunglas/httpsfv"
)

// The labels of the usage categories (draft-ietf-aipref-vocab-08 §6.1),
// in the vocabulary's order. Labels are case-sensitive.
const (
	// LabelTrainAI is AI Training: training or fine-tuning a generative AI
	// model; since -08, training of models for only non-generative tasks
	// (classification, ranking, scoring) is not in the category
	// (draft-ietf-aipref-vocab-08 §2, §4.1).
	LabelTrainAI = "train-ai"
	// LabelAIUse is AI Use: using an asset as input to a generative AI
	// model, where the user did not provide the asset directly, and not as
	// training (draft-ietf-aipref-vocab-08 §4.2; new in -08).
	LabelAIUse = "ai-use"
	// LabelSearch is Search: use in a search application that directs
	// users to the asset's location; where a use meets its conditions, the
	// search preference overrides those of the other categories
	// (draft-ietf-aipref-vocab-08 §4.3).
	LabelSearch = "search"
)

// A Preference is what a statement of preference says of one category of
// use: allowed, disallowed, or unknown when it says nothing that applies
// (draft-ietf-aipref-vocab-08 §3 and §5).
type Preference uint8

const (
	// PreferenceUnknown: no statement says y or n for the category.
	PreferenceUnknown Preference = iota
	// PreferenceAllowed: "y".
	PreferenceAllowed
	// PreferenceDisallowed: "n".
	PreferenceDisallowed
)

// String returns "y", "n" or "unknown".
func (p Preference) String() string {
	switch p {
	case PreferenceUnknown:
		return "unknown"
	case PreferenceAllowed:
		return "y"
	case PreferenceDisallowed:
		return "n"
	}
	return fmt.Sprintf("preference(%d)", uint8(p))
}

// combine applies draft-ietf-aipref-vocab-08 §5.1 to two preferences for
// one category: any disallow wins, then any allow, else unknown. The
// constants are ordered so that this is the greater of the two.
func (p Preference) combine(q Preference) Preference { return max(p, q) }

// A Usage is the usage preference that applies to some content: a
// preference for each category of the vocabulary, and what stated it. The
// zero Usage states nothing (Found reports false). A Usage is a small
// value that shares its description with the compiled robots.txt; it is
// safe for concurrent use.
type Usage struct {
	// TrainAI is the preference for AI training ("train-ai").
	TrainAI Preference
	// AIUse is the preference for AI use ("ai-use"): input to a generative
	// model.
	AIUse Preference
	// Search is the preference for search ("search").
	Search Preference
	d      *usageDecision
}

// Limits on what a Usage describes. The preferences themselves are always
// combined from every statement that applies.
const (
	// maxUsageRulesListed bounds the rules a Usage lists (the first in
	// file order): a report needs a few, and a generated file can repeat a
	// path thousands of times, which a lookup that combines ties would
	// then copy on every request.
	maxUsageRulesListed = 16
	// maxUsageExtras bounds the members outside the vocabulary that a
	// Usage keeps for its header value (the first keys written): enough
	// for any extension vocabulary, while a hostile file cannot make the
	// header, or the work of combining, large.
	maxUsageExtras = 16
)

// usageDecision is what a Usage says beyond its preferences, built when a
// robots.txt is compiled so that a lookup only copies a pointer.
type usageDecision struct {
	header string      // String's result
	rules  []UsageRule // the rules that decided, in file order
	extras []usageMember
	// parts, when set, are the decisions this one combines; its rules are
	// then theirs, merged only when asked for (Rules), so that a
	// combination built for every pair of a group's Content-Usage and
	// Content-Signal answers costs its header and no copy of their rules.
	parts []*usageDecision
}

// ruleList returns the rules that decided, in file order, at most
// maxUsageRulesListed. It may share memory with d.
func (d *usageDecision) ruleList() []UsageRule {
	if d.parts == nil {
		return d.rules
	}
	return mergeRules(d.parts)
}

// firstLine returns the line of the first rule that decided, or 0,
// without allocating.
func (d *usageDecision) firstLine() int {
	if d.parts == nil {
		if len(d.rules) == 0 {
			return 0
		}
		return d.rules[0].Line
	}
	first := 0
	for _, p := range d.parts {
		if l := p.firstLine(); l > 0 && (first == 0 || l < first) {
			first = l
		}
	}
	return first
}

// usageMember is a dictionary member whose key the vocabulary does not
// define, kept as serialised ("ai-input=n;x") so that a response can pass
// it on (draft-ietf-aipref-vocab-08 §6.4: ignored, not dropped).
type usageMember struct {
	key, text string
}

// Found reports whether a statement of preference applied: a Content-Usage
// or Content-Signal rule matched the path, or a header field was parsed. A
// statement can be found and still leave every category unknown.
func (u Usage) Found() bool { return u.d != nil }

// String serialises the preference as a Content-Usage field value
// (draft-ietf-aipref-attach-05 §2): the known categories that are y or n,
// in the vocabulary's order ("train-ai=n, ai-use=n, search=y"), then the
// members with keys the vocabulary does not define, as RFC 9651 serialises
// them (at most maxUsageExtras, 16). It returns "" when there is nothing to
// say. It does not allocate.
func (u Usage) String() string {
	if u.d == nil {
		return ""
	}
	return u.d.header
}

// Rules returns the rules that decided, in file order: for each kind of
// line (UsageRule.Kind), one, or several with the same path
// (draft-ietf-aipref-attach-05 §3.1), or with patterns of the same length
// that all match; at most maxUsageRulesListed (16), the first. Each rule
// says which kind of line it is and on which line it stands, so that a
// report can show where each part of the preference came from. It returns
// nil for a Usage read from a header field.
func (u Usage) Rules() []UsageRule {
	if u.d == nil {
		return nil
	}
	return slices.Clone(u.d.ruleList())
}

// Line returns the line of the first deciding rule, or 0. It does not
// allocate.
func (u Usage) Line() int {
	if u.d == nil {
		return 0
	}
	return u.d.firstLine()
}

// ParseUsage reads the value of a Content-Usage header field
// (draft-ietf-aipref-attach-05 §2), given as its field lines, which are
// combined as RFC 9651 §4.2 says. When the value is not a Dictionary, every
// preference is unknown (draft-ietf-aipref-vocab-08 §6.5.1) and the error
// says why; the Usage is then not Found.
func ParseUsage(fieldLines ...string) (Usage, error) {
	value := strings.Join(fieldLines, ",")
	st := parseStatement(value)
	if st.err != nil {
		return Usage{}, fmt.Errorf("content-usage %q: %w", value, st.err)
	}
	return newUsage([]statement{st}, nil), nil
}

// CombineUsage combines statements of preference made in different ways or
// by different parties, such as a robots.txt rule and a header field, as
// draft-ietf-aipref-vocab-08 §5.1 says: for each category any disallow wins,
// then any allow. Members with keys outside the vocabulary are kept, the
// last one of each key winning, as if the statements were one field (RFC
// 9651 §4.2). Statements that were not Found are skipped.
func CombineUsage(us ...Usage) Usage {
	var parts []*usageDecision
	var out, only Usage
	for _, u := range us {
		if u.d == nil {
			continue
		}
		out.TrainAI = out.TrainAI.combine(u.TrainAI)
		out.AIUse = out.AIUse.combine(u.AIUse)
		out.Search = out.Search.combine(u.Search)
		parts = append(parts, u.d)
		only = u
	}
	switch len(parts) {
	case 0:
		return Usage{}
	case 1:
		return only
	}
	var extras [][]usageMember
	for _, p := range parts {
		extras = append(extras, p.extras)
	}
	d := &usageDecision{parts: parts, extras: mergeExtras(extras...)}
	d.header = serialiseUsage(out, d.extras)
	out.d = d
	return out
}

// A statement is one statement of preference, processed as
// draft-ietf-aipref-vocab-08 §6.5 says, with what a diagnostic needs.
type statement struct {
	trainAI, aiUse, search Preference
	extras                 []usageMember
	err                    error    // the value is not a Dictionary: every preference is unknown
	unknownKeys            []string // keys the vocabulary does not define
	badValues              []string // known keys whose value is not the token y or n
}

// parseStatement processes a statement of preference
// (draft-ietf-aipref-vocab-08 §6.5): the bytes are parsed as a Dictionary
// (RFC 9651 §4.2.2, where the last value of a repeated key wins), then each
// category takes y or n from a Token value of its label, ignoring
// parameters; anything else leaves it unknown.
func parseStatement(s string) statement {
	var st statement
	dict, err := httpsfv.UnmarshalDictionary([]string{s})
	if err != nil {
		st.err = err
		return st
	}
	for _, key := range dict.Names() {
		m, _ := dict.Get(key)
		switch key {
		case LabelTrainAI:
			st.trainAI = st.value(key, m)
		case LabelAIUse:
			st.aiUse = st.value(key, m)
		case LabelSearch:
			st.search = st.value(key, m)
		default:
			st.unknownKeys = append(st.unknownKeys, key)
			one := httpsfv.NewDictionary()
			one.Add(key, m)
			if text, err := httpsfv.Marshal(one); err == nil {
				st.extras = append(st.extras, usageMember{key: key, text: text})
			}
		}
	}
	return st
}

// value reads a known category's member: the Token y or n, or unknown
// (draft-ietf-aipref-vocab-08 §6.2, §6.5).
func (st *statement) value(key string, m httpsfv.Member) Preference {
	if item, ok := m.(httpsfv.Item); ok {
		switch item.Value {
		case httpsfv.Token("y"):
			return PreferenceAllowed
		case httpsfv.Token("n"):
			return PreferenceDisallowed
		}
	}
	st.badValues = append(st.badValues, key)
	return PreferenceUnknown
}

// newUsage combines statements that apply together (draft-ietf-aipref-vocab-08
// §5.1), with the rules that stated them, into a Usage.
func newUsage(sts []statement, rules []UsageRule) Usage {
	var u Usage
	var extras [][]usageMember
	for _, st := range sts {
		u.TrainAI = u.TrainAI.combine(st.trainAI)
		u.AIUse = u.AIUse.combine(st.aiUse)
		u.Search = u.Search.combine(st.search)
		extras = append(extras, st.extras)
	}
	d := &usageDecision{rules: firstRules(rules), extras: mergeExtras(extras...)}
	d.header = serialiseUsage(u, d.extras)
	u.d = d
	return u
}

// mergeExtras merges lists of members in order, a later member replacing
// an earlier one of the same key in place, as in one Dictionary (RFC 9651
// §4.2.2); keys past the first maxUsageExtras are dropped.
func mergeExtras(lists ...[]usageMember) []usageMember {
	var out []usageMember
	at := map[string]int{}
	for _, list := range lists {
		for _, m := range list {
			if i, ok := at[m.key]; ok {
				out[i] = m
				continue
			}
			if len(out) == maxUsageExtras {
				continue
			}
			at[m.key] = len(out)
			out = append(out, m)
		}
	}
	return out
}

// mergeRules returns the first maxUsageRulesListed rules of the parts by
// line, each part's rules being in file order already.
func mergeRules(parts []*usageDecision) []UsageRule {
	lists := make([][]UsageRule, len(parts))
	for i, p := range parts {
		lists[i] = p.ruleList()
	}
	next := make([]int, len(lists))
	var out []UsageRule
	for len(out) < maxUsageRulesListed {
		pick := -1
		for i, l := range lists {
			if next[i] < len(l) && (pick < 0 || l[next[i]].Line < lists[pick][next[pick]].Line) {
				pick = i
			}
		}
		if pick < 0 {
			break
		}
		out = append(out, lists[pick][next[pick]])
		next[pick]++
	}
	return out
}

// firstRules returns the first maxUsageRulesListed rules, in a slice of
// their own.
func firstRules(rules []UsageRule) []UsageRule {
	return slices.Clone(rules[:min(len(rules), maxUsageRulesListed)])
}

// serialiseUsage writes a Content-Usage value: the known categories that
// are y or n, in the order of draft-ietf-aipref-vocab-08 §6.1, then the
// other members as written.
func serialiseUsage(u Usage, extras []usageMember) string {
	var parts []string
	for _, c := range []struct {
		label string
		p     Preference
	}{{LabelTrainAI, u.TrainAI}, {LabelAIUse, u.AIUse}, {LabelSearch, u.Search}} {
		if c.p != PreferenceUnknown {
			parts = append(parts, c.label+"="+c.p.String())
		}
	}
	for _, m := range extras {
		parts = append(parts, m.text)
	}
	return strings.Join(parts, ", ")
}
