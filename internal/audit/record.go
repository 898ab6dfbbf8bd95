package audit

import (
	"bytes"

	"github.com/robotsenforce/caddy-robots-enforce/internal/record"
)

// A SkipKind says why a line was not read as a compliance record or a
// robots.txt serve.
type SkipKind uint8

// Kinds of skipped lines.
const (
	// SkipBlank: an empty or white-space line.
	SkipBlank SkipKind = iota
	// SkipNotJSON: a line that does not start with "{" (a console-format
	// log line, say).
	SkipNotJSON
	// SkipMalformed: a line that starts as a JSON object but breaks the
	// JSON grammar.
	SkipMalformed
	// SkipTruncated: a JSON object cut short, as the last line of a log
	// being written, or of a damaged file.
	SkipTruncated
	// SkipTooLong: a line longer than MaxLineLength.
	SkipTooLong
	// SkipOtherLogger: a JSON entry of another logger (access logs, say).
	SkipOtherLogger
	// SkipOtherMessage: an entry of the robots_enforce logger that is
	// neither a decision nor a robots.txt serve.
	SkipOtherMessage
	// SkipInvalid: a decision record without a verdict of "allow" or
	// "deny", or whose compliance is unknown or contradicts its verdict
	// (or, for a violation, the verdict of either reading).
	SkipInvalid

	// NumSkipKinds is the number of kinds: SkipKind(0) to NumSkipKinds-1
	// are every one of them.
	NumSkipKinds
)

var skipKindNames = [NumSkipKinds]string{
	SkipBlank:        "blank",
	SkipNotJSON:      "not_json",
	SkipMalformed:    "malformed",
	SkipTruncated:    "truncated",
	SkipTooLong:      "too_long",
	SkipOtherLogger:  "other_logger",
	SkipOtherMessage: "other_message",
	SkipInvalid:      "invalid_record",
}

// String returns the kind's stable name, as used in reports.
func (k SkipKind) String() string {
	if k < NumSkipKinds {
		return skipKindNames[k]
	}
	return "unknown"
}

// tri is a boolean field that may be absent.
type tri uint8

const (
	triAbsent tri = iota
	triFalse
	triTrue
)

// outcome is what a decision record counts as (see the package
// documentation, "Compliance").
type outcome uint8

const (
	outAllowed outcome = iota
	outViolation
	outGrace
	outProtective
)

// rawRecord holds the fields the audit reads of one line, as slices of
// the line (or of the scanner's scratch): valid until the next line.
type rawRecord struct {
	recordFields
	// Lists are kept apart so that a new line resets only their lengths.
	judged   strList // judged_versions
	agents   strList // a served line's agents
	credited strList // a served line's credited_agents (version 3)
}

type recordFields struct {
	served               bool    // a robots.txt serve, not a decision
	outcome              outcome // of a decision
	logger, msg, verdict []byte
	ts                   []byte
	tsString             bool // ts was a JSON string
	host, site, uri      []byte
	agent, hash          []byte
	mode, compliance     []byte
	identity, method     []byte
	clientIP, servedLink []byte
	userAgent            []byte
	rfcVerdict           []byte // rfc9309_verdict (version 3)
	googleVerdict        []byte // google_verdict (version 3)
	servedAt             []byte // a JSON number
	grace, fetched       tri
	servedRobots         tri
	// The escalation of a repeat violator (the handler's violators
	// option): its mode, the target that began it, and its bounds, each a
	// JSON number or string as ts may be.
	escalation, escalatedBy []byte
	escSince, escUntil      []byte
	escSinceString          bool
	escUntilString          bool
	escalationBegan         tri
	// What a dispute needs of a request beyond its counts: the request's
	// method, the deciding rule and its line (a JSON number), the reason
	// of the decision, the instance that wrote the line and the class of
	// the client it names.
	reqMethod, rule, ruleLine []byte
	reason                    []byte
	instance, fetcherClass    []byte
	has                       fieldSet
}

// fieldSet records which optional fields a record had.
type fieldSet uint64

