package render

import (
	"bytes"
	"testing"
)

// TestGolden checks every output format over the logs of testdata/audit:
// a real Caddy's log, logs of record versions 2 and 3, a log of
// escalated crawlers, and, in the table, records of the first schema.
func TestGolden(t *testing.T) {
	for _, tt := range []struct {
		name    string // of the golden files, with the format's extension
		logs    []string
		formats []Format
	}{
		{"compliance", []string{"compliance.log"}, Formats},
		{"v2", v2Logs, Formats},
		{"v3", v3Logs, Formats},
		{"v3-escalated", []string{escalatedLog}, Formats},
		{"older-schema", []string{"older-schema.log"}, []Format{FormatTable}},
	} {
		r := reportOf(t, tt.logs...)
		for _, f := range tt.formats {
			var b bytes.Buffer
			if err := Write(&b, r, f); err != nil {
				t.Fatalf("%s: Write(%s): %v", tt.name, f, err)
			}
			ext := map[Format]string{FormatTable: "txt", FormatJSON: "json", FormatCSV: "csv", FormatHTML: "html"}[f]
			golden(t, tt.name+"."+ext, b.Bytes())
		}
	}
}
