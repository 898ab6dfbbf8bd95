package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/robotsenforce/caddy-robots-enforce/rules"
)

// The texts of robots.txt versions. Records name a version by the first
// 16 hex digits of its SHA-256 (robots_hash, served_hash,
// judged_versions); the handler keeps each version's body in Caddy's
// storage under robots_enforce/, in a file named by the body's whole
// SHA-256 in hex. Texts finds a version's body by walking a copy of that
// storage (Caddy's data directory, or a file_system storage's root) and
// takes a file only when its content hashes to its name, so that the
// evidence needs nothing but the logs and a copy of the directory, and
// no file can stand for a version it is not. Where the files lie under
// robots_enforce/ does not matter.

// Bounds of the texts, each with its reason.
const (
	// MaxTextFiles bounds the files named like a version that a walk
	// notes: an instance keeps a few versions per site, and a directory
	// holding more is not a storage the handler wrote.
	MaxTextFiles = 100000
	// MaxTextSize bounds a version's body: the handler reads at most its
	// max_size (500 KiB by default, RFC 9309 §2.5); a larger file is not
	// read.
	MaxTextSize = 16 << 20
	// maxTextBytes bounds the bodies held at once; past it, versions
	// asked for are reported as not loaded.
	maxTextBytes = 256 << 20
)

// TextsDir is the directory under a storage root that Texts walks.
const TextsDir = "robots_enforce"

// Why a version has no text.
const (
	// TextMissing: no file of the storage holds it (or no storage was
	// given).
	TextMissing = "missing"
	// TextAmbiguous: two files of different contents share the version's
	// 16 hex digits; neither can be said to be it.
	TextAmbiguous = "ambiguous"
	// TextNoFile: the version names no file: "unavailable" (no file; no
	// rules apply), "unreachable" or "disallow_all" (everything
	// disallowed for want of a file).
	TextNoFile = "no_file"
	// TextNotLoaded: past the bound of texts held at once.
	TextNotLoaded = "not_loaded"
)

// VersionText is a robots.txt version's body, checked against its name.
type VersionText struct {
	// Name is the version as records name it (16 hex digits).
	Name string
	// SHA256 is the body's SHA-256 in hex, which the file is named by.
	SHA256 string
	// Body is the file's content, as served.
	Body []byte
	// Robots is Body parsed, as the handler parses it.
	Robots *rules.Robots
	lines  []int // where each line starts, once Line needs them
}

// Line returns line n (from 1) of the body as the file has it, as package
// rules numbers lines: CR, LF and CRLF each end one; "" past the end.
func (vt *VersionText) Line(n int) string {
	if vt.lines == nil {
		vt.lines = append(vt.lines, 0)
		for i := 0; i < len(vt.Body); i++ {
			switch vt.Body[i] {
			case '\r':
				if i+1 < len(vt.Body) && vt.Body[i+1] == '\n' {
					i++
				}
				fallthrough
			case '\n':
				vt.lines = append(vt.lines, i+1)
			}
		}
	}
	if n < 1 || n > len(vt.lines) {
		return ""
	}
	end := len(vt.Body)
	if n < len(vt.lines) {
		end = vt.lines[n]
	}
	return strings.TrimRight(string(vt.Body[vt.lines[n-1]:end]), "\r\n")
}

// Texts finds versions' bodies in storage directories.
type Texts struct {
	// Dirs are the storage roots given.
	Dirs []string
	// files are the candidates by version name: the paths of files named
	// by a SHA-256 that starts with it.
	files  map[string][]string
	loaded map[string]*textResult
	bytes  int64
	// Skipped counts files left out of the walk: past MaxTextFiles, or
	// larger than MaxTextSize; Mismatched those whose content does not
	// hash to their name.
	Skipped, Mismatched int
}

type textResult struct {
	text   *VersionText
	reason string
}

// OpenTexts walks dir/robots_enforce of each storage directory given (the
// instances of a fleet that share no storage have one each) and notes
// every file named like a SHA-256 (64 lower-case hex digits). It fails
// when a directory cannot be read, or holds no robots_enforce directory.
func OpenTexts(dirs ...string) (*Texts, error) {
	t := &Texts{Dirs: dirs, files: make(map[string][]string)}
	n := 0
	for _, dir := range dirs {
		root := filepath.Join(dir, TextsDir)
		fi, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("storage %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("storage %s: %s is not a directory", dir, root)
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable directory holds nothing usable
			}
			if !d.Type().IsRegular() || !isHexSum(d.Name()) {
				return nil
			}
			if n >= MaxTextFiles {
				t.Skipped++
				return nil
			}
			n++
			name := d.Name()[:16]
			t.files[name] = append(t.files[name], path)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("storage %s: %w", dir, err)
		}
	}
	return t, nil
}

