package audit

import (
	"bytes"
)

// The logger and message of a compliance record (see the README's record
// schema).
const (
	RecordLogger  = "http.handlers.robots_enforce"
	RecordMessage = "robots.txt decision"
)

// A SkipKind says why a line was not read as a compliance record.
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
	// SkipOtherMessage: an entry of the robots_enforce logger that is not a
	// decision (a failed robots.txt fetch, say).
	SkipOtherMessage
	// SkipInvalid: a decision record without a verdict of "allow" or
	// "deny".
	SkipInvalid

	numSkipKinds
)

var skipKindNames = [numSkipKinds]string{
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
	if k < numSkipKinds {
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

// rawRecord holds the fields the audit reads of one record, as slices of
// the line (or of the scanner's scratch): valid until the next line.
type rawRecord struct {
	logger, msg, verdict []byte
	ts                   []byte
	tsString             bool // ts was a JSON string
	host, uri, agent     []byte
	hash                 []byte
	grace, fetched       tri
	has                  fieldSet
}

// fieldSet records which optional fields a record had.
type fieldSet uint8

const (
	hasTS fieldSet = 1 << iota
	hasHost
	hasURI
	hasAgent
	hasHash
	hasGrace
	hasFetched
)

var (
	loggerName  = []byte(RecordLogger)
	messageText = []byte(RecordMessage)
	verdictDeny = []byte("deny")
	verdictOK   = []byte("allow")
)

// parseLine reads a line into rec. It returns ok, or why the line is not
// a compliance record.
func (s *scanner) parseLine(line []byte, rec *rawRecord) (kind SkipKind, ok bool) {
	*rec = rawRecord{}
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
	case !bytes.Equal(rec.msg, messageText):
		return SkipOtherMessage, false
	case !bytes.Equal(rec.verdict, verdictDeny) && !bytes.Equal(rec.verdict, verdictOK):
		return SkipInvalid, false
	}
	return 0, true
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

// member reads the value of the member named k. A field of an unexpected
// type is skipped, as if absent; of a field given twice, the last counts.
func (s *scanner) member(rec *rawRecord, k []byte) error {
	c := s.peek()
	var dst *[]byte
	var set fieldSet
	switch string(k) {
	case "logger":
		dst = &rec.logger
	case "msg":
		dst = &rec.msg
	case "verdict":
		dst = &rec.verdict
	case "host":
		dst, set = &rec.host, hasHost
	case "uri":
		dst, set = &rec.uri, hasURI
	case "agent":
		dst, set = &rec.agent, hasAgent
	case "robots_hash":
		dst, set = &rec.hash, hasHash
	case "ts":
		if c == '"' || c == '-' || isDigit(c) {
			return s.timestamp(rec, c)
		}
	case "grace":
		if c == 't' || c == 'f' {
			return s.flag(&rec.grace, &rec.has, hasGrace)
		}
	case "agent_fetched_robots":
		if c == 't' || c == 'f' {
			return s.flag(&rec.fetched, &rec.has, hasFetched)
		}
	}
	if dst == nil || c != '"' {
		return s.skipValue()
	}
	v, err := s.str()
	*dst = v
	rec.has |= set
	return err
}

// flag reads a boolean member into dst, and notes it in has.
func (s *scanner) flag(dst *tri, has *fieldSet, set fieldSet) error {
	v, err := s.literal()
	*dst = v
	*has |= set
	return err
}

// timestamp reads the value of "ts", a number or a string, whose first
// byte is c.
func (s *scanner) timestamp(rec *rawRecord, c byte) error {
	var err error
	if c == '"' {
		rec.ts, err = s.str()
	} else {
		rec.ts, err = s.number()
	}
	rec.tsString = c == '"'
	rec.has |= hasTS
	return err
}
