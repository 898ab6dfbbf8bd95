package words

import "testing"

func TestCommas(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 9223372036854775807: "9,223,372,036,854,775,807"} {
		if got := Commas(n); got != want {
			t.Errorf("Commas(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	for s, want := range map[string]string{
		"":                  None,
		"GPTBot":            "GPTBot",
		"/ünïcode":          "/ünïcode",
		"h\x1b[31m":         `h\x1b[31m`,
		"/\x1b]0;title\x07": `/\x1b]0;title\a`,
		"bad\xffutf8":       `bad\xffutf8`,
		"line\nbreak":       `line\nbreak`,
	} {
		if got := Clean(s); got != want {
			t.Errorf("Clean(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestPlurals(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Plural(1, "violation"), "1 violation"},
		{Plural(0, "violation"), "0 violations"},
		{Plural(1500, "violation"), "1,500 violations"},
		{PluralVerb(1, "row shows", "rows show"), "1 row shows"},
		{PluralVerb(2000, "row shows", "rows show"), "2,000 rows show"},
		{InputName("-"), "standard input"},
		{InputName("a\x1b.log"), `a\x1b.log`},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}
