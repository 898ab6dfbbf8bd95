package record

import (
	"encoding/json"
	"testing"

	"go.uber.org/zap/zapcore"
)

// line encodes zap fields as one JSON line and decodes it.
func line(t *testing.T, fs []zapcore.Field) map[string]any {
	t.Helper()
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{MessageKey: Msg})
	buf, err := enc.EncodeEntry(zapcore.Entry{Message: MsgDecision}, fs)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	return m
}

// TestOptionalFields checks that the instance and the fetcher class are
// written, under their names, exactly when they are set, on both kinds of
// line.
func TestOptionalFields(t *testing.T) {
	for _, tt := range []struct {
		instance, class string
	}{
		{"", ""},
		{"a1b2", ""},
		{"", FetcherUserTriggered},
		{"a1b2", FetcherCrawler},
	} {
		d := Decision{Agent: "GPTBot", Instance: tt.instance, FetcherClass: tt.class}
		s := Served{Agents: []string{"GPTBot"}, Instance: tt.instance, FetcherClass: tt.class}
		for name, m := range map[string]map[string]any{"decision": line(t, d.Fields(nil)), "served": line(t, s.Fields(nil))} {
			for key, want := range map[string]string{Instance: tt.instance, FetcherClass: tt.class} {
				got, ok := m[key]
				if ok != (want != "") || ok && got != want {
					t.Errorf("%s with %s %q: %s = %v (present %v)", name, key, want, key, got, ok)
				}
			}
		}
	}
}
