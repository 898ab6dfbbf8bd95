package rules

import (
	"strings"
	"testing"
)

// TestVocabProcessing checks the processing of a statement of preference,
// draft-ietf-aipref-vocab-07 §6.5, on the draft's own examples and the
// cases its text names, read from a header field
// (draft-ietf-aipref-attach-05 §2).
func TestVocabProcessing(t *testing.T) {
	tests := []struct {
		ref, value      string
		trainAI, search Preference
		header          string // String()
		err             bool
	}{
		{"vocab-07 §6", "train-ai=y, search=n", PreferenceAllowed, PreferenceDisallowed, "train-ai=y, search=n", false},
		{"attach-05 §1.2", "train-ai=n", PreferenceDisallowed, PreferenceUnknown, "train-ai=n", false},
		// §6.5.1: the last value of a repeated key wins, and a value
		// that is not a Token leaves the category unknown.
		{"vocab-07 §6.5.1", `train-ai=y, train-ai, search=n, search="n"`, PreferenceUnknown, PreferenceUnknown, "", false},
		// §6.5.1: keys are case-sensitive; an upper-case key fails the
		// parse, and every preference is unknown.
		{"vocab-07 §6.5.1", "Train-AI=n", PreferenceUnknown, PreferenceUnknown, "", true},
		{"vocab-07 §6.5.1", "train-ai=n,", PreferenceUnknown, PreferenceUnknown, "", true},
		// §6.5.2: parameters are ignored; only those of the selected
		// value apply.
		{"vocab-07 §6.5.2", "train-ai;allow=n, train-ai=y", PreferenceAllowed, PreferenceUnknown, "train-ai=y", false},
		{"vocab-07 §6.5.2", `train-ai;has;parameters="?"`, PreferenceUnknown, PreferenceUnknown, "", false},
		// The draft writes this example with a trailing ";", which RFC
		// 9651 §4.2.3.2 cannot parse: unknown all the same.
		{"vocab-07 §6.5.2", `train-ai;has;parameters="?";`, PreferenceUnknown, PreferenceUnknown, "", true},
		{"vocab-07 §6.5", "train-ai=n;reason=x", PreferenceDisallowed, PreferenceUnknown, "train-ai=n", false},
		// §6.2: only the Tokens y and n.
		{"vocab-07 §6.2", "train-ai=no, search=Y", PreferenceUnknown, PreferenceUnknown, "", false},
		{"vocab-07 §6.2", "train-ai=(n), search=?1", PreferenceUnknown, PreferenceUnknown, "", false},
		// §6.4: unknown labels are ignored, and kept for a header.
		{"vocab-07 §6.4", "ai-input=n;x, search=y, train_ai=n", PreferenceUnknown, PreferenceAllowed, "search=y, ai-input=n;x, train_ai=n", false},
		// RFC 9651 §4.2: white space around members; none inside.
		{"RFC 9651 §4.2", "  search=y ,\ttrain-ai=n", PreferenceDisallowed, PreferenceAllowed, "train-ai=n, search=y", false},
		{"vocab-07 §6.3", "train-ai=n, caf\u00e9=y", PreferenceUnknown, PreferenceUnknown, "", true},
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

// TestCombineUsage checks draft-ietf-aipref-vocab-07 §5.1: for each
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
	}
	for _, tt := range tests {
		var us []Usage
		for _, s := range tt.in {
			us = append(us, parse(s))
		}
		if got := CombineUsage(us...).String(); got != tt.want {
			t.Errorf("[vocab-07 §5.1] CombineUsage(%q) = %q, want %q", tt.in, got, tt.want)
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
