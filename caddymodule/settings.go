package caddymodule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robotsenforce/caddy-robots-enforce/internal/enforce"
	"github.com/robotsenforce/caddy-robots-enforce/internal/robotstxt"
)

// The words of the configuration (the Caddyfile's subdirectives and the
// JSON fields, which are the same) are read once, by Handler.Settings,
// into typed values: the handler's Provision and "caddy robots check"
// both call it, so that a word means one thing wherever it is given, with
// one default and one message, and the request path compares no
// configuration strings (a misspelt word there would not compile).

// Settings are a handler's options read into the values the core and the
// request path use, with their defaults.
type Settings struct {
	// Judge is the judgement's configuration as the options make it:
	// Policy, IdentityPolicy, Undeclared, Usage, LogAllowed, Enforce,
	// Escalation and EscalationFor. Whoever judges adds what belongs to
	// its process: Source, Identity, Served, Violators, Classifier.
	Judge enforce.JudgeConfig
	// FixedKey is the key the source is asked for every site by, for a
	// source that serves them all one file ("file", "inline", a url
	// source's host); "" for upstream, asked for each request's site.
	FixedKey string
	// Exactly one of File, Inline and Store is set, by the source's kind.
	// Store is missing only what belongs to a process: its Fetcher,
	// OnChange and OnVersion.
	File   *robotstxt.FileConfig
	Inline *robotstxt.InlineConfig
	Store  *robotstxt.StoreConfig
	// Verify says whether claims are verified (the verify block is not
	// off).
	Verify bool

	mode        handlerMode
	source      sourceKind
	usage       usageMode
	serve       serveMode
	unreachable robotstxt.UnreachablePolicy
	// lintWarnings are what lint warns of in a file or inline source.
	lintWarnings []lintWarning
}

// handlerMode is the mode option.
type handlerMode uint8

const (
	modeEnforce handlerMode = iota
	modeLog
)

// sourceKind is the kind of the source option.
type sourceKind uint8

const (
	sourceUpstream sourceKind = iota
	sourceFile
	sourceURL
	sourceInline
)

// usageMode is the content_usage option.
type usageMode uint8

const (
	usageHeader usageMode = iota
	usageOff
	usageOverride
)

// serveMode is the serve_robots option.
type serveMode uint8

const (
	serveEnforced serveMode = iota
	serveOrigin
)

// word is a configuration word and the value it stands for.
type word[T comparable] struct {
	name  string
	value T
}

// vocabulary is the words one option takes, its default first.
type vocabulary[T comparable] []word[T]

var (
	modeWords        = vocabulary[handlerMode]{{"enforce", modeEnforce}, {"log", modeLog}}
	sourceWords      = vocabulary[sourceKind]{{"upstream", sourceUpstream}, {"file", sourceFile}, {"url", sourceURL}, {"inline", sourceInline}}
	usageWords       = vocabulary[usageMode]{{"header", usageHeader}, {"off", usageOff}, {"override", usageOverride}}
	serveWords       = vocabulary[serveMode]{{"enforced", serveEnforced}, {"origin", serveOrigin}}
	unreachableWords = vocabulary[robotstxt.UnreachablePolicy]{{"deny", robotstxt.UnreachableDisallow}, {"allow", robotstxt.UnreachableAllow}}
	originWords      = vocabulary[bool]{{"case_sensitive", false}, {"case_insensitive", true}}
	onOffWords       = vocabulary[bool]{{"on", true}, {"off", false}}
	forgedWords      = vocabulary[enforce.ForgedPolicy]{{"wildcard", enforce.ForgedWildcard}, {"deny", enforce.ForgedDeny}, {"ignore", enforce.ForgedIgnore}}
	pendingWords     = vocabulary[bool]{{"claimed", false}, {"wildcard", true}}
	undeclaredWords  = vocabulary[bool]{{"ignore", false}, {"bind", true}}
	escalationWords  = vocabulary[enforce.EscalationMode]{{"enforce", enforce.EscalateEnforce}, {"block", enforce.EscalateBlock}}
)

// read returns the value of name, the default for "", or an error that
// names the option and the words it takes.
func (v vocabulary[T]) read(option, name string) (T, error) {
	if name == "" {
		return v[0].value, nil
	}
	return v.must(option, name)
}

