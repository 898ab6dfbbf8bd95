package caddymodule

import (
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
	"go.uber.org/zap"
)

// robotsTxtLogger names the logger of what the handler learns about
// sites' robots.txt files, below the handler's own: a log that includes
// http.handlers.robots_enforce for the compliance records gets these lines
// too (the audit skips them), and one that wants records alone excludes
// this logger.
const robotsTxtLogger = "robots_txt"

// logRobotsChange logs what the Store says is new about a site's
// robots.txt (robotstxt.StoreConfig.OnChange): a warning while it cannot be
// fetched, since crawlers are then held to the last copy or, with none,
// to complete disallow; otherwise the file now in force.
func (s *sharedState) logRobotsChange(key string, old, snap *robotstxt.Snapshot) {
	fields := []zap.Field{
		zap.String("site", key),
		zap.String("host", hostOfOrigin(key)),
		zap.String("robots_source", snap.Source),
		zap.String("access", snap.Access.String()),
	}
	if snap.HTTPStatus != 0 {
		fields = append(fields, zap.Int("http_status", snap.HTTPStatus))
	}
	if snap.Hash != "" {
		fields = append(fields, zap.String("robots_hash", snap.Hash))
	}
	if old != nil && old.Hash != snap.Hash {
		fields = append(fields, zap.String("previous_hash", old.Hash))
	}
	if snap.Truncated { // past max_size, or read only as far as max_memory lets the site hold
		fields = append(fields, zap.Bool("truncated", true))
	}
	log := s.log().Named(robotsTxtLogger)
	if snap.Failures == 0 {
		if snap.Err != "" { // a 4xx: no file, no rules
			fields = append(fields, zap.String("error", snap.Err))
		}
		log.Info("robots.txt in force", fields...)
		return
	}
	fields = append(fields,
		zap.String("error", snap.Err),
		zap.Int("failures", snap.Failures),
		zap.Time("failing_since", snap.FailingSince),
		zap.Bool("disallow_all", snap.Robots == nil && snap.DisallowAll))
	log.Warn("robots.txt could not be fetched", fields...)
}

// hostOfOrigin returns the host and port of an origin ("https://host:port").
func hostOfOrigin(origin string) string {
	if _, rest, ok := strings.Cut(origin, "://"); ok {
		return rest
	}
	return origin
}
