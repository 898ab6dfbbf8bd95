package rules

import (
	"strings"
	"testing"
)

// TestVocabProcessing checks the processing of a statement of preference,
// draft-ietf-aipref-vocab-08 §6.5, on the draft's own examples and the
// cases its text names, read from a header field
// (draft-ietf-aipref-attach-05 §2).
func TestVocabProcessing(t *testing.T) {
	tests := []struct {
		ref, value      string
		trainAI, search Preference
		header          string // String()
		err             bool
	}{
		{"vocab-08 §6", "train-ai=y, search=n", PreferenceAllowed, PreferenceDisallowed, "train-ai=y, search=n", false},
		{"attach-05 §1.2", "train-ai=n", PreferenceDisallowed, PreferenceUnknown, "train-ai=n", false},
		// §6.5.1: the last value of a repeated key wins, and a value
		// that is not a Token leaves the category unknown.
		{"vocab-08 §6.5.1", `train-ai=y, train-ai, search=n, search="n"`, PreferenceUnknown, PreferenceUnknown, "", false},
		// §6.5.1: keys are case-sensitive; an upper-case key fails the
		// parse, and every preference is unknown.
		{"vocab-08 §6.5.1", "Train-AI=n", PreferenceUnknown, PreferenceUnknown, "", true},
		{"vocab-08 §6.5.1", "train-ai=n,", PreferenceUnknown, PreferenceUnknown, "", true},
		// §6.5.2: parameters are ignored; only those of the selected
		// value apply.
		{"vocab-08 §6.5.2", "train-ai;allow=n, train-ai=y", PreferenceAllowed, PreferenceUnknown, "train-ai=y", false},
		{"vocab-08 §6.5.2", `train-ai;has;parameters="?"`, PreferenceUnknown, PreferenceUnknown, "", false},
		// The draft writes this example with a trailing ";", which RFC
		// 9651 §4.2.3.2 cannot parse: unknown all the same.
		{"vocab-08 §6.5.2", `train-ai;has;parameters="?";`, PreferenceUnknown, PreferenceUnknown, "", true},
		{"vocab-08 §6.5", "train-ai=n;reason=x", PreferenceDisallowed, PreferenceUnknown, "train-ai=n", false},
		// §6.2: only the Tokens y and n.
		{"vocab-08 §6.2", "train-ai=no, search=Y", PreferenceUnknown, PreferenceUnknown, "", false},
		{"vocab-08 §6.2", "train-ai=(n), search=?1", PreferenceUnknown, PreferenceUnknown, "", false},
		// §6.4: unknown labels are ignored, and kept for a header.
		{"vocab-08 §6.4", "ai-input=n;x, search=y, train_ai=n", PreferenceUnknown, PreferenceAllowed, "search=y, ai-input=n;x, train_ai=n", false},
		// RFC 9651 §4.2: white space around members; none inside.
		{"RFC 9651 §4.2", "  search=y ,\ttrain-ai=n", PreferenceDisallowed, PreferenceAllowed, "train-ai=n, search=y", false},
		{"vocab-08 §6.3", "train-ai=n, caf\u00e9=y", PreferenceUnknown, PreferenceUnknown, "", true},
		{"RFC 9651 §4.2", "", PreferenceUnknown, PreferenceUnknown, "", false},
	}
	for _, tt := range tests {
		u, err := ParseUsage(tt.value)
		if u.TrainAI != tt.trainAI || u.Search != tt.search || u.String() != tt.header || (err != nil) != tt.err {
			t.Errorf("[%s] ParseUsage(%q) = train-ai %v, search %v, %q, error %v; want %v, %v, %q, error %v",
				tt.ref, tt.value, u.TrainAI, u.Search, u.String(), err, tt.trainAI, tt.search, tt.header, tt.err)
		}
		if u.Found() == tt.err {
			t.Errorf("[%s] ParseUsage(%q).Found() = %v, want %v", tt.ref, tt.value, u.Found(), !tt.err)
		}
	}
}

