package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxLineLength bounds a line: a record is about a kilobyte (its
// User-Agent is cut at 512 octets) plus its request target, which Caddy's
// default 1 MiB limit on request headers bounds. A longer line is skipped
// as SkipTooLong, and costs no more memory than this.
const MaxLineLength = 2 << 20

// readBufferSize is the size of the read buffer: large enough that most
// reads fill it with many lines at once.
const readBufferSize = 256 << 10

// Magic numbers of compressed files (RFC 1952 §2.3.1; RFC 8878 §3.1.1).
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// LineCounts counts the lines of one input, or of all.
type LineCounts struct {
	// Lines read, including those skipped.
	Lines int64 `json:"lines"`
	// Records are the compliance records read, Filtered those of them
	// that the Filter left out.
	Records  int64 `json:"records"`
	Filtered int64 `json:"filtered"`
	// Fetches are the robots.txt serves read (lines "robots.txt served",
	// record version 2), FetchesFiltered those of them that the Filter
	// left out.
	Fetches         int64 `json:"robots_fetches"`
	FetchesFiltered int64 `json:"robots_fetches_filtered"`
	// Duplicates are the records not counted, another record of the same
	// request being counted (see MergeStats.Duplicates).
	Duplicates int64 `json:"duplicates,omitempty"`
	// Skipped lines, by SkipKind name.
	Skipped map[string]int64 `json:"skipped,omitempty"`
}

func (c *LineCounts) skip(k SkipKind) {
	if c.Skipped == nil {
		c.Skipped = make(map[string]int64, NumSkipKinds)
	}
	c.Skipped[k.String()]++
}

func (c *LineCounts) addTo(t *LineCounts) {
	t.Lines += c.Lines
	t.Records += c.Records
	t.Filtered += c.Filtered
	t.Fetches += c.Fetches
	t.FetchesFiltered += c.FetchesFiltered
	t.Duplicates += c.Duplicates
	for k, n := range c.Skipped {
		if t.Skipped == nil {
			t.Skipped = make(map[string]int64, NumSkipKinds)
		}
		t.Skipped[k] += n
	}
}

// InputStats describes one input that was read.
type InputStats struct {
	// Name is the input's name as given: a file name, or "-" for standard
	// input.
	Name string `json:"name"`
	// Gzip tells that the input was gzip-compressed, as found by its first
	// octets (whatever its name).
	Gzip bool `json:"gzip,omitempty"`
	// Bytes is how many octets of log were read (after decompression).
	Bytes int64 `json:"bytes"`
	LineCounts
	// Warning says why the input ended early, or why it was not read; its
	// lines up to there are counted.
	Warning string `json:"warning,omitempty"`
}

// ReadFile reads a log file, plain or gzip-compressed. Errors opening or
// reading it are returned; see Read.
func (a *Auditor) ReadFile(name string) (InputStats, error) {
	f, err := os.Open(name)
	if err != nil {
		return InputStats{Name: name}, err
	}
	defer f.Close()
	return a.Read(name, f)
}

// Read reads the log r, naming it name, and counts its records and
// robots.txt serves. A gzip stream (found by its magic number) is
// decompressed. Other lines are counted and skipped; a compressed stream that
// ends early or is damaged ends the input with a Warning in the returned
// stats (and the report), keeping what was read. Only a failure of r
// itself is returned as an error; what was read before it still counts.
func (a *Auditor) Read(name string, r io.Reader) (InputStats, error) {
	st := InputStats{Name: name}
	defer func() { a.inputs = append(a.inputs, st) }()
	err := a.read(name, r, &st, a.line)
	st.LineCounts.addTo(&a.total)
	return st, err
}

// read reads the log r into st, handing each line to line.
func (a *Auditor) read(name string, r io.Reader, st *InputStats, line func([]byte, *LineCounts)) error {
	a.inputName, a.inputNumbered = name, false
	src := &errReader{r: r}
	br := bufio.NewReaderSize(src, readBufferSize)
	magic, _ := br.Peek(len(zstdMagic))
	lines := br
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		st.Gzip = true
		zr, err := gzip.NewReader(br)
		if err != nil {
			if src.err != nil {
				return fmt.Errorf("reading %s: %w", name, src.err)
			}
			st.Warning = fmt.Sprintf("damaged gzip header: %v; nothing read", err)
			return nil
		}
		defer zr.Close()
		lines = bufio.NewReaderSize(zr, readBufferSize)
	case bytes.Equal(magic, zstdMagic):
		st.Warning = "zstd-compressed, which is not read: decompress it (zstd -dc) and pass it on standard input"
		return nil
	}
	err := a.lines(lines, st, line)
	switch {
	case err == nil:
		return nil
	case src.err != nil:
		return fmt.Errorf("reading %s: %w", name, src.err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		st.Warning = fmt.Sprintf("the gzip stream ends early, in line %d; the rest is lost", st.Lines)
	default:
		st.Warning = fmt.Sprintf("the gzip stream is damaged in line %d (%v); the rest is not read", st.Lines, err)
	}
	return nil
}

// lines reads lines from br until its end, or until the first error other
// than io.EOF, which it returns, handing each to line. A last line without
// a newline counts.
func (a *Auditor) lines(br *bufio.Reader, st *InputStats, line func([]byte, *LineCounts)) error {
	for {
		text, err := br.ReadSlice('\n')
		st.Bytes += int64(len(text))
		if err == bufio.ErrBufferFull {
			if text, err = a.longLine(br, text, st); text == nil {
				if err != nil {
					return eofIsNil(err)
				}
				continue
			}
		}
		if len(text) > 0 {
			line(text, &st.LineCounts)
		}
		if err != nil {
			return eofIsNil(err)
		}
	}
}

// longLine finishes a line longer than the read buffer, gathering it up to
// MaxLineLength. It returns the whole line, or nil when it was too long
// (skipped and counted).
func (a *Auditor) longLine(br *bufio.Reader, first []byte, st *InputStats) ([]byte, error) {
	a.long = append(a.long[:0], first...)
	tooLong := false
	for {
		more, err := br.ReadSlice('\n')
		st.Bytes += int64(len(more))
		if !tooLong && len(a.long)+len(more) <= MaxLineLength {
			a.long = append(a.long, more...)
		} else {
			tooLong = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			st.Lines++
			st.skip(SkipTooLong)
			if cap(a.long) > 4*readBufferSize {
				a.long = nil // keep a rare giant line from staying in memory
			}
			return nil, err
		}
		return a.long, err
	}
}

func eofIsNil(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// errReader remembers the first error of its reader other than io.EOF, so
// that a failure to read the input can be told from a damaged gzip stream.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}
