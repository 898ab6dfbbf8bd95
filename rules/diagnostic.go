package rules

import "fmt"

// Severity grades a Diagnostic.
type Severity uint8

const (
	// Info notes how a line was read, when nothing is likely wrong.
	Info Severity = iota
	// Warning marks a line that was used, but read in a way its author may
	// not have meant, or a rule that cannot work as written.
	Warning
	// Error marks content that was dropped: a line with no usable record,
	// a rule outside any group, content past the size limit.
	Error
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", uint8(s))
}

// Diagnostic codes: stable names for each kind of Diagnostic, for tools that
// filter or count them.
const (
	CodeBOM              = "bom"                // a byte order mark was skipped
	CodeInvalidUTF8      = "invalid-utf8"       // the line is not valid UTF-8
	CodeLineTooLong      = "line-too-long"      // the line was cut at MaxLineLength
	CodeSizeLimit        = "size-limit"         // content past the size limit was dropped
	CodeInvalidLine      = "invalid-line"       // no key and value could be read
	CodeMissingColon     = "missing-colon"      // white space was read as the separator
	CodeKeyTypo          = "key-typo"           // a misspelt or longer key was accepted
	CodeUnknownKey       = "unknown-key"        // a record this parser does not know
	CodeRuleOutsideGroup = "rule-outside-group" // allow/disallow before any user-agent
	CodePatternStart     = "pattern-start"      // a pattern not starting with "/" or "*"
	CodeAgentToken       = "agent-token"        // only part of a user-agent value is a token
	CodeAgentInvalid     = "agent-invalid"      // a user-agent value with no token at all
	CodeCrawlDelay       = "crawl-delay"        // a crawl-delay that is not a number
	CodeRecordOutside    = "record-outside"     // a group record (crawl-delay) outside any group

	// AI usage preferences (draft-ietf-aipref-attach-05 §3,
	// draft-ietf-aipref-vocab-08 §6).
	CodeUsageOutsideGroup  = "usage-outside-group"  // content-usage before any user-agent
	CodeUsageMalformed     = "usage-malformed"      // a preference that is not a structured-fields dictionary
	CodeUsageEmpty         = "usage-empty"          // a content-usage rule that states no preference
	CodeUsageUnknownKey    = "usage-unknown-key"    // a category label the vocabulary does not define
	CodeUsageBadValue      = "usage-bad-value"      // a known category whose value is not the token y or n
	CodeUsageBetweenAgents = "usage-between-agents" // a user-agent line after content-usage or content-signal joins the group

	// Cloudflare's Content-Signal lines (contentsignals.org).
	CodeSignalOutsideGroup = "signal-outside-group" // content-signal before any user-agent
	CodeSignalEmpty        = "signal-empty"         // a content-signal line with no signal
	CodeSignalMalformed    = "signal-malformed"     // a member that is not key=value
	CodeSignalUnknownKey   = "signal-unknown-key"   // a key other than search, ai-input, ai-train and use
	CodeSignalBadValue     = "signal-bad-value"     // a signal whose value is not yes or no (use: not a level)
	CodeSignalRepeated     = "signal-repeated"      // a signal given both yes and no
	CodeSignalUse          = "signal-use"           // use=, which has no AIPREF category
)

// A Diagnostic reports a line that Parse could not use or had to interpret.
type Diagnostic struct {
	// Line is the 1-based line number; 0 when the diagnostic is about the
	// file as a whole.
	Line     int
	Severity Severity
	// Code is one of the Code constants.
	Code string
	// Message says what happened, in words.
	Message string
}

// String formats d as "line N: severity: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("line %d: %s: %s", d.Line, d.Severity, d.Message)
}

// A diagnostic is held as its code and what its message needs, a string
// from the backing text and a number (for a usage preference line, its
// rule's place in Robots.usage), and its message is written when
// Diagnostics is called: most messages quote a key or a value the file
// holds already, and a line can have a diagnostic for each of its members
// ("content-usage: a, b, c"), which a message written whole for each
// would make many times larger than the line.
type diagRec struct {
	line uint32
	arg  span
	num  uint32
	code diagCode
	sev  Severity
}

// diagCode numbers the Code constants, for diagRec.
type diagCode uint8

const (
	diagBOM diagCode = iota
	diagInvalidUTF8
	diagLineTooLong
	diagSizeLimit
	diagInvalidLine
	diagMissingColon
	diagKeyTypo
	diagUnknownKey
	diagRuleOutsideGroup
	diagPatternStart
	diagAgentToken
	diagAgentInvalid
	diagCrawlDelay
	diagRecordOutside
	diagUsageBetweenAgents
	diagUsageUnknownKey
	diagUsageBadValue
	diagSignalMalformed
	diagSignalUnknownKey
	diagSignalBadValue
	diagSignalRepeated
	diagUsageOutsideGroup
	diagUsageMalformed
	diagUsageEmpty
	diagSignalOutsideGroup
	diagSignalEmpty
	diagSignalUse
)

