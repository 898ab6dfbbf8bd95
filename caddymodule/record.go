package caddymodule

import (
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// record writes the compliance record of a judgement (package record has
// its schema), counts a denial by its compliance, and adds the
// decision's key facts (f's) to the access log entry of the request.
func (h *Handler) record(r *http.Request, jd *enforce.Judgement, f *decisionFacts) {
	if extra, ok := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		// One field, inlined: each Add costs the access log an
		// allocation or two.
		extra.Add(zap.Inline(&f.access))
	}
	if !jd.Allowed {
		h.metrics.countDenial(h.Mode, jd.Evidence.Compliance, jd.UserTriggered)
	}
	c := h.logger.Check(zapcore.InfoLevel, record.MsgDecision)
	if c == nil {
		return
	}
	buf := fieldsPool.Get().(*[recordFields]zap.Field)
	fields := jd.Record.Fields(buf[:0])
	c.Write(fields...)
	// Only the fields written are cleared: the rest of the room is
	// clear already, and clearing all of it took 0.6% of a loaded
	// process answering denials (testdata/bench/compare.sh, PROFILE=1).
	clear(buf[:min(len(fields), recordFields)])
	fieldsPool.Put(buf)
}

// recordFields is room for the fields of any record.
const recordFields = 40

// fieldsPool holds the room a record's fields are gathered in: zap's
// Write does not keep them, and 40 of them take 2.5 KiB, which would
// otherwise be allocated for every denial.
var fieldsPool = sync.Pool{New: func() any { return new([recordFields]zap.Field) }}

// recordServed writes the line of a robots.txt served to a client: the
// evidence of what the client was told, which the audit ties to its later
// requests.
func (h *Handler) recordServed(rec *record.Served) {
	if c := h.logger.Check(zapcore.InfoLevel, record.MsgServed); c != nil {
		c.Write(rec.Fields(make([]zap.Field, 0, 12))...)
	}
}
