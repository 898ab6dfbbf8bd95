package robotscmd

import (
	"errors"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/caddymodule"
)

// The flags of check and verify mean what the handler's options mean, and
// are checked by the handler's own code (caddymodule.Handler.Settings,
// caddymodule.Verify.Validate), whose messages name the option as the
// Caddyfile writes it. flagNames turns those names into the flags.

// flagNames maps the words a handler's message begins with to the flag
// that gave the value, longest first where one begins another.
var flagNames = []struct{ words, flag string }{
	{"source file", "--robots"},
	{"source url", "--robots"},
	{"verify builtin", "--verify-builtin"},
	{"verify ip_ranges", "--ip-ranges"},
	{"verify reverse_dns", "--reverse-dns"},
	{"verify resolver", "--resolver"},
	{"verify forged", "--forged"},
	{"verify undeclared", "--undeclared"},
	{"allow_agents", "--allow-agents"},
	{"max_size", "--max-size"},
	{"violators", "--escalated"},
	{"wildcard", "--wildcard"},
	{"unreachable", "--unreachable"},
	{"origin", "--origin"},
}

// flagErrors returns the problems err joins (as the handler's Settings
// and Verify.Validate report them), each named by its flag.
func flagErrors(err error) []error {
	if err == nil {
		return nil
	}
	var errs []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				walk(inner)
			}
			return
		}
		if oe, ok := e.(*caddymodule.OptionError); ok {
			errs = append(errs, flagError(oe))
			return
		}
		var oe *caddymodule.OptionError
		if inner := errors.Unwrap(e); inner != nil && errors.As(e, &oe) {
			walk(inner) // past a wrapper such as the handler's "robots_enforce: "
			return
		}
		errs = append(errs, flagError(e))
	}
	walk(err)
	return errs
}

// flagError names by its flag the option a handler's message begins with.
func flagError(err error) error {
	msg := err.Error()
	for _, f := range flagNames {
		if rest, ok := strings.CutPrefix(msg, f.words); ok {
			return errors.New(f.flag + rest)
		}
	}
	return err
}