// TestVocabAIUse checks the category draft-ietf-aipref-vocab-08 adds,
// AI Use (§4.2, label "ai-use", §6.1): read as the other categories are,
// and written between train-ai and search, the vocabulary's order.
func TestVocabAIUse(t *testing.T) {
	tests := []struct {
		value, header string
		aiUse         Preference
	}{
		{"ai-use=n", "ai-use=n", PreferenceDisallowed},
		{"search=y, ai-use=y, train-ai=n", "train-ai=n, ai-use=y, search=y", PreferenceAllowed},
		{"ai-use=y, ai-use=n", "ai-use=n", PreferenceDisallowed}, // §6.5.1: the last wins
		{"ai-use=no, x=1", "x=1", PreferenceUnknown},             // §6.2: only the tokens y and n
		{"ai-use;y, search=y", "search=y", PreferenceUnknown},    // a bare key is Boolean true
		{"ai-input=n", "ai-input=n", PreferenceUnknown},          // Content-Signal's key, not a label
	}
	for _, tt := range tests {
		u, err := ParseUsage(tt.value)
		if err != nil || u.AIUse != tt.aiUse || u.String() != tt.header {
			t.Errorf("[vocab-08 §4.2] ParseUsage(%q) = ai-use %v, %q, %v; want %v, %q", tt.value, u.AIUse, u.String(), err, tt.aiUse, tt.header)
		}
	}
	r := Parse([]byte("User-agent: *\nContent-Usage: ai-use=n, train-ai=y\n"))
	if ds := r.Diagnostics(); len(ds) != 0 {
		t.Errorf("[vocab-08 §6.1] Content-Usage with ai-use: diagnostics %v, want none", ds)
	}
	if u := r.Decide("A", "/x").Usage; u.AIUse != PreferenceDisallowed || u.String() != "train-ai=y, ai-use=n" {
		t.Errorf("[vocab-08 §4.2] Decide(/x).Usage = %q, ai-use %v; want train-ai=y, ai-use=n", u, u.AIUse)
	}
}

// TestParseUsageFieldLines checks that a header sent as several field lines
// is one Dictionary (RFC 9651 §4.2), the last value of a key winning.
func TestParseUsageFieldLines(t *testing.T) {
	u, err := ParseUsage("train-ai=y", "search=n, train-ai=n")
	if err != nil || u.TrainAI != PreferenceDisallowed || u.Search != PreferenceDisallowed {
		t.Errorf("[RFC 9651 §4.2] ParseUsage(two lines) = %+v, %v; want train-ai=n, search=n", u, err)
	}
	if _, err := ParseUsage("train-ai=y", ""); err == nil {
		t.Errorf("[RFC 9651 §4.2] ParseUsage with an empty second line: no error, want one (a trailing comma)")
	}
}

// TestCombineUsage checks draft-ietf-aipref-vocab-08 §5.1: for each
// category, any disallow wins, then any allow, else unknown.
func TestCombineUsage(t *testing.T) {
	parse := func(s string) Usage {
		u, err := ParseUsage(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"train-ai=y", "train-ai=n"}, "train-ai=n"},
		{[]string{"train-ai=n", "train-ai=y"}, "train-ai=n"},
		{[]string{"train-ai=y", "search=n"}, "train-ai=y, search=n"},
		{[]string{"train-ai=y", ""}, "train-ai=y"},
		{[]string{"train-ai=y, x=1", "x=2, search=y"}, "train-ai=y, search=y, x=2"},
		{[]string{"search=y", "search=y"}, "search=y"},
		{[]string{"ai-use=y, search=y", "ai-use=n"}, "ai-use=n, search=y"},
	}
	for _, tt := range tests {
		var us []Usage
		for _, s := range tt.in {
			us = append(us, parse(s))
		}
		if got := CombineUsage(us...).String(); got != tt.want {
			t.Errorf("[vocab-08 §5.1] CombineUsage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if u := CombineUsage(Usage{}, Usage{}); u.Found() {
		t.Errorf("CombineUsage of nothing found = %+v, want nothing", u)
	}
	if u := parse("search=n"); CombineUsage(Usage{}, u) != u {
		t.Errorf("CombineUsage of one statement is not that statement")
	}
}

// TestPreferenceString checks the names a Preference prints as.
func TestPreferenceString(t *testing.T) {
	got := strings.Join([]string{PreferenceUnknown.String(), PreferenceAllowed.String(), PreferenceDisallowed.String(), Preference(9).String()}, " ")
	if want := "unknown y n preference(9)"; got != want {
		t.Errorf("Preference names = %q, want %q", got, want)
	}
}
