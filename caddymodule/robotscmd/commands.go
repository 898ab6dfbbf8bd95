package robotscmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "robots",
		Usage: "<command> [flags] <args>",
		Short: "Checks requests against a robots.txt, verifies crawlers' addresses, lints robots.txt files, audits crawler compliance",
		Long: `
Tools for the robots.txt files that the robots_enforce handler holds
crawlers to. They make their decisions with the same code as the handler.

  caddy robots check   says whether a User-Agent (and, with --ip, a client
                       address) may fetch each of some targets, and which
                       class, group, rule and line decide, and which AI
                       usage preference applies
  caddy robots verify  says whether IP addresses are the crawler whose
                       product token they claim, and by which method
  caddy robots lint    reports what the parser could not use, and rules
                       and groups that do not work as they read
  caddy robots audit   reports, from the handler's compliance records,
                       which crawlers ignore robots.txt

Exit status: 0 when every target is allowed (check), every address is
verified (verify), the file has no error (lint) or the report was written
(audit); 1 when a target is disallowed, an address is forged or
unverified, or the file has errors; 2 on a usage error, input that cannot
be read, or an answer that did not come in time.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.SetFlagErrorFunc(robotsFlagError)
			cmd.RunE = robotsUnknownCommand
			cmd.AddCommand(newCheckCommand())
			cmd.AddCommand(newVerifyCommand())
			cmd.AddCommand(newLintCommand())
			cmd.AddCommand(newAuditCommand())
		},
	})
}

// Exit statuses of the robots commands.
const (
	// exitOK: every target is allowed (check), every address is verified
	// (verify), no error was found (lint).
	exitOK = 0
	// exitFindings: a target is disallowed (check), an address is forged
	// or unverified (verify), the file has an error (lint). The output
	// says which.
	exitFindings = 1
	// exitUsage: the flags or arguments are wrong, the input could not be
	// read, or an answer did not come in time (a pending verification).
	exitUsage = 2
)

// errFindings ends a command with exitFindings. It is never printed: the
// command's output already says what was found.
var errFindings = errors.New("robots: findings")

// robotsCommandFunc is a robots subcommand: it reads its flags and
// arguments from fl, writes its report to out, and returns an exit status
// with, for exitUsage, the error to report.
type robotsCommandFunc func(fl caddycmd.Flags, out io.Writer) (int, error)

// robotsRunE adapts a robots subcommand to cobra: it writes to the
// command's output and ends the process with the status run returns.
func robotsRunE(run robotsCommandFunc) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		status, err := run(caddycmd.Flags{FlagSet: cmd.Flags()}, cmd.OutOrStdout())
		return robotsExit(cmd, status, err)
	}
}

// robotsExit turns an exit status into what cobra and caddycmd.Main expect.
// caddycmd.WrapCommandFuncForCobra logs the error and carries a status above
// 1 to the process; status 1 without an error needs no message, so it is
// returned as errFindings with cobra's error message silenced.
func robotsExit(cmd *cobra.Command, status int, err error) error {
	if status == exitFindings && err == nil {
		cmd.SilenceErrors = true
		return errFindings
	}
	return caddycmd.WrapCommandFuncForCobra(func(caddycmd.Flags) (int, error) {
		return status, err
	})(cmd, nil)
}

// robotsFlagError makes a flag that cannot be parsed a usage error (status 2)
// rather than cobra's status 1, which the commands use for findings.
func robotsFlagError(cmd *cobra.Command, err error) error {
	return robotsExit(cmd, exitUsage, fmt.Errorf("%s: %w", robotsCommandPath(cmd), err))
}

// robotsCommandPath names a command in messages: "robots check".
func robotsCommandPath(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// joinErrors joins errs into one error on one line, as log messages are.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// robotsUnknownCommand runs for "caddy robots" without a known subcommand:
// alone, it prints the help; with arguments, it is a usage error.
func robotsUnknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return robotsExit(cmd, exitUsage, fmt.Errorf("%s: unknown command %q: want one of %s",
		robotsCommandPath(cmd), args[0], strings.Join(names, ", ")))
}

// parseMaxSize reads a --max-size value as the handler reads max_size: a
// size such as 500KiB or 1MiB, at least rules.DefaultMaxSize (RFC 9309 §2.5).
// The empty string means rules.DefaultMaxSize.
func parseMaxSize(s string) (int, error) {
	if s == "" {
		return rules.DefaultMaxSize, nil
	}
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("--max-size %q: not a size such as 500KiB or 1MiB", s)
	}
	if n < rules.DefaultMaxSize {
		return 0, fmt.Errorf("--max-size %q: want at least 500KiB (RFC 9309 §2.5)", s)
	}
	return int(n), nil
}

// isRobotsURL reports whether a --robots argument or a lint input names an
// http or https URL rather than a file.
func isRobotsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}
