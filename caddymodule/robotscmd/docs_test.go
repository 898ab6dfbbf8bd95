package robotscmd

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDocsCommandExamples runs the console examples of docs/commands.md,
// from the repository's root as a reader would (none reaches the
// network), and checks that each prints what the page shows: every line
// shown is printed, in order, "…" standing for lines left out, and "echo
// $?" shows the exit status. A file the page names that has moved fails
// it.
func TestDocsCommandExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := docsConsoleExamples(string(doc))
	if len(examples) < 4 {
		t.Fatalf("docs/commands.md: %d console examples, want the check, verify and lint ones", len(examples))
	}
	t.Chdir("../..")
	status := -1
	for _, ex := range examples {
		if ex.command == "echo $?" {
			if want := strings.Join(ex.output, "\n"); strconv.Itoa(status) != want {
				t.Errorf("docs/commands.md: exit status %d, the page says %s", status, want)
			}
			continue
		}
		args, ok := strings.CutPrefix(ex.command, "caddy robots ")
		if !ok {
			t.Errorf("docs/commands.md: an example that is not a robots command: %q", ex.command)
			continue
		}
		var out string
		out, status, err = cmdRun(t, docsShellWords(args)...)
		if status == exitUsage {
			t.Errorf("docs/commands.md: %s: status %d, %v", ex.command, status, err)
			continue
		}
		if missing := docsMissingLine(out, ex.output); missing != "" {
			t.Errorf("docs/commands.md: %s printed\n%s\nwhich lacks the line the page shows, in its place:\n%s", ex.command, out, missing)
		}
	}
}

// docsExample is a command of a console example and the lines the page
// shows it print.
type docsExample struct {
	command string
	output  []string
}

// docsConsoleExamples returns the commands of the ```console blocks of a
// page, each joined from its continued lines ("\" at a line's end).
func docsConsoleExamples(doc string) []docsExample {
	var out []docsExample
	for _, block := range strings.Split(doc, "```console\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var cur *docsExample
		continued := false
		for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
			switch {
			case continued:
				cur.command += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			case strings.HasPrefix(line, "$ "):
				out = append(out, docsExample{command: strings.TrimSpace(strings.TrimSuffix(line[2:], "\\"))})
				cur = &out[len(out)-1]
			case cur != nil:
				cur.output = append(cur.output, line)
			}
			continued = strings.HasSuffix(line, "\\")
		}
	}
	return out
}

// docsShellWords splits a command line as a shell would, for the quoting
// the page uses: double quotes, nothing else.
func docsShellWords(s string) []string {
	var words []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// docsMissingLine returns the first line of shown that out does not print
// in its place ("…" skips any number of lines), or "".
func docsMissingLine(out string, shown []string) string {
	printed := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	i, skip := 0, false
	for _, want := range shown {
		if want == "…" {
			skip = true
			continue
		}
		for skip && i < len(printed) && printed[i] != want {
			i++
		}
		if i >= len(printed) || printed[i] != want {
			return want
		}
		i, skip = i+1, false
	}
	return ""
}

// TestHelpWords checks the words of the commands' --help that say what
// docs/commands.md says: that check reads its flags as the directive's
// options, and that verify answers unconfirmed, with the reason, within
// its wait. Each phrase is in the command's help and its doc, in the
// words of each.
func TestHelpWords(t *testing.T) {
	doc, err := os.ReadFile("../../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(string(doc)), " ")
	for _, tt := range []struct {
		command   string
		help, doc []string
	}{
		{"check", []string{
			"The flags are read by the handler's own code, as the options they stand for: a value the directive refuses is refused with the directive's message",
			"a --robots file with an error that \"caddy robots lint\" reports (an HTML page, a line the parser cannot use) is refused",
			"or a claim that got no answer (pending at --timeout, or unconfirmed)",
		}, []string{
			"are read by the handler's own code: a value the directive refuses is refused with its message, the flag named",
			"or a claim that got no answer (`unconfirmed`, or still `pending` at `--timeout`)",
		}},
		{"verify", []string{
			"unconfirmed when no answer will come: a range list that could not be loaded, a DNS lookup that failed, each named",
			"a range list is given three quarters of it, so that one that cannot be fetched (offline, say) is named as the reason within the wait",
			"2 on a usage error or when an answer did not come (pending at --timeout, or unconfirmed)",
		}, []string{
			"A claim no answer will come for is `unconfirmed`, as the handler records it, with the reason",
			"each is given three quarters of `--timeout`, so that offline the reason comes within the wait",
		}},
	} {
		help := strings.Join(strings.Fields(cmdSubcommands[tt.command].cobra().Long), " ")
		for _, w := range tt.help {
			if !strings.Contains(help, w) {
				t.Errorf("caddy robots %s --help does not say %q", tt.command, w)
			}
		}
		for _, w := range tt.doc {
			if !strings.Contains(page, w) {
				t.Errorf("docs/commands.md, on %s, does not say %q", tt.command, w)
			}
		}
	}
}