const (
	hasTS fieldSet = 1 << iota
	hasHost
	hasURI
	hasAgent
	hasHash
	hasGrace
	hasFetched
	hasSite
	hasMode
	hasCompliance
	hasIdentity
	hasMethod
	hasClientIP
	hasServedRobots
	hasServedLink
	hasServedAt
	hasJudged
	hasAgents
	hasCredited
	hasUserAgent
	hasRFCVerdict
	hasGoogleVerdict
	hasEscalation
	hasEscalationBegan
	hasEscalatedSince
	hasEscalatedUntil
	hasEscalatedBy
	hasReqMethod
	hasRule
	hasRuleLine
	hasReason
	hasInstance
	hasFetcherClass
)

// The logger and messages of the handler's lines, as package record
// declares them: a compliance record per decision, and a line per
// robots.txt the handler saw served.
var (
	loggerName  = []byte(record.Logger)
	messageText = []byte(record.MsgDecision)
	servedText  = []byte(record.MsgServed)
	verdictDeny = []byte("deny")
	verdictOK   = []byte("allow")
)

// parseLine reads a line into rec. It returns ok, or why the line is
// neither a compliance record nor a robots.txt serve; rec.served tells
// which it is.
func (s *scanner) parseLine(line []byte, rec *rawRecord) (kind SkipKind, ok bool) {
	rec.recordFields = recordFields{}
	rec.judged.n, rec.agents.n, rec.credited.n = 0, 0, 0
	s.reset(line)
	switch s.peek() {
	case 0:
		if s.pos >= len(s.buf) {
			return SkipBlank, false
		}
		return SkipNotJSON, false
	case '{':
	default:
		return SkipNotJSON, false
	}
	if err := s.object(rec); err != nil {
		if err == errTruncated {
			return SkipTruncated, false
		}
		return SkipMalformed, false
	}
	if s.skipSpace(); s.pos != len(s.buf) {
		return SkipMalformed, false
	}
	switch {
	case !bytes.Equal(rec.logger, loggerName):
		return SkipOtherLogger, false
	case bytes.Equal(rec.msg, servedText):
		rec.served = true
		return 0, true
	case !bytes.Equal(rec.msg, messageText):
		return SkipOtherMessage, false
	case !rec.classify():
		return SkipInvalid, false
	}
	return 0, true
}

// classify sets the outcome of a decision record and reports whether its
// verdict and compliance make sense. A record with compliance counts as
// it says (record version 2), unless it calls a violation what one of its
// readings allows (version 3); one without (version 1) is derived from
// its verdict and grace: a denial with grace true is grace, any other
// denial a violation.
func (r *rawRecord) classify() bool {
	var deny bool
	switch {
	case bytes.Equal(r.verdict, verdictDeny):
		deny = true
	case !bytes.Equal(r.verdict, verdictOK):
		return false
	}
	if r.has&hasCompliance == 0 {
		switch {
		case !deny:
			r.outcome = outAllowed
		case r.grace == triTrue:
			r.outcome = outGrace
		default:
			r.outcome = outViolation
		}
		return true
	}
	switch string(r.compliance) {
	case "allowed":
		r.outcome = outAllowed
		return !deny
	case "violation":
		// Record version 3 gives the verdicts of both conforming readings,
		// and a violation needs both to deny: a record that says
		// otherwise contradicts itself, and accuses no one.
		if !denies(r.rfcVerdict, r.has&hasRFCVerdict != 0) || !denies(r.googleVerdict, r.has&hasGoogleVerdict != 0) {
			return false
		}
		r.outcome = outViolation
	case "grace":
		r.outcome = outGrace
	case "protective":
		r.outcome = outProtective
	default:
		return false
	}
	return deny
}

// denies reports whether a reading's verdict, when the record gives one,
// is "deny".
func denies(verdict []byte, given bool) bool {
	return !given || bytes.Equal(verdict, verdictDeny)
}

// object reads the top-level object, keeping the fields of rawRecord.
func (s *scanner) object(rec *rawRecord) error {
	s.pos++ // '{'
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		k, err := s.key()
		if err != nil {
			return err
		}
		if err := s.member(rec, k); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail()
		}
	}
}
