package robotscmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/internal/lint"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// newLintCommand returns "caddy robots lint".
func newLintCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lint [--json] [--max-size <size>] <file|url>...",
		Short: "Reports problems in robots.txt files",
		Long: `
Reads robots.txt files, or fetches them from http or https URLs, and
reports, as "file:line: severity: message":

  - every line the parser could not use or had to interpret: lines with no
    record, misspelt keys, rules outside any group, patterns that start
    with neither "/" nor "*", user-agent values that are not product
    tokens, content past the size limit (--max-size, as the handler's
    max_size; default 500KiB);
  - rules that never decide, because one rule of the other kind matches
    every path they match and always wins (RFC 9309 §2.2.2: the longest
    pattern wins, and allow wins a tie), and rules that repeat another;
  - an agent named by more than one group (RFC 9309 §2.2.1 merges them);
  - a last group with no allow or disallow line (its agents escape the
    "*" group's rules);
  - "Disallow: /" in the "*" group;
  - sitemaps that are not absolute http or https URLs;
  - AI usage preferences (draft-ietf-aipref-attach-05, the vocabulary of
    draft-ietf-aipref-vocab-08): Content-Usage lines outside any group,
    preferences that are not structured-fields dictionaries, categories
    other than train-ai, ai-use and search, values other than y and n,
    groups that state a preference but have no allow or disallow line,
    preference lines between user-agent lines; Cloudflare's Content-Signal
    lines (how each is read, unknown keys, values other than yes and no,
    use=, which is not carried), and Content-Signal and Content-Usage lines
    that disagree;
  - an HTML page or binary content instead of a robots.txt, and for a URL,
    a response the handler would not accept as one.

Severities: error (content that is dropped or refused), warning (content
that is read, but likely not as meant), info (how a line was read).

With --json, the findings are printed as one JSON array of objects with
the fields file, line (0 for the file as a whole), severity, code and
message.

Exit status: 0 when there is no error, 1 when there is one, 2 on a usage
error or a file or URL that cannot be read.`,
		Example: `  $ caddy robots lint robots.txt
  $ caddy robots lint --json https://example.com/robots.txt`,
	}
	fs := cmd.Flags()
	fs.Bool("json", false, "print the findings as a JSON array")
	fs.String("max-size", "", "how much of robots.txt is parsed, e.g. 1MiB (default 500KiB)")
	cmd.RunE = robotsRunE(runLint)
	cmd.DisableFlagsInUseLine = true // Use spells them out
	return cmd
}

// lintReadLimit bounds what lint reads of a file or a response: far past
// any real robots.txt, so that the size limit is checked, while an
// endless response cannot exhaust memory.
const lintReadLimit = 16 << 20

// Codes of findings about a response rather than its body.
const (
	lintContentType = "content-type" // a Content-Type the handler refuses
	lintRedirected  = "redirected"   // the file was fetched from another URL
)

// lintFinding is one finding of lint, as --json prints it. Its fields are
// a contract: fields may be added, none will change meaning.
type lintFinding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// runLint is "caddy robots lint".
func runLint(fl caddycmd.Flags, out io.Writer) (int, error) {
	names := fl.Args()
	if len(names) == 0 {
		return exitUsage, errors.New("robots lint: no input: give a robots.txt file or URL")
	}
	maxSize, err := parseMaxSize(fl.String("max-size"))
	if err != nil {
		return exitUsage, fmt.Errorf("robots lint: %w", err)
	}
	var findings []lintFinding
	status := exitOK
	for _, name := range names {
		body, diags, err := readLintInput(name, maxSize)
		if err != nil {
			return exitUsage, fmt.Errorf("robots lint: %w", err)
		}
		diags = append(diags, lint.Check(body, lint.Options{MaxSize: maxSize})...)
		slices.SortStableFunc(diags, func(a, b lint.Finding) int { return a.Line - b.Line })
		for _, d := range diags {
			findings = append(findings, lintFinding{File: name, Line: d.Line, Severity: d.Severity.String(), Code: d.Code, Message: d.Message})
			if d.Severity == rules.Error {
				status = exitFindings
			}
		}
	}
	if fl.Bool("json") {
		err = writeLintJSON(out, findings)
	} else {
		err = writeLintText(out, findings)
	}
	if err != nil {
		return exitUsage, fmt.Errorf("robots lint: writing the result: %w", err)
	}
	return status, nil
}

