package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// maxListRedirects bounds the redirects a range list fetch follows: Google
// moved its lists once already and redirects the old URLs; a chain longer
// than this is a misconfiguration or a trap.
const maxListRedirects = 3

// errTooLarge is returned when a body exceeds its limit.
var errTooLarge = errors.New("body exceeds limit")

// get fetches url with a GET and returns the body of a 200 response, at
// most limit octets. Key directories pass follow=false: the webbotauth
// draft (Key Distribution and Discovery) says a verifier MUST NOT follow
// redirects, and any other status is a failure. Range lists follow up to
// maxListRedirects redirects, never from https to http.
func (v *Verifier) get(ctx context.Context, url, accept string, limit int64, follow bool) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", v.cfg.UserAgent)
	client := *v.cfg.HTTPClient
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if !follow {
			return http.ErrUseLastResponse
		}
		if len(via) > maxListRedirects {
			return fmt.Errorf("more than %d redirects", maxListRedirects)
		}
		if via[0].URL.Scheme == "https" && r.URL.Scheme != "https" {
			return errors.New("redirect from https to http")
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.Header, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := readLimited(resp.Body, limit)
	return body, resp.Header, err
}

// readLimited reads r to its end, failing past limit octets.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w of %d octets", errTooLarge, limit)
	}
	return body, nil
}

// readFileLimited reads a local list file of at most limit octets.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, limit)
}

// fileStamp identifies a version of a file for change detection.
type fileStamp struct {
	mod  time.Time
	size int64
}

// statChanged reports the file's stamp and whether it differs from old; a
// file that cannot be stated counts as changed, so the read reports why.
func statChanged(path string, old fileStamp) (fileStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, true
	}
	st := fileStamp{mod: fi.ModTime(), size: fi.Size()}
	return st, st != old
}
