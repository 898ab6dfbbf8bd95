package robotscmd

import (
	"io"
	"net/netip"
	"slices"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// checkResult is the result of one target: its judgement, as the
// compliance record writes it, with what explains it. Its JSON form is
// the record's fields (package record) and a few of check's own; fields
// may be added, none will change meaning.
type checkResult struct {
	target string
	rec    record.Decision
	// dec is the decision, its Path copied out of the judgement.
	dec         enforce.Decision
	readingPath string
	claim       *claimResult
	forged      enforce.ForgedPolicy // --forged
	redecided   bool                 // the claim's outcome made the judgement decide again
	usageRules  []rules.UsageRule
}

func newCheckResult(target string, jd *enforce.Judgement) checkResult {
	r := checkResult{target: target, dec: jd.Decision, readingPath: jd.ReadingPath(), usageRules: jd.Usage.Rules()}
	r.dec.Path = r.readingPath
	if jd.Reading != enforce.RewriteHeader {
		r.dec.Path = string([]byte(jd.Path))
	}
	r.rec = *jd.Record
	r.rec.JudgedVersions = slices.Clone(r.rec.JudgedVersions) // the judgement's memory goes back to its pool
	r.rec.RobotsFetchedAt = time.Time{}                       // when check read it: says nothing of the file
	// --escalated's times, not a crawler's.
	r.rec.EscalatedSince, r.rec.EscalatedUntil = time.Time{}, time.Time{}
	return r
}

// addIdentity adds what explains the verification of the claim; claim is
// nil when none was verified.
func (r *checkResult) addIdentity(ip netip.Addr, claim *claimResult, forged enforce.ForgedPolicy, redecided bool) {
	if !ip.IsValid() || claim == nil {
		return
	}
	r.claim, r.forged, r.redecided = claim, forged, redecided
}

// fields returns the result's JSON fields: the target, the record's, and
// check's own.
func (r *checkResult) fields() []zap.Field {
	snap := r.dec.Snapshot
	fs := []zap.Field{zap.String(record.Target, r.target)}
	fs = r.rec.Fields(fs)
	kind := ""
	if r.rec.RuleLine > 0 {
		kind = checkRuleKind(r.dec.Verdict.Rule.Allow)
	}
	fs = append(fs,
		zap.String(record.RuleKind, kind),
		zap.String(record.ReadingPath, r.readingPath),
		zap.String(record.RobotsAccess, snap.Access.String()),
		zap.Int(record.RobotsStatus, snap.HTTPStatus),
		zap.String(record.RobotsError, snap.Err),
	)
	if r.claim != nil && len(r.claim.ptr) > 0 {
		fs = append(fs, zap.Strings(record.PTR, r.claim.ptr))
	}
	if len(r.usageRules) > 0 {
		lines := make([]int, len(r.usageRules))
		for i, ur := range r.usageRules {
			lines[i] = ur.Line
		}
		fs = append(fs, zap.Ints(record.ContentUsageLines, lines))
	}
	return fs
}

// checkRuleKind names a rule's kind as the JSON output does.
func checkRuleKind(allow bool) string {
	if allow {
		return "allow"
	}
	return "disallow"
}

// writeCheckJSON writes each result as a JSON object on a line of its own,
// encoded as the handler's log encodes a record.
func writeCheckJSON(out io.Writer, results []checkResult) error {
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{
		EncodeTime:     zapcore.EpochTimeEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
	})
	for i := range results {
		buf, err := enc.EncodeEntry(zapcore.Entry{Time: time.Time{}}, results[i].fields())
		if err != nil {
			return err
		}
		_, err = out.Write(buf.Bytes())
		buf.Free()
		if err != nil {
			return err
		}
	}
	return nil
}