// readLintInput reads a robots.txt file, or fetches a URL, and returns its
// body with what lint finds of the response itself.
func readLintInput(name string, maxSize int) ([]byte, []lint.Finding, error) {
	limit := int64(max(maxSize, lintReadLimit))
	if !isRobotsURL(name) {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, fmt.Errorf("reading robots.txt: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, nil, fmt.Errorf("reading robots.txt %s: is a directory", name)
		}
		body, err := io.ReadAll(io.LimitReader(f, limit))
		if err != nil {
			return nil, nil, fmt.Errorf("reading robots.txt %s: %w", name, err)
		}
		return body, nil, nil
	}
	return fetchLintInput(name, limit)
}

// fetchLintInput fetches a robots.txt URL as the handler would (RFC 9309
// §2.3.1): redirects followed up to robotstxt.MaxRedirects. An answer other
// than 2xx leaves no file to lint, and is an input error that says what the
// handler makes of it.
func fetchLintInput(rawURL string, limit int64) ([]byte, []lint.Finding, error) {
	if robotstxt.URLHost(rawURL) == "" {
		return nil, nil, fmt.Errorf("robots.txt URL %q has no host", rawURL)
	}
	client := &http.Client{
		Timeout: robotstxt.DefaultFetchTimeout,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > robotstxt.MaxRedirects {
				return fmt.Errorf("more than %d redirects: crawlers may take robots.txt as unavailable (RFC 9309 §2.3.1.2)", robotstxt.MaxRedirects)
			}
			return nil
		},
	}
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("robots.txt URL %q: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", robotstxt.FetchUserAgent)
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, fmt.Errorf("fetching %s: %w", rawURL, err)
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests || code < 200 || code >= 500:
		return nil, nil, fmt.Errorf("fetching %s: status %s: robots.txt is unreachable, and the handler denies crawlers until it is served (RFC 9309 §2.3.1.4)", rawURL, resp.Status)
	case code >= 300:
		return nil, nil, fmt.Errorf("fetching %s: status %s: there is no robots.txt, and crawlers may fetch everything (RFC 9309 §2.3.1.3)", rawURL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, nil, fmt.Errorf("fetching %s: reading the body: %w", rawURL, err)
	}
	var diags []lint.Finding
	if final := resp.Request.URL.String(); final != rawURL {
		diags = append(diags, lint.Finding{Severity: rules.Info, Code: lintRedirected,
			Message: fmt.Sprintf("redirected to %s: its rules apply to %s all the same (RFC 9309 §2.3.1.2)", final, robotstxt.URLHost(rawURL))})
	}
	if msg := lintContentTypeProblem(resp.Header.Get("Content-Type")); msg != "" {
		diags = append(diags, lint.Finding{Severity: rules.Error, Code: lintContentType, Message: msg})
	}
	return body, diags, nil
}

// lintContentTypeProblem says why the handler refuses a response with this
// Content-Type as a robots.txt, or returns "".
func lintContentTypeProblem(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || contentType == "" {
		return ""
	}
	top, _, _ := strings.Cut(mt, "/")
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
	case top == "image" || top == "audio" || top == "video" || top == "font" || top == "model":
	default:
		return ""
	}
	return fmt.Sprintf("served as %s, not text/plain: the handler treats the file as unreachable (complete disallow for crawlers, RFC 9309 §2.3.1.4)", mt)
}

// writeLintText writes one "file:line: severity: message" line per finding.
func writeLintText(out io.Writer, findings []lintFinding) error {
	var b strings.Builder
	for _, f := range findings {
		if f.Line > 0 {
			fmt.Fprintf(&b, "%s:%d: %s: %s\n", f.File, f.Line, f.Severity, f.Message)
		} else {
			fmt.Fprintf(&b, "%s: %s: %s\n", f.File, f.Severity, f.Message)
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// writeLintJSON writes the findings as one JSON array, [] for none.
func writeLintJSON(out io.Writer, findings []lintFinding) error {
	if findings == nil {
		findings = []lintFinding{}
	}
	b, err := json.MarshalIndent(findings, "", "  ")
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
