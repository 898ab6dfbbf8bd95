package robotscmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
	"github.com/robotsenforce/caddy-robots-enforce/internal/audit/render"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// auditUsage is the command's usage line; it names every flag.
const auditUsage = "audit [--since T] [--until T] [--host H] [--agent A] [--mode enforce|log] [--top N] [--format table|json|csv|html] [--detail] [--storage DIR] [--evidence TOKEN] [--output FILE] <log files, globs, or ->..."

// newAuditCommand returns "caddy robots audit".
func newAuditCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   auditUsage,
		Short: "Reports which crawlers break robots.txt, from compliance records",
		Long: `
Reads the compliance records that robots_enforce writes (in log mode, or in
enforce mode) and reports, per crawler (product token), site and identity:
its requests, its violations (denials whose compliance is "violation": the
crawler broke the robots.txt it was given, as RFC 9309 reads the request),
its protective denials (alternate spellings, fail-closed denials) and grace
denials (a robots.txt change less than a day old) apart, its violation
rate, whether and how it is known to have fetched robots.txt ("yes
(token)": a fetch credited to its product token; "yes (client)": a fetch
by the same client, its address and token), its most requested disallowed
paths, and the robots.txt versions it was judged against. Requests that
claimed a crawler's token and failed its identity check are listed apart,
as forgeries of that token; so are user-triggered fetchers (records with
fetcher_class user_triggered), whose disallowed requests are not counted as
crawler violations. Crawlers the violators option escalated are listed too:
each escalation's mode, since and until when, the request that began it,
and the requests it refused.

Give log files, plain or gzip-compressed (rotated logs; found by content,
whatever the name), glob patterns (quoted or not: "robots*.log*"), or - for
standard input; all are read into one report, so the logs of several
Caddy instances audit as one, whatever their order. The logs are read
twice: first for every robots.txt served on every instance, then to count,
judging each denial again against every version served to its crawler on
any instance (a crawler that read the old file through one instance is in
grace on another that knew only the new one), and counting once a request
recorded twice (a copy of a log, or two instances in a row). A pattern that
matches no file is an error. Lines that are neither compliance records nor
robots.txt serves (access logs, other loggers, damaged or cut lines) are
skipped and counted; a compressed file that ends early is read up to
there, with a warning. Records of older versions of the module are read
too.

--since and --until take RFC 3339 times (2026-11-21T08:00:00Z), dates
(2026-11-21, midnight UTC) or durations before now (24h, 7d); --host keeps
one site (https://example.com) or host (with or without its port); --agent
one product token, case-insensitively; --mode the records of one mode.

--format table (the default) is aligned text; json is the whole report;
csv is one row per crawler and per forgery; html is one self-contained page
with charts of denials per crawler and of each crawler's requests over
time. The json, csv and html formats give each row's detail: its client
addresses, User-Agent headers, violating requests (time, instance, method,
target with its query, rule and line, versions judged against) and
robots.txt fetches (time, instance, client, version served); --detail adds
it to the table. --top sets how many disallowed paths are listed per
crawler (10; at most 64, the paths counted per crawler).

--storage DIR names a copy of Caddy's storage (its data directory, or a
file_system storage's root), once per storage when instances have their
own: the texts of the robots.txt versions are found under
DIR/robots_enforce/, each taken only when its content hashes to its name. The merged judgement reads versions with them; without a version's
text, a version the records do not judge counts as allowing.

--evidence TOKEN writes the evidence of one crawler (filtered as above) to
--output, as one self-contained HTML page, and its JSON twin beside it
(the same name ending in .json): who it was and how that was proven, each
robots.txt version it was served or judged against with the version's text
and SHA-256 (from --storage), each violation with the line of each
version's text that disallows it, each grace denial with the line that
allowed it, and its fetches.

A rate means violations among all requests only when allowed requests are
recorded too (log_allowed).

Exit status: 0 when the report was written, 2 on a usage error, a log that
cannot be read, or an output file that cannot be written.`,
		Example: `  $ caddy robots audit /var/log/caddy/robots.log
  $ caddy robots audit --since 7d --format html --output audit.html '/var/log/caddy/*/robots.log*'
  $ caddy robots audit --mode log --host https://www.example.com robots.log
  $ zstd -dc robots.log.zst | caddy robots audit --agent GPTBot --format json -
  $ caddy robots audit --evidence GPTBot --since 7d --storage /var/lib/caddy --output gptbot.html '/var/log/caddy/*/robots.log*'`,
	}
	fs := cmd.Flags()
	fs.String("since", "", "count records from this time on (RFC 3339, a date, or a duration before now such as 24h)")
	fs.String("until", "", "count records before this time")
	fs.String("host", "", "count the records of this site (https://example.com) or host only")
	fs.String("agent", "", "count the records of this product token only")
	fs.String("mode", "", "count the records of this mode only: enforce or log")
	fs.StringP("format", "f", "table", "output format: table, json, csv or html")
	fs.StringP("output", "o", "", "write the report to this file instead of standard output")
	fs.Int("top", audit.DefaultTopPaths, "how many disallowed paths to list per crawler")
	fs.Bool("detail", false, "list each row's detail in the table format too")
	fs.StringArray("storage", nil, "a copy of Caddy's storage, where the robots.txt versions' texts are found (repeat it for instances with storages of their own)")
	fs.String("evidence", "", "write the evidence of this product token to --output (HTML) and its JSON twin")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		fl := caddycmd.Flags{FlagSet: cmd.Flags()}
		status, err := runAudit(fl, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), time.Now())
		return robotsExit(cmd, status, err)
	}
	return cmd
}

