package audit

import (
	"fmt"
	"strings"
	"testing"
)

// TestJudgedOnce checks that a violation counts once against each version
// it was judged against, however often its record lists it, and once
// against OtherVersions for all those past MaxVersions.
func TestJudgedOnce(t *testing.T) {
	judged := func(vs ...string) string {
		return v2("A", "deny", "violation", "judged_versions", vs)
	}
	var full strings.Builder // MaxVersions-1 versions: one slot left
	for i := range MaxVersions - 1 {
		full.WriteString(judged(fmt.Sprintf("%016x", i)))
	}
	tests := []struct {
		name string
		log  string
		want string // hash count, most first
	}{
		{"twice in one record", judged("a", "a", "b"), "a 1, b 1"},
		{"listed apart in one record, and in another", judged("a", "b", "a") + judged("a"), "a 2, b 1"},
		{"past MaxVersions, two in one record", full.String() + judged("y", "x", "y") + judged("z", "0000000000000000"), "(other) 2, 0000000000000000 2"},
	}
	for _, tt := range tests {
		a := New(Options{})
		if _, err := a.Read("judged.log", strings.NewReader(tt.log)); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range a.Report().Crawlers[0].JudgedVersions {
			got = append(got, fmt.Sprintf("%s %d", v.Hash, v.Count))
		}
		if s := strings.Join(got, ", "); !strings.HasPrefix(s, tt.want) {
			t.Errorf("%s: judged %s, want %s first", tt.name, s, tt.want)
		}
	}
}
