package audit

import (
	"fmt"
	"io"
)

// Reading logs in two passes, for the merged audit of several instances.
// A denial is judged again against every version served to its crawler
// on any instance (rejudge.go), and a request recorded twice is counted
// once (duplicates.go): both need every serve and every denial before the
// first denial is counted, whatever the order of the logs. So the first
// pass reads the serves and notes the denials, and the second counts the
// records as Read does, with what the first found. Memory stays bounded
// (the first pass keeps what Read keeps of the serves, and
// MaxDuplicateChecks denials); the time is about twice a single pass's.

// An Input is a log to read in two passes: its name, as Read takes it,
// and a way to open it, once for each pass.
type Input struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// ReadInputs reads the logs in two passes (see above) and counts them as
// Read would, calling done with each one's stats after its second pass.
// Each input's second pass reads no more octets than its first did, so
// that a log still being written is read as one whole. An error opening
// or reading an input ends the reading; the inputs read before it still
// count.
func (a *Auditor) ReadInputs(inputs []Input, done func(InputStats)) error {
	a.dups = newDuplicates(a.maxDuplicates)
	sizes := make([]int64, len(inputs))
	for i, in := range inputs {
		n, err := a.prepare(in)
		if err != nil {
			return err
		}
		sizes[i] = n
	}
	a.dups.group(a.instances.name)
	a.merged = true
	for i, in := range inputs {
		rc, err := in.Open()
		if err != nil {
			return fmt.Errorf("reading %s: %w", in.Name, err)
		}
		st, err := a.Read(in.Name, io.LimitReader(rc, sizes[i]))
		rc.Close()
		if err != nil {
			return err
		}
		if done != nil {
			done(st)
		}
	}
	return nil
}

// prepare is an input's first pass: it keeps its serves and notes its
// denials, and returns how many octets it read.
func (a *Auditor) prepare(in Input) (int64, error) {
	rc, err := in.Open()
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", in.Name, err)
	}
	defer rc.Close()
	cr := &countingReader{r: rc}
	var st InputStats
	if err := a.read(in.Name, cr, &st, a.prepareLine); err != nil {
		return 0, err
	}
	return cr.n, nil
}

// prepareLine reads a line of the first pass.
func (a *Auditor) prepareLine(b []byte, _ *LineCounts) {
	rec := &a.rec
	if _, ok := a.scan.parseLine(b, rec); !ok {
		return
	}
	ns, timed := recordTime(rec)
	switch {
	case rec.served:
		if a.keepServed(rec, ns, timed) {
			a.fetches.add(rec, ns, timed, a.instanceOf(rec))
		}
	case rec.outcome != outAllowed && timed && a.keep(rec, ns, timed):
		a.dups.note(rec, ns, a.instanceOf(rec))
	}
}

// countingReader counts the octets read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
