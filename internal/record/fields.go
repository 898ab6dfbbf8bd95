package record

import (
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// A Decision is the content of a compliance record (MsgDecision), as the
// handler writes it and "caddy robots check --json" prints it.
type Decision struct {
	Site, Host, Method, URI, UserAgent string
	Agent, BotClass, Automation        string
	Verdict, Mode, Reason, Reading     string
	GroupLine                          int
	Rule                               string
	RuleLine                           int
	Compliance                         string
	JudgedVersions                     []string
	// Assessed says the request as sent was judged by both readings, and
	// RFC9309Verdict and GoogleVerdict are set.
	Assessed                      bool
	RFC9309Verdict, GoogleVerdict string
	RobotsHash, RobotsSource      string
	RobotsFetchedAt               time.Time
	RemoteIP, ClientIP            string
	// Served is set when the crawler was served robots.txt within the
	// grace window: ServedAt, ServedHash and ServedLink say which and how.
	Served                   bool
	ServedAt                 time.Time
	ServedHash, ServedLink   string
	ContentUsage             string
	Identity, IdentityMethod string
	// Escalation is set for an escalated crawler (see the constants of
	// the same names).
	Escalation                     string
	EscalationBegan                bool
	EscalatedSince, EscalatedUntil time.Time
	EscalatedBy                    string
	// Instance and FetcherClass are written when set (see the constants
	// of the same names).
	Instance, FetcherClass string
}

// Fields appends the record's fields to fs, in the schema's order, and
// returns the result.
func (d *Decision) Fields(fs []zap.Field) []zap.Field {
	fs = append(fs,
		zap.Int(RecordVersion, Version),
		zap.String(Site, d.Site),
		zap.String(Host, d.Host),
		zap.String(Method, d.Method),
		zap.String(URI, d.URI),
		zap.String(UserAgent, cut(d.UserAgent, MaxUserAgent)),
		zap.String(Agent, d.Agent),
		zap.String(BotClass, d.BotClass),
		zap.String(Verdict, d.Verdict),
		zap.String(Mode, d.Mode),
		zap.String(Reason, d.Reason),
		zap.String(Reading, d.Reading),
		zap.Int(GroupLine, d.GroupLine),
		zap.String(Rule, d.Rule),
		zap.Int(RuleLine, d.RuleLine),
		zap.String(Compliance, d.Compliance),
		zap.Bool(Grace, d.Compliance == GraceValue),
		zap.Array(JudgedVersions, (*stringArray)(&d.JudgedVersions)),
	)
	if d.Assessed {
		fs = append(fs, zap.String(RFC9309Verdict, d.RFC9309Verdict), zap.String(GoogleVerdict, d.GoogleVerdict))
	}
	fs = append(fs,
		zap.String(RobotsHash, d.RobotsHash),
		zap.String(RobotsSource, d.RobotsSource),
		zap.String(RemoteIP, d.RemoteIP),
		zap.String(ClientIP, d.ClientIP),
		zap.Bool(AgentFetchedRobots, d.Served),
		zap.Bool(ServedRobots, d.Served),
		zap.String(Automation, d.Automation),
	)
	if d.Served {
		fs = append(fs, zap.Time(ServedAt, d.ServedAt), zap.String(ServedHash, d.ServedHash), zap.String(ServedLink, d.ServedLink))
	}
	if !d.RobotsFetchedAt.IsZero() {
		fs = append(fs, zap.Time(RobotsFetchedAt, d.RobotsFetchedAt))
	}
	if d.ContentUsage != "" {
		fs = append(fs, zap.String(ContentUsage, d.ContentUsage))
	}
	if d.Identity != "" {
		fs = append(fs, zap.String(Identity, d.Identity))
		if d.IdentityMethod != "" {
			fs = append(fs, zap.String(IdentityMethod, d.IdentityMethod))
		}
	}
	fs = appendOptional(fs, d.Instance, d.FetcherClass)
	if d.Escalation != "" {
		fs = append(fs, zap.String(Escalation, d.Escalation), zap.String(EscalatedBy, d.EscalatedBy))
		if !d.EscalatedSince.IsZero() {
			fs = append(fs, zap.Time(EscalatedSince, d.EscalatedSince), zap.Time(EscalatedUntil, d.EscalatedUntil))
		}
		if d.EscalationBegan {
			fs = append(fs, zap.Bool(EscalationBegan, true))
		}
	}
	return fs
}

// A Served is the content of the line of a robots.txt served (MsgServed).
type Served struct {
	Site, Host, Method, URI, UserAgent string
	Agents, CreditedAgents             []string
	ClientIP, RemoteIP                 string
	HTTPStatus                         int
	// RobotsHash names the version served; "" when it cannot be named.
	RobotsHash string
	// Instance and FetcherClass are written when set (see the constants
	// of the same names).
	Instance, FetcherClass string
}

// Fields appends the line's fields to fs and returns the result.
func (s *Served) Fields(fs []zap.Field) []zap.Field {
	fs = append(fs,
		zap.Int(RecordVersion, Version),
		zap.String(Site, s.Site),
		zap.String(Host, s.Host),
		zap.String(Method, s.Method),
		zap.String(URI, s.URI),
		zap.String(UserAgent, cut(s.UserAgent, MaxUserAgent)),
		zap.Strings(Agents, s.Agents),
		zap.Strings(CreditedAgents, s.CreditedAgents),
		zap.String(ClientIP, s.ClientIP),
		zap.String(RemoteIP, s.RemoteIP),
		zap.Int(HTTPStatus, s.HTTPStatus),
	)
	if s.RobotsHash != "" {
		fs = append(fs, zap.String(RobotsHash, s.RobotsHash))
	}
	return appendOptional(fs, s.Instance, s.FetcherClass)
}

// appendOptional appends the instance and the fetcher class, each when
// set.
func appendOptional(fs []zap.Field, instance, class string) []zap.Field {
	if instance != "" {
		fs = append(fs, zap.String(Instance, instance))
	}
	if class != "" {
		fs = append(fs, zap.String(FetcherClass, class))
	}
	return fs
}

// stringArray marshals a list of strings; as a pointer to the list, it
// takes no allocation to pass as a field, where zap.Strings takes one.
type stringArray []string

// MarshalLogArray implements zapcore.ArrayMarshaler.
func (a *stringArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, s := range *a {
		enc.AppendString(s)
	}
	return nil
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
