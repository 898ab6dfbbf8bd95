package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// warningsLoggerName names the logger of what the handler tells operators:
// its warnings (a path rewrite before it, a source's robots.txt with
// warnings), what it learns about sites' robots.txt files (robots_txt),
// crawler verification (verify) and the saved state. It is not below
// http.handlers.robots_enforce, the logger of the compliance records, so
// that a log that includes that logger for the records gets records only,
// and these lines go where operators look: Caddy's default log, or any
// log that does not exclude them. Caddy's include and exclude match a
// logger and the loggers below it (names split at dots).
const warningsLoggerName = "http.robots_enforce"

// warningsLogger returns the logger named warningsLoggerName, through the
// configuration's logs, as Caddy gives a module its own.
func warningsLogger(ctx caddy.Context) *zap.Logger {
	return ctx.Logger(warningsModule{})
}

// warningsModule names warningsLogger for caddy.Context.Logger, which
// names a logger after a module. It is never registered.
type warningsModule struct{}

// CaddyModule implements caddy.Module.
func (warningsModule) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: warningsLoggerName, New: func() caddy.Module { return warningsModule{} }}
}