// NewTexts returns Texts holding the bodies given, as a storage would:
// for tests, and for callers that have the bodies at hand.
func NewTexts(bodies ...[]byte) *Texts {
	t := &Texts{loaded: make(map[string]*textResult)}
	for _, b := range bodies {
		sum := sha256.Sum256(b)
		full := hex.EncodeToString(sum[:])
		name := full[:16]
		if old := t.loaded[name]; old != nil && old.text != nil && old.text.SHA256 != full {
			t.loaded[name] = &textResult{reason: TextAmbiguous}
			continue
		}
		t.loaded[name] = &textResult{text: newVersionText(name, full, slices.Clone(b))}
	}
	return t
}

func newVersionText(name, sum string, body []byte) *VersionText {
	// The handler parses at most its max_size, and keeps no more: the
	// whole body is what it read.
	return &VersionText{Name: name, SHA256: sum, Body: body, Robots: rules.ParseWith(body, rules.Options{MaxSize: max(len(body), rules.DefaultMaxSize)})}
}

// Text returns the text of the version name, or why there is none
// (TextMissing, TextAmbiguous, TextNoFile, TextNotLoaded). A nil Texts
// has none.
func (t *Texts) Text(name string) (*VersionText, string) {
	switch name {
	case VersionUnavailable, VersionUnreachable, VersionDisallowAll:
		return nil, TextNoFile
	}
	if t == nil {
		return nil, TextMissing
	}
	if r, ok := t.loaded[name]; ok {
		return r.text, r.reason
	}
	if t.loaded == nil {
		t.loaded = make(map[string]*textResult)
	}
	r := t.load(name)
	t.loaded[name] = r
	return r.text, r.reason
}

// load reads the candidates of name, keeping those whose content hashes
// to their file's name.
func (t *Texts) load(name string) *textResult {
	if !isHexName(name) {
		return &textResult{reason: TextMissing}
	}
	var found *VersionText
	for _, path := range t.files[name] {
		sum := filepath.Base(path)
		if found != nil && found.SHA256 == sum {
			continue // the same version kept by another instance
		}
		body, err := readSmall(path)
		if err != nil {
			t.Skipped++
			continue
		}
		got := sha256.Sum256(body)
		if hex.EncodeToString(got[:]) != sum {
			t.Mismatched++
			continue
		}
		if found != nil {
			return &textResult{reason: TextAmbiguous}
		}
		if t.bytes+int64(len(body)) > maxTextBytes {
			return &textResult{reason: TextNotLoaded}
		}
		t.bytes += int64(len(body))
		found = newVersionText(name, sum, body)
	}
	if found == nil {
		return &textResult{reason: TextMissing}
	}
	return &textResult{text: found}
}

// readSmall reads a file of at most MaxTextSize octets.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxTextSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxTextSize {
		return nil, errors.New("larger than a robots.txt the handler keeps")
	}
	return b, nil
}

// The names of versions that are no file (the handler's VersionName): what
// a crawler was served when robots.txt answered 4xx, could not be reached,
// or was to be read as disallowing everything.
const (
	// VersionUnavailable: robots.txt answered with a client error (4xx).
	VersionUnavailable = "unavailable"
	// VersionUnreachable: robots.txt could not be fetched.
	VersionUnreachable = "unreachable"
	// VersionDisallowAll: everything was disallowed.
	VersionDisallowAll = "disallow_all"
)

func isHexSum(s string) bool { return len(s) == 64 && isHexName(s) }

// isHexName reports whether s is lower-case hex digits.
func isHexName(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdef") == ""
}

// stats says what was found; a nil Texts found nothing.
func (t *Texts) stats() TextStats {
	if t == nil {
		return TextStats{}
	}
	st := TextStats{Storage: t.Dirs, Skipped: t.Skipped, Mismatched: t.Mismatched}
	for name, r := range t.loaded {
		if r.text != nil {
			st.Read = append(st.Read, name)
			continue
		}
		if st.Missing == nil {
			st.Missing = make(map[string]string)
		}
		st.Missing[name] = r.reason
	}
	slices.Sort(st.Read)
	return st
}