// auditOptions are the flags and arguments of "caddy robots audit".
type auditOptions struct {
	opts     audit.Options
	format   render.Format
	output   string
	inputs   []string // patterns expanded
	detail   bool
	storage  []string
	evidence string // a product token
}

func readAuditOptions(fl caddycmd.Flags, now time.Time) (auditOptions, error) {
	o := auditOptions{output: fl.String("output")}
	var errs []error
	f := &o.opts.Filter
	for _, t := range []struct {
		flag string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if s := fl.String(t.flag); s != "" {
			var err error
			if *t.dst, err = audit.ParseTime(s, now); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", t.flag, err))
			}
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		errs = append(errs, fmt.Errorf("--since %s is not before --until %s", f.Since.Format(time.RFC3339), f.Until.Format(time.RFC3339)))
	}
	f.Host, f.Agent = fl.String("host"), fl.String("agent")
	switch m := strings.ToLower(fl.String("mode")); m {
	case "", "enforce", "log":
		f.Mode = m
	default:
		errs = append(errs, fmt.Errorf("--mode %q: want enforce or log", fl.String("mode")))
	}
	var err error
	if o.format, err = render.ParseFormat(fl.String("format")); err != nil {
		errs = append(errs, fmt.Errorf("--format: %w", err))
	}
	if o.opts.TopPaths = fl.Int("top"); o.opts.TopPaths < 1 || o.opts.TopPaths > audit.DefaultPathCounters {
		errs = append(errs, fmt.Errorf("--top %d: want 1 to %d", o.opts.TopPaths, audit.DefaultPathCounters))
	}
	o.storage, _ = fl.FlagSet.GetStringArray("storage")
	o.detail, o.evidence = fl.Bool("detail"), fl.String("evidence")
	if o.evidence != "" {
		switch {
		case !rules.IsProductToken(o.evidence):
			errs = append(errs, fmt.Errorf("--evidence %q: not a product token", o.evidence))
		case o.output == "":
			errs = append(errs, errors.New("--evidence needs --output, the HTML file to write (its JSON twin goes beside it)"))
		case strings.EqualFold(filepath.Ext(o.output), ".json"):
			errs = append(errs, fmt.Errorf("--output %s: the evidence is HTML, with its JSON twin beside it; name the HTML file", o.output))
		}
		if fl.FlagSet.Changed("format") || fl.FlagSet.Changed("detail") || fl.FlagSet.Changed("agent") {
			errs = append(errs, errors.New("--evidence writes HTML and JSON of one product token: --format, --detail and --agent do not apply"))
		}
	}
	if len(fl.Args()) == 0 {
		errs = append(errs, errors.New("no logs to read: give log files, glob patterns, or - for standard input"))
	} else if o.inputs, err = audit.ExpandInputs(fl.Args()); err != nil {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, joined.Unwrap()...) // one line, "; " between
		} else {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return o, joinErrors(errs)
	}
	return o, nil
}

