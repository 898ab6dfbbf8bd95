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
