package robotscmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/internal/audit"
)

// auditUsage is the command's usage line; it names every flag.
const auditUsage = "audit [--since T] [--until T] [--host H] [--agent A] [--mode enforce|log] [--top N] [--format table|json|csv|html] [--output FILE] <log files, globs, or ->..."

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
rate, whether and how it is known to have fetched robots.txt ("yes (token)":
under its own product token; "yes (ip)": from a client IP it crawls from),
its most requested disallowed paths, and the robots.txt versions it was
judged against. Requests that claimed a crawler's token and failed its
identity check are listed apart, as forgeries of that token. Crawlers the
violators option escalated are listed too: each escalation's mode, since
and until when, the request that began it, and the requests it refused.

Give log files, plain or gzip-compressed (rotated logs; found by content,
whatever the name), glob patterns (quoted or not: "robots*.log*"), or - for
standard input; all are read into one report, so the logs of several
Caddy instances audit as one, whatever their order. A pattern that matches
no file is an error. Lines that are neither compliance records nor
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
time. --top sets how many disallowed paths are listed per crawler (10; at
most 64, the paths counted per crawler).

A rate means violations among all requests only when allowed requests are
recorded too (log_allowed).

Exit status: 0 when the report was written, 2 on a usage error, a log that
cannot be read, or an output file that cannot be written.`,
		Example: `  $ caddy robots audit /var/log/caddy/robots.log
  $ caddy robots audit --since 7d --format html --output audit.html '/var/log/caddy/*/robots.log*'
  $ caddy robots audit --mode log --host https://www.example.com robots.log
  $ zstd -dc robots.log.zst | caddy robots audit --agent GPTBot --format json -`,
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
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		fl := caddycmd.Flags{FlagSet: cmd.Flags()}
		status, err := runAudit(fl, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), time.Now())
		return robotsExit(cmd, status, err)
	}
	return cmd
}

// auditOptions are the flags and arguments of "caddy robots audit".
type auditOptions struct {
	opts   audit.Options
	format audit.Format
	output string
	inputs []string // patterns expanded
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
	if o.format, err = audit.ParseFormat(fl.String("format")); err != nil {
		errs = append(errs, fmt.Errorf("--format: %w", err))
	}
	if o.opts.TopPaths = fl.Int("top"); o.opts.TopPaths < 1 || o.opts.TopPaths > audit.DefaultPathCounters {
		errs = append(errs, fmt.Errorf("--top %d: want 1 to %d", o.opts.TopPaths, audit.DefaultPathCounters))
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
	a := audit.New(o.opts)
	for _, in := range o.inputs {
		var st audit.InputStats
		if in == audit.StdinName {
			st, err = a.Read(in, stdin)
		} else {
			st, err = a.ReadFile(in)
		}
		if err != nil {
			return exitUsage, fmt.Errorf("robots audit: %w", err)
		}
		if st.Warning != "" {
			fmt.Fprintf(errOut, "robots audit: %s: %s\n", in, st.Warning)
		}
	}
	return writeAuditReport(a.Report(), o, out)
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
	if o.output == "" {
		if err := r.Write(out, o.format); err != nil {
			return exitUsage, fmt.Errorf("robots audit: writing the report: %w", err)
		}
		return exitOK, nil
	}
	f, err := os.Create(o.output)
	if err != nil {
		return exitUsage, fmt.Errorf("robots audit: %w", err)
	}
	err = r.Write(f, o.format)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return exitUsage, fmt.Errorf("robots audit: writing %s: %w", o.output, err)
	}
	return exitOK, nil
}
