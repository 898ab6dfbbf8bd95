package robotstxt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// FetchUserAgent is the User-Agent of the handler's own robots.txt
// requests, and of "caddy robots check" fetching one.
const FetchUserAgent = "caddy-robots-enforce (robots.txt fetch)"

// MaxRedirects is how many consecutive redirects an access follows. RFC 9309
// §2.3.1.2: crawlers SHOULD follow at least five, and past five MAY assume
// the file is unavailable. The enforcer does assume so: it must not hold a
// crawler to a file a compliant crawler may never have reached.
const MaxRedirects = 5

// Response is one HTTP response to a robots.txt request.
type Response struct {
	// StatusCode is the HTTP status code.
	StatusCode int
	// Header holds the response header fields; Location, Content-Type,
	// Cache-Control, Expires, Date and Age are read.
	Header http.Header
	// Body holds at most the limit given to Fetch.
	Body []byte
	// Truncated reports that the body went on past the limit.
	Truncated bool
}

// A Fetcher sends one GET request for a robots.txt URL.
//
// Fetch must not follow redirects: a 3xx response is returned as it is, so
// that redirects are counted and resolved as RFC 9309 §2.3.1.2 says. It
// reads at most limit octets of the body and reports whether there was
// more (a Store asks for one octet past its parse limit, so that the parser
// can tell a file that ends at the limit from one that goes on). It returns an error only when no response was received (network
// error, timeout, canceled ctx); a response with any status is not an error.
// It must return soon after ctx is done.
//
// Implementations must be safe for concurrent use: a Store calls Fetch from
// several goroutines at once, never more than one at a time for the
// robots.txt of one tracked host.
type Fetcher interface {
	Fetch(ctx context.Context, url string, limit int) (Response, error)
}

// FetcherFunc adapts a function to the Fetcher interface.
type FetcherFunc func(ctx context.Context, url string, limit int) (Response, error)

// Fetch calls f(ctx, url, limit).
func (f FetcherFunc) Fetch(ctx context.Context, url string, limit int) (Response, error) {
	return f(ctx, url, limit)
}

// HTTPFetcher is a Fetcher that sends requests with an http.Client. It is
// safe for concurrent use when its Client is.
type HTTPFetcher struct {
	// Client sends the requests; nil means http.DefaultClient. Its
	// redirect policy is bypassed: 3xx responses are returned as they are.
	Client *http.Client
	// UserAgent, when not empty, is sent as the User-Agent header.
	UserAgent string
}

var _ Fetcher = (*HTTPFetcher)(nil)

// Fetch implements Fetcher.
func (f *HTTPFetcher) Fetch(ctx context.Context, rawURL string, limit int) (Response, error) {
	client := http.DefaultClient
	if f.Client != nil {
		client = f.Client
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Response{}, err
	}
	if f.UserAgent != "" {
		req.Header.Set("User-Agent", f.UserAgent)
	}
	resp, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	// One octet more than the limit tells a body that ends there from one
	// that goes on.
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return Response{}, fmt.Errorf("reading body: %w", err)
	}
	r := Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: body}
	if len(body) > limit {
		r.Body, r.Truncated = body[:limit], true
	}
	return r, nil
}

// accessOutcome is what one access to a robots.txt found, redirects followed.
type accessOutcome struct {
	access    AccessResult // available, unavailable or unreachable
	status    int          // of the last response; 0 when there was none
	finalURL  string       // the URL of the last response, when redirected
	header    http.Header  // of the last response, for caching
	body      []byte       // when available
	truncated bool
	err       error // why the access did not yield a file
}