// runAudit runs "caddy robots audit": it reads the logs (stdin for "-"),
// writes the report to the output file or out, and warnings to errOut.
func runAudit(fl caddycmd.Flags, stdin io.Reader, out, errOut io.Writer, now time.Time) (int, error) {
	o, err := readAuditOptions(fl, now)
	if err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	// Every file must open before any is read: a typo in the tenth name
	// should not cost reading the first nine. They are opened again one
	// at a time, so that a pattern matching thousands of rotated logs does
	// not run out of file descriptors.
	for _, in := range o.inputs {
		if in == audit.StdinName {
			continue
		}
		if err := checkInput(in); err != nil {
			return exitUsage, fmt.Errorf("robots audit: %w", err)
		}
	}
	if len(o.storage) > 0 {
		if o.opts.Texts, err = audit.OpenTexts(o.storage...); err != nil {
			return exitUsage, fmt.Errorf("robots audit: --storage: %w", err)
		}
	}
	inputs, cleanup, err := auditInputs(o.inputs, stdin)
	defer cleanup()
	if err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	opts := o.opts
	if o.evidence != "" {
		opts = audit.EvidenceOptions(o.evidence, o.opts.Filter, o.opts.Texts)
		opts.TopPaths = o.opts.TopPaths
	}
	a := audit.New(opts)
	err = a.ReadInputs(inputs, func(st audit.InputStats) {
		if st.Warning != "" {
			fmt.Fprintf(errOut, "robots audit: %s: %s\n", st.Name, st.Warning)
		}
	})
	if err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	if o.evidence != "" {
		return writeEvidence(a.Report(), o, errOut)
	}
	return writeAuditReport(a.Report(), o, out)
}

// auditInputs returns the inputs to read twice: files are opened again,
// and standard input is first copied to a temporary file, removed by
// cleanup.
func auditInputs(names []string, stdin io.Reader) ([]audit.Input, func(), error) {
	cleanup := func() {}
	var inputs []audit.Input
	for _, name := range names {
		path := name
		if name == audit.StdinName {
			f, err := os.CreateTemp("", "robots-audit-stdin-*")
			if err != nil {
				return nil, cleanup, fmt.Errorf("keeping standard input to read it twice: %w", err)
			}
			cleanup = func() { os.Remove(f.Name()) }
			_, err = io.Copy(f, stdin)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, cleanup, fmt.Errorf("keeping standard input to read it twice: %w", err)
			}
			path = f.Name()
		}
		inputs = append(inputs, audit.Input{Name: name, Open: func() (io.ReadCloser, error) { return os.Open(path) }})
	}
	return inputs, cleanup, nil
}

// checkInput fails when a log file cannot be opened, or is a directory.
func checkInput(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", name)
	}
	return nil
}

// writeAuditReport writes the report to o.output, or to out.
func writeAuditReport(r *audit.Report, o auditOptions, out io.Writer) (int, error) {
	write := func(w io.Writer) error {
		if o.format == render.FormatTable && o.detail {
			return render.TableDetail(w, r)
		}
		return render.Write(w, r, o.format)
	}
	if o.output == "" {
		if err := write(out); err != nil {
			return exitUsage, fmt.Errorf("robots audit: writing the report: %w", err)
		}
		return exitOK, nil
	}
	if err := writeFile(o.output, write); err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	return exitOK, nil
}

// writeEvidence writes the evidence of o.evidence to o.output and its JSON
// twin, and says on errOut what it holds.
func writeEvidence(r *audit.Report, o auditOptions, errOut io.Writer) (int, error) {
	ev := audit.NewEvidence(o.evidence, r, o.opts.Texts)
	twin := evidenceTwin(o.output)
	if err := writeFile(o.output, func(w io.Writer) error { return render.EvidenceHTML(w, ev) }); err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	if err := writeFile(twin, ev.WriteJSON); err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	violations, missing := 0, 0
	for _, s := range ev.Sites {
		violations += len(s.Violations)
		for _, v := range s.Versions {
			if v.Missing == audit.TextMissing {
				missing++
			}
		}
	}
	fmt.Fprintf(errOut, "robots audit: the evidence of %s on %d sites, %d violations listed: %s and %s\n", o.evidence, len(ev.Sites), violations, o.output, twin)
	if len(ev.Sites) == 0 {
		fmt.Fprintf(errOut, "robots audit: no record of %s was counted\n", o.evidence)
	}
	if missing > 0 {
		fmt.Fprintf(errOut, "robots audit: %d robots.txt versions are named without their text: give a copy of Caddy's storage with --storage\n", missing)
	}
	return exitOK, nil
}

// evidenceTwin names the JSON twin of the evidence's HTML file: its name
// with .json in place of .html or .htm, or after it.
func evidenceTwin(html string) string {
	ext := filepath.Ext(html)
	if strings.EqualFold(ext, ".html") || strings.EqualFold(ext, ".htm") {
		return strings.TrimSuffix(html, ext) + ".json"
	}
	return html + ".json"
}

// writeFile creates name and writes it with write.
func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
