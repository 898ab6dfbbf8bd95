package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// record writes the compliance record of a judgement (package record has
// its schema), counts a denial by its compliance, and adds the
// decision's key facts to the access log entry of the request.
func (h *Handler) record(r *http.Request, jd *enforce.Judgement) {
	if extra, ok := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		extra.Add(zap.String("robots_verdict", enforce.VerdictName(jd.Allowed)))
		extra.Add(zap.String("robots_reason", jd.Reason.String()))
		extra.Add(zap.String("robots_agent", jd.Token))
		extra.Add(zap.Int("robots_rule_line", jd.Verdict.Rule.Line))
	}
	if !jd.Allowed {
		h.metrics.countDenial(h.Mode, jd.Evidence.Compliance)
	}
	c := h.logger.Check(zapcore.InfoLevel, record.MsgDecision)
	if c == nil {
		return
	}
	var rec record.Decision
	jd.FillRecord(&rec)
	c.Write(rec.Fields(make([]zap.Field, 0, 36))...)
}

// recordServed writes the line of a robots.txt served to a client: the
// evidence of what the client was told, which the audit ties to its later
// requests.
func (h *Handler) recordServed(jd *enforce.Judgement, tokens, credited []string, version string, status int) {
	c := h.logger.Check(zapcore.InfoLevel, record.MsgServed)
	if c == nil {
		return
	}
	req := jd.Request()
	rec := record.Served{
		Site: req.Site, Host: req.Host, Method: req.Method, URI: req.URI, UserAgent: req.UserAgent,
		Agents: tokens, CreditedAgents: credited, ClientIP: req.ClientIP, RemoteIP: req.RemoteIP,
		HTTPStatus: status, RobotsHash: version,
	}
	c.Write(rec.Fields(make([]zap.Field, 0, 12))...)
}
