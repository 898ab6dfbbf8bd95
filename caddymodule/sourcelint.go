package caddymodule

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/robotsenforce/caddy-robots-enforce/internal/lint"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// A file or inline source is the operator's own text, read when the
// configuration is: what "caddy robots lint" finds in it is found then
// too. An error (a line the parser cannot use, an HTML page, binary
// content) fails the configuration, when a Caddyfile is adapted (naming
// its line) and when JSON is loaded, since the handler would enforce
// rules other than the ones written; a warning is logged when the handler
// is provisioned.

// maxLintFindings bounds the findings an error or a warning names: the
// first few say what to fix, and "caddy robots lint" lists them all.
const maxLintFindings = 3

// lintSource checks the text of a source, named as the configuration
// names it ("source inline", "source file robots.txt"): it returns its
// errors, and keeps its warnings in s for Provision to log.
func (s *Settings) lintSource(name string, body []byte, maxSize int) error {
	var errs, warns []string
	for _, f := range lint.Check(body, lint.Options{MaxSize: maxSize}) {
		switch f.Severity {
		case rules.Error:
			errs = append(errs, f.String())
		case rules.Warning:
			warns = append(warns, f.String())
		}
	}
	if len(warns) > 0 {
		s.lintWarnings = append(s.lintWarnings, lintWarning{source: name, findings: firstFindings(warns)})
	}
	if len(errs) == 0 {
		return nil
	}
	hint := "caddy robots lint lists every finding"
	if name == "source inline" && !bytes.Contains(bytes.TrimRight(body, "\n"), []byte("\n")) && bytes.Contains(body, []byte(`\n`)) {
		hint = `a Caddyfile keeps \n as two characters, not a line break: write the text as a heredoc (source inline <<TXT, its lines, then TXT)`
	}
	return fmt.Errorf("%s: %s: the handler would not enforce the rules as written; fix the text (%s)", name, firstFindings(errs), hint)
}

// firstFindings joins the first maxLintFindings findings, and says how
// many more there are.
func firstFindings(fs []string) string {
	if len(fs) <= maxLintFindings {
		return strings.Join(fs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(fs[:maxLintFindings], "; "), len(fs)-maxLintFindings)
}

// lintWarning is what lint warns of in a source's text.
type lintWarning struct {
	source   string
	findings string
}

// logLintWarnings logs the warnings lint found in the source's text.
func (s *Settings) logLintWarnings(log *zap.Logger) {
	for _, w := range s.lintWarnings {
		log.Warn("the robots.txt of the source has warnings: the rules may not work as they read; caddy robots lint lists every finding",
			zap.String("robots_source", w.source), zap.String("findings", w.findings))
	}
}

// readSourceFile reads a file source's text as far as lint needs to see:
// max_size (the default when 0) and one octet more, which says the file is
// longer. It must be a regular file: a FIFO or a device could block the
// configuration's loading.
func readSourceFile(path string, maxSize int) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if maxSize <= 0 {
		maxSize = rules.DefaultMaxSize
	}
	body, err := io.ReadAll(io.LimitReader(f, int64(maxSize)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return body, nil
}
