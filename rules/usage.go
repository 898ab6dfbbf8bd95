package rules

// AI usage preferences: the vocabulary of draft-ietf-aipref-vocab-07 and
// its exemplary serialisation, a structured-fields Dictionary (RFC 9651
// §3.2). Where a preference is attached (a robots.txt Content-Usage rule,
// the Content-Usage header field) is draft-ietf-aipref-attach-05; see
// usage_rule.go.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dunglas/httpsfv"
)

// The labels of the usage categories (draft-ietf-aipref-vocab-07 §6.1).
// Labels are case-sensitive.
const (
	// LabelTrainAI is AI model training (draft-ietf-aipref-vocab-07 §4.1).
	LabelTrainAI = "train-ai"
	// LabelSearch is search (draft-ietf-aipref-vocab-07 §4.2).
	LabelSearch = "search"
)

// A Preference is what a statement of preference says of one category of
// use: allowed, disallowed, or unknown when it says nothing that applies
// (draft-ietf-aipref-vocab-07 §3 and §5).
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

// combine applies draft-ietf-aipref-vocab-07 §5.1 to two preferences for
// one category: any disallow wins, then any allow, else unknown. The
// constants are ordered so that this is the greater of the two.
func (p Preference) combine(q Preference) Preference { return max(p, q) }

// A Usage is the usage preference that applies to some content: a
// preference for each category of the vocabulary, and what stated it. The
// zero Usage states nothing (Found reports false). A Usage is a small
// value that shares its description with the compiled robots.txt; it is
// safe for concurrent use.
type Usage struct {
	// TrainAI is the preference for AI model training ("train-ai").
	TrainAI Preference
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
	rules  []UsageRule // the Content-Usage rules that decided, in file order
	extras []usageMember
}

// usageMember is a dictionary member whose key the vocabulary does not
// define, kept as serialised ("ai-input=n;x") so that a response can pass
// it on (draft-ietf-aipref-vocab-07 §6.4: ignored, not dropped).
type usageMember struct {
	key, text string
}

// Found reports whether a statement of preference applied: a Content-Usage
// rule matched the path, or a header field was parsed. A statement can be
// found and still leave every category unknown.
func (u Usage) Found() bool { return u.d != nil }

// String serialises the preference as a Content-Usage field value
// (draft-ietf-aipref-attach-05 §2): the known categories that are y or n,
// in the vocabulary's order ("train-ai=n, search=y"), then the members with
// keys the vocabulary does not define, as RFC 9651 serialises them (at most
// maxUsageExtras, 16). It returns "" when there is nothing to say. It does
// not allocate.
func (u Usage) String() string {
	if u.d == nil {
		return ""
	}
	return u.d.header
}

// Rules returns the Content-Usage rules that decided, in file order: one,
// or several with the same path (draft-ietf-aipref-attach-05 §3.1), or with
// patterns of the same length that all match; at most maxUsageRulesListed
// (16), the first. It returns nil for a Usage read from a header field.
func (u Usage) Rules() []UsageRule {
	if u.d == nil {
		return nil
	}
	return slices.Clone(u.d.rules)
}

// Line returns the line of the first deciding Content-Usage rule, or 0. It
// does not allocate.
func (u Usage) Line() int {
	if u.d == nil || len(u.d.rules) == 0 {
		return 0
	}
	return u.d.rules[0].Line
}

// ParseUsage reads the value of a Content-Usage header field
// (draft-ietf-aipref-attach-05 §2), given as its field lines, which are
// combined as RFC 9651 §4.2 says. When the value is not a Dictionary, every
// preference is unknown (draft-ietf-aipref-vocab-07 §6.5.1) and the error
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
// draft-ietf-aipref-vocab-07 §5.1 says: for each category any disallow wins,
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
	d := &usageDecision{rules: mergeRules(parts), extras: mergeExtras(extras...)}
	d.header = serialiseUsage(out.TrainAI, out.Search, d.extras)
	out.d = d
	return out
}

// A statement is one statement of preference, processed as
// draft-ietf-aipref-vocab-07 §6.5 says, with what a diagnostic needs.
type statement struct {
	trainAI, search Preference
	extras          []usageMember
	err             error    // the value is not a Dictionary: every preference is unknown
	unknownKeys     []string // keys the vocabulary does not define
	badValues       []string // known keys whose value is not the token y or n
}

// parseStatement processes a statement of preference
// (draft-ietf-aipref-vocab-07 §6.5): the bytes are parsed as a Dictionary
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
// (draft-ietf-aipref-vocab-07 §6.2, §6.5).
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

// newUsage combines statements that apply together (draft-ietf-aipref-vocab-07
// §5.1), with the rules that stated them, into a Usage.
func newUsage(sts []statement, rules []UsageRule) Usage {
	var u Usage
	var extras [][]usageMember
	for _, st := range sts {
		u.TrainAI = u.TrainAI.combine(st.trainAI)
		u.Search = u.Search.combine(st.search)
		extras = append(extras, st.extras)
	}
	d := &usageDecision{rules: firstRules(rules), extras: mergeExtras(extras...)}
	d.header = serialiseUsage(u.TrainAI, u.Search, d.extras)
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
	next := make([]int, len(parts))
	var out []UsageRule
	for len(out) < maxUsageRulesListed {
		pick := -1
		for i, p := range parts {
			if next[i] < len(p.rules) && (pick < 0 || p.rules[next[i]].Line < parts[pick].rules[next[pick]].Line) {
				pick = i
			}
		}
		if pick < 0 {
			break
		}
		out = append(out, parts[pick].rules[next[pick]])
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
// are y or n, then the other members as written.
func serialiseUsage(trainAI, search Preference, extras []usageMember) string {
	var parts []string
	for _, c := range []struct {
		label string
		p     Preference
	}{{LabelTrainAI, trainAI}, {LabelSearch, search}} {
		if c.p != PreferenceUnknown {
			parts = append(parts, c.label+"="+c.p.String())
		}
	}
	for _, m := range extras {
		parts = append(parts, m.text)
	}
	return strings.Join(parts, ", ")
}
