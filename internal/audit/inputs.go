package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// StdinName names standard input among the inputs.
const StdinName = "-"

// ExpandInputs returns the inputs that command-line arguments name, in
// order: StdinName as it is; the name of an existing file or directory as
// it is (reading a directory fails later, naming it); and any other
// argument holding a glob pattern (the syntax of path/filepath.Match: *,
// ?, [...]) as the files it matches, in lexical order, directories left
// out. The command expands patterns itself because a quoted pattern
// reaches it unexpanded, and so that logs of many instances
// ("/var/log/caddy/*/robots.log*") are read in one run. A pattern that
// matches no file, or is malformed, is an error naming it. A file named
// twice (the same file, by name or by pattern) is read once, where it
// first appears, so that no record is counted twice.
func ExpandInputs(args []string) ([]string, error) {
	var out []string
	var seen []os.FileInfo
	stdin := false
	add := func(name string, fi os.FileInfo) {
		for _, s := range seen {
			if os.SameFile(s, fi) {
				return
			}
		}
		seen = append(seen, fi)
		out = append(out, name)
	}
	var errs []error
	for _, arg := range args {
		if arg == StdinName {
			if stdin {
				errs = append(errs, errors.New("standard input (-) is given more than once"))
			}
			stdin = true
			out = append(out, arg)
			continue
		}
		fi, err := os.Stat(arg)
		if err == nil || !isPattern(arg) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(arg, fi)
			continue
		}
		matches, err := filepath.Glob(arg)
		if err != nil {
			errs = append(errs, fmt.Errorf("pattern %q: %w", arg, err))
			continue
		}
		n := 0
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
				add(m, fi)
				n++
			}
		}
		if n == 0 {
			errs = append(errs, fmt.Errorf("no file matches %q", arg))
		}
	}
	return out, errors.Join(errs...)
}

// isPattern reports whether a name holds glob syntax.
func isPattern(name string) bool {
	return strings.ContainsAny(name, `*?[`)
}