// fetchRobots accesses the robots.txt at rawURL, following redirects (RFC
// 9309 §2.3.1.2), and classifies the result (§2.3.1). Bodies are read up to
// limit octets.
func fetchRobots(ctx context.Context, f Fetcher, rawURL string, limit int) accessOutcome {
	ctx = context.WithValue(ctx, fetchOriginKey{}, rawURL)
	target := rawURL
	for redirects := 0; ; redirects++ {
		resp, err := safeFetch(ctx, f, target, limit)
		var o accessOutcome
		switch {
		case err != nil:
			// RFC 9309 §2.3.1.4: network errors and timeouts.
			o = accessOutcome{access: AccessUnreachable, err: fmt.Errorf("fetching %s: %w", target, err)}
		case resp.StatusCode < 300 || resp.StatusCode > 399:
			o = classifyResponse(target, resp, limit)
		case redirects == MaxRedirects:
			o = accessOutcome{access: AccessUnavailable, status: resp.StatusCode,
				err: fmt.Errorf("fetching %s: more than %d redirects", rawURL, MaxRedirects)}
		default:
			next, err := redirectTarget(target, resp)
			if err == nil {
				target = next
				continue
			}
			o = accessOutcome{access: AccessUnavailable, status: resp.StatusCode, err: err}
		}
		if target != rawURL {
			o.finalURL = target
		}
		return o
	}
}

type fetchOriginKey struct{}

// safeFetch calls f.Fetch, turning a panic into an error: a Fetcher that
// runs other code (the rest of a server's route, say) may panic on what a
// remote party sends, and a failed fetch is an unreachable file (RFC 9309
// §2.3.1.4), never the end of the process. The stack is not kept: the
// error says what panicked, and the caller logs it.
func safeFetch(ctx context.Context, f Fetcher, target string, limit int) (resp Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = Response{}, &FetchPanicError{Value: v}
		}
	}()
	return f.Fetch(ctx, target, limit)
}

// FetchPanicError is the error of a fetch whose Fetcher panicked.
type FetchPanicError struct {
	// Value is what the Fetcher panicked with.
	Value any
}

func (e *FetchPanicError) Error() string {
	return fmt.Sprintf("robots.txt fetcher panicked: %v", e.Value)
}

// FetchOrigin returns, in a Fetcher's context, the robots.txt URL whose
// access the fetch belongs to: the URL itself, or the one a redirect chain
// started from. A Fetcher can so tell a redirect within the site from one
// to another site. It returns "" outside a Store's fetch.
func FetchOrigin(ctx context.Context) string {
	s, _ := ctx.Value(fetchOriginKey{}).(string)
	return s
}

// classifyResponse reads a final (non-3xx) response.
func classifyResponse(target string, resp Response, limit int) accessOutcome {
	o := accessOutcome{status: resp.StatusCode, header: resp.Header}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		if len(resp.Body) > limit { // a fetcher that read past the limit
			resp.Body, resp.Truncated = resp.Body[:limit], true
		}
		if err := checkBody(resp); err != nil {
			// Not a robots.txt at all, but an error or placeholder page
			// served with 200: treated as a server error (RFC 9309
			// §2.3.1.4), so the last good copy, if any, stays in force.
			o.access, o.err = AccessUnreachable, fmt.Errorf("fetching %s: %w", target, err)
			return o
		}
		o.access, o.body, o.truncated = AccessAvailable, resp.Body, resp.Truncated
	case code == http.StatusTooManyRequests:
		// 429 says the server is overloaded, not that the file is
		// missing: a server error in the sense of RFC 9309 §2.3.1.4.
		o.access, o.err = AccessUnreachable, httpStatusError(target, code)
	case code >= 400 && code <= 499:
		// RFC 9309 §2.3.1.3, 401 and 403 included.
		o.access, o.err = AccessUnavailable, httpStatusError(target, code)
	default:
		// 5xx (RFC 9309 §2.3.1.4), and codes no server should send as a
		// final answer (1xx, 600 and up): also a server error.
		o.access, o.err = AccessUnreachable, httpStatusError(target, code)
	}
	return o
}

func httpStatusError(target string, code int) error {
	return fmt.Errorf("fetching %s: status %d %s", target, code, http.StatusText(code))
}