var diagCodes = [...]string{
	diagBOM: CodeBOM, diagInvalidUTF8: CodeInvalidUTF8, diagLineTooLong: CodeLineTooLong, diagSizeLimit: CodeSizeLimit,
	diagInvalidLine: CodeInvalidLine, diagMissingColon: CodeMissingColon, diagKeyTypo: CodeKeyTypo,
	diagUnknownKey: CodeUnknownKey, diagRuleOutsideGroup: CodeRuleOutsideGroup, diagPatternStart: CodePatternStart,
	diagAgentToken: CodeAgentToken, diagAgentInvalid: CodeAgentInvalid, diagCrawlDelay: CodeCrawlDelay,
	diagRecordOutside: CodeRecordOutside, diagUsageBetweenAgents: CodeUsageBetweenAgents,
	diagUsageOutsideGroup: CodeUsageOutsideGroup, diagUsageMalformed: CodeUsageMalformed, diagUsageEmpty: CodeUsageEmpty,
	diagUsageUnknownKey: CodeUsageUnknownKey, diagUsageBadValue: CodeUsageBadValue,
	diagSignalOutsideGroup: CodeSignalOutsideGroup, diagSignalEmpty: CodeSignalEmpty, diagSignalMalformed: CodeSignalMalformed,
	diagSignalUnknownKey: CodeSignalUnknownKey, diagSignalBadValue: CodeSignalBadValue, diagSignalRepeated: CodeSignalRepeated,
	diagSignalUse: CodeSignalUse,
}

// diagnostic makes the Diagnostic d holds.
func (r *Robots) diagnostic(d diagRec) Diagnostic {
	return Diagnostic{Line: int(d.line), Severity: d.sev, Code: diagCodes[d.code], Message: r.message(d)}
}

// message writes the message of d.
func (r *Robots) message(d diagRec) string {
	arg := d.arg.in(r.text)
	switch d.code {
	case diagBOM:
		return fmt.Sprintf("byte order mark skipped (%d octets)", d.num)
	case diagInvalidUTF8:
		return "line is not valid UTF-8"
	case diagLineTooLong:
		return fmt.Sprintf("line longer than %d octets: the rest is ignored", MaxLineLength)
	case diagSizeLimit:
		return fmt.Sprintf("content past %d octets dropped (%d octets in all), from this line on", d.num, r.size)
	case diagInvalidLine:
		return "no \"key: value\" record on this line: ignored"
	case diagMissingColon:
		return fmt.Sprintf("no colon after %q: white space read as the separator", arg)
	case diagKeyTypo:
		return fmt.Sprintf("key %q read as %q", arg, canonicalKeys[key(d.num)])
	case diagUnknownKey:
		return fmt.Sprintf("unknown key %q: kept as a record, not interpreted", arg)
	case diagRuleOutsideGroup:
		return "rule before any user-agent line: ignored"
	case diagPatternStart:
		return fmt.Sprintf("pattern %q does not start with \"/\" or \"*\": it matches no path", arg)
	case diagAgentToken:
		return fmt.Sprintf("user-agent %q read as %q", arg, ProductToken(arg))
	case diagAgentInvalid:
		return fmt.Sprintf("user-agent %q has no product token ([A-Za-z_-]): it names no crawler", arg)
	case diagCrawlDelay:
		return fmt.Sprintf("crawl-delay %q is not a number of seconds between 0 and %v: ignored", arg, maxCrawlDelay)
	case diagRecordOutside:
		return "crawl-delay before any user-agent line: applies to no group"
	case diagUsageBetweenAgents:
		return fmt.Sprintf("user-agent after a usage preference line joins the group at line %d, as parsers that do not know the line read it "+
			"(draft-ietf-aipref-attach-05 §3 would start a new group here): the preferences above apply to these agents too; "+
			"put the group's user-agent lines together, before its rules", d.num)
	case diagUsageOutsideGroup, diagUsageEmpty, diagUsageMalformed, diagUsageUnknownKey, diagUsageBadValue:
		return usageMessage(d.code, arg, r.usageRuleAt(d))
	}
	return signalMessage(d.code, arg, r.usageRuleAt(d))
}

// usageRuleAt returns the usage rule a diagnostic of a whole usage
// preference line is about.
func (r *Robots) usageRuleAt(d diagRec) UsageRule {
	switch d.code {
	case diagUsageEmpty, diagUsageMalformed, diagSignalEmpty, diagSignalUse:
		return r.usageRules(d.num, d.num+1)[0]
	}
	return UsageRule{}
}
