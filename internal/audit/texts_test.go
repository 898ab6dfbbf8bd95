package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func sumOf(body string) string {
	s := sha256.Sum256([]byte(body))
	return hex.EncodeToString(s[:])
}

// TestOpenTexts checks that a version's text is found anywhere under
// robots_enforce/ of a storage directory, by its name, and only when the
// file's content hashes to that name.
func TestOpenTexts(t *testing.T) {
	dir := t.TempDir()
	write := func(path, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const v3 = "User-agent: *\r\nDisallow: /\r\n"
	// The layout the handler writes today, and another: only the names
	// count.
	write("robots_enforce/4b1f/robots_enforce-state/bodies/"+sumOf(mergeV1), mergeV1)
	write("robots_enforce/9c2e/site/bodies/"+sumOf(mergeV1), mergeV1) // the same version, kept by another instance
	write("robots_enforce/fleet/versions/"+sumOf(v3), v3)
	// A file named as v2 that is not v2: never quoted as v2.
	write("robots_enforce/4b1f/robots_enforce-state/bodies/"+sumOf(mergeV2), mergeV2+"Disallow: /tampered/\n")
	// Outside robots_enforce/, and a name that is no SHA-256.
	write("certificates/"+sumOf("elsewhere"), "elsewhere")
	write("robots_enforce/4b1f/state.json", "{}")

	texts, err := OpenTexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, body, why string
	}{
		{hashOf(mergeV1), mergeV1, ""},
		{hashOf(v3), v3, ""},
		{hashOf(mergeV2), "", TextMissing},
		{hashOf("elsewhere"), "", TextMissing},
		{VersionUnavailable, "", TextNoFile},
		{"../../etc", "", TextMissing},
	} {
		vt, why := texts.Text(tt.name)
		got := ""
		if vt != nil {
			got = string(vt.Body)
			if vt.SHA256 != sumOf(tt.body) || vt.Robots == nil {
				t.Errorf("Text(%s): sha256 %s, robots %v", tt.name, vt.SHA256, vt.Robots)
			}
		}
		if got != tt.body || why != tt.why {
			t.Errorf("Text(%s) = %q, %q; want %q, %q", tt.name, got, why, tt.body, tt.why)
		}
	}
	if vt, _ := texts.Text(hashOf(v3)); vt.Line(1) != "User-agent: *" || vt.Line(2) != "Disallow: /" || vt.Line(3) != "" {
		t.Errorf("lines of a CRLF file: %q, %q, %q", vt.Line(1), vt.Line(2), vt.Line(3))
	}
	st := texts.stats()
	if st.Mismatched != 1 || len(st.Read) != 2 || st.Missing[hashOf(mergeV2)] != TextMissing || !slices.Equal(st.Storage, []string{dir}) {
		t.Errorf("stats %+v", st)
	}

	for _, bad := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "certificates")} {
		if _, err := OpenTexts(bad); err == nil || !strings.Contains(err.Error(), "storage") {
			t.Errorf("OpenTexts(%s): %v, want an error", bad, err)
		}
	}
}