// redirectTarget resolves the Location of a 3xx response against the URL it
// answered. A redirect that cannot be followed (no Location, a Location
// that is not an http or https URL) leads to no file: the file is treated as
// unavailable, as it is after too many redirects.
func redirectTarget(base string, resp Response) (string, error) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("fetching %s: status %d without a Location", base, resp.StatusCode)
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", base, err)
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("fetching %s: bad Location %q: %w", base, loc, err)
	}
	u := b.ResolveReference(ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("fetching %s: redirect to %q, not an http or https URL", base, loc)
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

var (
	errHTMLBody   = errors.New("an HTML page, not a robots.txt")
	errJSONBody   = errors.New("a JSON document, not a robots.txt")
	errBinaryBody = errors.New("binary content (NUL octets), not a robots.txt")
)

// checkBody tells whether a 2xx response carries a robots.txt. RFC 9309
// §2.3 says the file is UTF-8 text/plain; in practice servers mislabel it,
// so the body decides first and the Content-Type only where it is
// unambiguous:
//
//   - an HTML page (Content-Type text/html or application/xhtml+xml, or a
//     body starting with "<!doctype html" or "<html") is refused: it is an
//     error, login or catch-all page, and parsed as robots.txt it would
//     read as "no rules";
//   - a JSON document (Content-Type application/json or any +json type, or
//     a body starting with "{" or "[") is refused: it is an API's answer
//     (an admin endpoint's, say, reached by a redirect), and parsed as
//     robots.txt it too would read as "no rules";
//   - a body with a NUL octet is refused as binary;
//   - a missing Content-Type, or any text/* type, is accepted;
//   - image, audio, video, font and model types are refused;
//   - any other type (application/octet-stream is what object stores send
//     for files they could not type) is accepted when the body is UTF-8.
func checkBody(resp Response) error {
	mt := contentMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || looksLikeHTML(resp.Body):
		return errHTMLBody
	case mt == "application/json" || strings.HasSuffix(mt, "+json") || looksLikeJSON(resp.Body):
		return errJSONBody
	case bytes.IndexByte(resp.Body, 0) >= 0:
		return errBinaryBody
	case mt == "" || strings.HasPrefix(mt, "text/"):
		return nil
	}
	top, _, _ := strings.Cut(mt, "/")
	switch top {
	case "image", "audio", "video", "font", "model":
		return fmt.Errorf("content type %s, not a robots.txt", mt)
	}
	if !validUTF8Prefix(resp.Body, resp.Truncated) {
		return fmt.Errorf("content type %s and a body that is not UTF-8", mt)
	}
	return nil
}

// contentMediaType returns the lower-case type/subtype of a Content-Type value.
func contentMediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// looksLikeHTML reports whether body starts, after a byte order mark and
// white space, with an HTML doctype or root element, in any case.
func looksLikeHTML(body []byte) bool {
	b := bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	b = bytes.TrimLeft(b, " \t\r\n\f")
	return hasPrefixFoldBytes(b, "<!doctype html") || hasPrefixFoldBytes(b, "<html")
}

// looksLikeJSON reports whether body starts, after a byte order mark and
// white space, with "{" or "[": no robots.txt line does, since a line
// starts with a key, a comment or nothing.
func looksLikeJSON(body []byte) bool {
	b := bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF"))
	b = bytes.TrimLeft(b, " \t\r\n\f")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

func hasPrefixFoldBytes(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && strings.EqualFold(string(b[:len(prefix)]), prefix)
}

// validUTF8Prefix reports whether b is UTF-8, ignoring a character cut
// short at the end when b was truncated.
func validUTF8Prefix(b []byte, truncated bool) bool {
	if truncated {
		i := len(b) - 1
		for i > 0 && i > len(b)-utf8.UTFMax && !utf8.RuneStart(b[i]) {
			i--
		}
		if i >= 0 && !utf8.FullRune(b[i:]) {
			b = b[:i]
		}
	}
	return utf8.Valid(b)
}

// URLHost returns the authority of an http(s) URL, or "".
func URLHost(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
