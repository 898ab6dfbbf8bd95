package audit

import "github.com/robotsenforce/caddy-robots-enforce/internal/record"

// member reads the value of the top-level member named k. A field of an
// unexpected type is skipped, as if absent; of a field given twice, the
// last counts. Fields the audit does not read are skipped without
// allocating.
func (s *scanner) member(rec *rawRecord, k []byte) error {
	c := s.peek()
	var dst *[]byte
	var set fieldSet
	switch string(k) {
	case record.Name:
		dst = &rec.logger
	case record.Msg:
		dst = &rec.msg
	case record.Verdict:
		dst = &rec.verdict
	case record.Host:
		dst, set = &rec.host, hasHost
	case record.Site:
		dst, set = &rec.site, hasSite
	case record.URI:
		dst, set = &rec.uri, hasURI
	case record.Agent:
		dst, set = &rec.agent, hasAgent
	case record.RobotsHash:
		dst, set = &rec.hash, hasHash
	case record.Mode:
		dst, set = &rec.mode, hasMode
	case record.Compliance:
		dst, set = &rec.compliance, hasCompliance
	case record.Identity:
		dst, set = &rec.identity, hasIdentity
	case record.IdentityMethod:
		dst, set = &rec.method, hasMethod
	case record.ClientIP:
		dst, set = &rec.clientIP, hasClientIP
	case record.ServedLink:
		dst, set = &rec.servedLink, hasServedLink
	case record.UserAgent:
		dst, set = &rec.userAgent, hasUserAgent
	case record.RFC9309Verdict:
		dst, set = &rec.rfcVerdict, hasRFCVerdict
	case record.GoogleVerdict:
		dst, set = &rec.googleVerdict, hasGoogleVerdict
	case record.Escalation:
		dst, set = &rec.escalation, hasEscalation
	case record.EscalatedBy:
		dst, set = &rec.escalatedBy, hasEscalatedBy
	case record.Method:
		dst, set = &rec.reqMethod, hasReqMethod
	case record.Rule:
		dst, set = &rec.rule, hasRule
	case record.Reason:
		dst, set = &rec.reason, hasReason
	case record.Instance:
		dst, set = &rec.instance, hasInstance
	case record.FetcherClass:
		dst, set = &rec.fetcherClass, hasFetcherClass
	case record.RuleLine:
		if c == '-' || isDigit(c) {
			v, err := s.number()
			rec.ruleLine = v
			rec.has |= hasRuleLine
			return err
		}
	case record.TS:
		if c == '"' || c == '-' || isDigit(c) {
			rec.has |= hasTS
			return s.timeValue(&rec.ts, &rec.tsString, c)
		}
	case record.EscalatedSince:
		if c == '"' || c == '-' || isDigit(c) {
			rec.has |= hasEscalatedSince
			return s.timeValue(&rec.escSince, &rec.escSinceString, c)
		}
	case record.EscalatedUntil:
		if c == '"' || c == '-' || isDigit(c) {
			rec.has |= hasEscalatedUntil
			return s.timeValue(&rec.escUntil, &rec.escUntilString, c)
		}
	case record.ServedAt:
		if c == '-' || isDigit(c) {
			v, err := s.number()
			rec.servedAt = v
			rec.has |= hasServedAt
			return err
		}
	case record.Grace:
		if c == 't' || c == 'f' {
			return s.flag(&rec.grace, &rec.has, hasGrace)
		}
	case record.AgentFetchedRobots:
		if c == 't' || c == 'f' {
			return s.flag(&rec.fetched, &rec.has, hasFetched)
		}
	case record.ServedRobots:
		if c == 't' || c == 'f' {
			return s.flag(&rec.servedRobots, &rec.has, hasServedRobots)
		}
	case record.EscalationBegan:
		if c == 't' || c == 'f' {
			return s.flag(&rec.escalationBegan, &rec.has, hasEscalationBegan)
		}
	case record.JudgedVersions:
		if c == '[' {
			rec.has |= hasJudged
			return s.list(&rec.judged)
		}
	case record.Agents:
		if c == '[' {
			rec.has |= hasAgents
			return s.list(&rec.agents)
		}
	case record.CreditedAgents:
		if c == '[' {
			rec.has |= hasCredited
			return s.list(&rec.credited)
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

// timeValue reads a time ("ts", or an escalation's bound), a number or a
// string whose first byte is c, into dst, and notes which in isString:
// zap writes every time field in the form Caddy's time_format sets.
func (s *scanner) timeValue(dst *[]byte, isString *bool, c byte) error {
	var err error
	if c == '"' {
		*dst, err = s.str()
	} else {
		*dst, err = s.number()
	}
	*isString = c == '"'
	return err
}

// maxListItems is how many strings of a JSON array a record keeps: a
// served line's agents (and credited_agents, some of them) are the
// User-Agent's product tokens, which the handler caps at 24 candidates,
// and judged_versions lists the robots.txt versions of one day, a
// handful. Further strings are counted, not kept.
const maxListItems = 24

// strList holds the strings of a JSON array, as slices of the line (or of
// the scanner's scratch). Items of other types are skipped.
type strList struct {
	n     int // items kept
	more  int // strings past maxListItems
	items [maxListItems][]byte
}

// all returns the kept items.
func (l *strList) all() [][]byte { return l.items[:l.n] }

// list reads an array at the current position (after peek saw its '[')
// into l, keeping its strings and skipping other values.
func (s *scanner) list(l *strList) error {
	l.n, l.more = 0, 0
	s.pos++ // '['
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if s.peek() == '"' {
			v, err := s.str()
			if err != nil {
				return err
			}
			if l.n < len(l.items) {
				l.items[l.n] = v
				l.n++
			} else {
				l.more++
			}
		} else if err := s.skipValue(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.fail()
		}
	}
}
