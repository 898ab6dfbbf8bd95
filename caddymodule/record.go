package caddymodule

import (
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/verify"
)

// recordVersion is the version of the compliance record's schema: 2 added
// compliance, the versions judged against, what the crawler was served,
// the client IP and the site.
const recordVersion = 2

// Messages of the handler's logger.
const (
	msgDecision = "robots.txt decision"
	msgServed   = "robots.txt served"
)

// record writes the compliance record of a decision, counts a denial by
// its compliance, and adds the decision's key facts to the access log
// entry of the request. Its fields are a contract: see the README's record
// schema.
func (h *Handler) record(r *http.Request, site string, sent *sentRequest, req *enforce.Request, id verify.Result, usage string, dec *enforce.Decision) {
	ua := req.UserAgent
	verdict := verdictName(dec.Allowed)
	if extra, ok := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		extra.Add(zap.String("robots_verdict", verdict))
		extra.Add(zap.String("robots_reason", dec.Reason.String()))
		extra.Add(zap.String("robots_agent", dec.Token))
		extra.Add(zap.Int("robots_rule_line", dec.Verdict.Rule.Line))
	}
	c := h.logger.Check(zapcore.InfoLevel, msgDecision)
	if c == nil && dec.Allowed {
		return
	}
	now := time.Now()
	ip := clientIP(r)
	if site == "" && h.sites == nil {
		site = siteOfRequest(r)
	}
	served, link := h.state.served.Lookup(site, dec.Token, ip, now)
	ev := h.decider.Assess(dec, req, served, link, now)
	if !dec.Allowed {
		h.metrics.countDenial(h.Mode, ev.Compliance)
	}
	if c == nil {
		return
	}
	snap := dec.Snapshot
	fields := make([]zap.Field, 0, 32)
	fields = append(fields,
		zap.Int("record_version", recordVersion),
		zap.String("site", site),
		zap.String("host", r.Host),
		zap.String("method", sent.method),
		zap.String("uri", sent.uri),
		zap.String("user_agent", truncate(ua, maxLoggedUserAgent)),
		zap.String("agent", dec.Token),
		zap.String("bot_class", botClass(dec)),
		zap.String("verdict", verdict),
		zap.String("mode", h.Mode),
		zap.String("reason", dec.Reason.String()),
		zap.String("reading", dec.Reading.String()),
		zap.Int("group_line", dec.Verdict.GroupLine),
		zap.String("rule", dec.Verdict.Rule.Pattern),
		zap.Int("rule_line", dec.Verdict.Rule.Line),
		zap.String("compliance", ev.Compliance.String()),
		zap.Bool("grace", ev.Compliance == enforce.ComplianceGrace),
		zap.Strings("judged_versions", ev.Versions),
		zap.String("robots_hash", snap.Hash),
		zap.String("robots_source", snap.Source),
		zap.String("remote_ip", remoteIP(sent.remoteAddr)),
		zap.String("client_ip", ip),
		zap.Bool("agent_fetched_robots", len(served) > 0),
		zap.Bool("served_robots", len(served) > 0),
		zap.String("automation", dec.Classification.Automation.String()),
	)
	if len(served) > 0 {
		fields = append(fields,
			zap.Time("served_at", served[0].At),
			zap.String("served_hash", served[0].Hash),
			zap.String("served_link", link.String()))
	}
	if !snap.FetchedAt.IsZero() {
		fields = append(fields, zap.Time("robots_fetched_at", snap.FetchedAt))
	}
	if usage != "" {
		fields = append(fields, zap.String("content_usage", usage))
	}
	if id.Outcome != verify.None {
		fields = append(fields, zap.String("identity", id.Outcome.String()))
		if id.Method != verify.NoMethod {
			fields = append(fields, zap.String("identity_method", id.Method.String()))
		}
	}
	c.Write(fields...)
}

// recordServed writes the record of a robots.txt served to a client: the
// evidence of what the client was told, which the audit ties to its later
// requests by token and by client IP.
func (h *Handler) recordServed(r *http.Request, site string, tokens []string, ip, version string, status int) {
	c := h.logger.Check(zapcore.InfoLevel, msgServed)
	if c == nil {
		return
	}
	sent := sentRequestOf(r)
	fields := []zap.Field{
		zap.Int("record_version", recordVersion),
		zap.String("site", site),
		zap.String("host", r.Host),
		zap.String("method", sent.method),
		zap.String("uri", sent.uri),
		zap.String("user_agent", truncate(userAgent(r.Header), maxLoggedUserAgent)),
		zap.Strings("agents", tokens),
		zap.String("client_ip", ip),
		zap.String("remote_ip", remoteIP(sent.remoteAddr)),
		zap.Int("http_status", status),
	}
	if version != "" {
		fields = append(fields, zap.String("robots_hash", version))
	}
	c.Write(fields...)
}

// siteOfRequest names the site of r, for a source that serves every site
// the same file: its origin, or "" when its Host names none.
func siteOfRequest(r *http.Request) string {
	key, _ := siteKey(r, localAddr(r))
	return key
}