// must is read without a default: "" is an error too.
func (v vocabulary[T]) must(option, name string) (T, error) {
	for _, w := range v {
		if w.name == name {
			return w.value, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("%s %q: want %s", option, name, v.list())
}

// list names the words: "a, b or c".
func (v vocabulary[T]) list() string {
	var b strings.Builder
	for i, w := range v {
		switch {
		case i == 0:
		case i == len(v)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(w.name)
	}
	return b.String()
}

// name returns the word of value.
func (v vocabulary[T]) name(value T) string {
	for _, w := range v {
		if w.value == value {
			return w.name
		}
	}
	return fmt.Sprint(value)
}

func (m handlerMode) String() string { return modeWords.name(m) }
func (k sourceKind) String() string  { return sourceWords.name(k) }

// An OptionError is a problem with one option, named as the Caddyfile
// names it ("max_size", "verify forged"); its message begins with that
// name.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// problems are every problem of a configuration, reported at once, on one
// line as log messages are.
type problems []error

func (p problems) Error() string {
	msgs := make([]string, len(p))
	for i, err := range p {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns each problem.
func (p problems) Unwrap() []error { return p }

// optionErrors returns the problems in err, each an *OptionError: those
// err joins, and err itself, of option unless it names a finer one.
func optionErrors(option string, err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var errs []error
		for _, e := range j.Unwrap() {
			errs = append(errs, optionErrors(option, e)...)
		}
		return errs
	}
	if _, ok := err.(*OptionError); ok {
		return []error{err}
	}
	return []error{&OptionError{Option: option, Err: err}}
}

// Settings checks the handler's options as Provision does, with their
// defaults, and reads them into typed values. The error joins every
// problem, each an *OptionError, so that a configuration is fixed in one
// pass. h is not changed.
func (h *Handler) Settings() (*Settings, error) {
	c := *h
	c.setDefaults()
	s := new(Settings)
	if errs := c.read(s); len(errs) > 0 {
		return nil, fmt.Errorf("robots_enforce: %w", problems(errs))
	}
	return s, nil
}

// setDefaults gives the options that Validate expects set their defaults.
// Provision sets them on the handler itself: the source and unreachable
// settings, as they then are, name the state shared across reloads and
// saved across restarts (stateKey).
func (h *Handler) setDefaults() {
	if h.Mode == "" {
		h.Mode = modeWords[0].name
	}
	if h.Status == 0 {
		h.Status = defaultStatus
	}
	switch {
	case h.Source == nil:
		h.Source = &Source{Kind: sourceWords[0].name}
	case h.Source.Kind == "":
		src := *h.Source // the caller's Source is not changed
		src.Kind = sourceWords[0].name
		h.Source = &src
	}
}

// read reads every option into s, and returns the problems found, each an
// *OptionError.
func (h *Handler) read(s *Settings) []error { return h.readExcept(s, nil) }

// readExcept is read, but for the options skip names (the JSON fields
// that could not be decoded, whose values are not what was written): they
// are not checked, nor checked against others.
func (h *Handler) readExcept(s *Settings, skip map[string]bool) []error {
	var errs []error
	for _, c := range fieldChecks {
		if !skip[c.option] {
			errs = append(errs, optionErrors(c.option, c.check(h, s))...)
		}
	}
	if len(errs) > 0 || len(skip) > 0 {
		return errs // the options are not all read: no cross-check
	}
	for _, c := range crossChecks {
		errs = append(errs, optionErrors(c.option, c.check(h, s))...)
	}
	if len(errs) > 0 {
		return errs
	}
	s.Judge.Enforce = s.mode == modeEnforce
	s.Judge.Usage = s.usage != usageOff
	s.Judge.LogAllowed = h.LogAllowed
	s.Judge.Policy.AllowAgents = h.AllowAgents
	s.Verify = h.Verify == nil || !h.Verify.Off
	h.readSource(s)
	return nil
}

// readSource sets the source's configuration, from options checked.
func (h *Handler) readSource(s *Settings) {
	src := h.Source
	switch s.source {
	case sourceFile:
		s.File, s.FixedKey = &robotstxt.FileConfig{Path: src.Path, MaxSize: int(h.MaxSize)}, "file"
		return
	case sourceInline:
		s.Inline, s.FixedKey = &robotstxt.InlineConfig{Body: src.Text, MaxSize: int(h.MaxSize)}, "inline"
		return
	}
	s.Store = &robotstxt.StoreConfig{
		MaxSize:      int(h.MaxSize),
		FetchTimeout: time.Duration(h.FetchTimeout),
		Refresh:      time.Duration(h.Refresh),
		MaxHosts:     h.MaxHosts,
		MaxMemory:    int64(h.MaxMemory),
		Unreachable:  s.unreachable,
	}
	if h.NewHosts != nil {
		s.Store.NewHosts, s.Store.NewHostsPer = h.NewHosts.Count, time.Duration(h.NewHosts.Per)
	}
	if s.source == sourceURL {
		s.Store.URL, s.FixedKey = src.URL, robotstxt.URLHost(src.URL)
		s.Store.KeepBody = true // served to crawlers (serve_robots), one site's worth
		if strings.HasPrefix(src.URL, "http://") {
			s.Store.Scheme = "http"
		}
	}
}
