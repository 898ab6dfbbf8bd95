package verify

import (
	"crypto/sha256"
	"errors"
	"sync"
)

// Local range list files (the operator's own list for a token, an
// ip_ranges path). New reads each, and fails on one it cannot read or
// parse. After Start, each is looked at every fileCheckInterval, its
// modification time and size, and read again when they changed; a reload
// of the server's configuration reads them all at once (RecheckFiles),
// whatever they look like, so that an edit is in force when the new
// configuration serves. A file that no longer reads or parses keeps the
// last good copy in force, and says so (EventListFailed with Kept), once
// per version of the file; a copy that reads again says so too
// (EventListLoaded).

// fileState is what was last seen of a local list file.
type fileState struct {
	mu     sync.Mutex // serializes the looks at the file
	stamp  fileStamp  // of the last version read, well or not
	sum    [32]byte   // SHA-256 of the body in force
	failed bool       // the last read failed
}

// loadFiles reads the local range list files, for New.
func (v *Verifier) loadFiles() error {
	for _, l := range v.lists {
		if l.isFile {
			if err := v.checkFile(l, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// RecheckFiles reads every local range list file now, changed or not, and
// puts what it reads in force. A file that cannot be read or parsed keeps
// its last good copy in force; the errors, each naming its file (and the
// line, for a JSON error), are returned joined. A server calls it when a
// reload reuses the verifier.
func (v *Verifier) RecheckFiles() error {
	var errs []error
	for _, l := range v.lists {
		if !l.isFile {
			continue
		}
		if err := v.checkFile(l, true); err != nil {
			v.fileFailed(l, err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fileFailed tells OnEvent that l's file could not be read, and whether
// an earlier copy stays in force.
func (v *Verifier) fileFailed(l *listState, err error) {
	v.emit(Event{Kind: EventListFailed, List: l.name, URL: l.source, Tokens: l.tokenNames(), Err: err, Kept: l.cur.Load() != nil})
	l.tried.Store(true)
	v.broadcast()
}

// checkFile looks at l's file and reads it when its modification time or
// size changed since the last read, or always when force. A body equal to
// the one in force changes nothing, unless the read before it failed. It
// returns the error of a read that failed, once per version of the file;
// the caller tells it (fileFailed), but New, which fails with it.
func (v *Verifier) checkFile(l *listState, force bool) error {
	f := &l.file
	f.mu.Lock()
	defer f.mu.Unlock()
	// The stamp is taken before the read: an edit between the two is read
	// now, or seen by the next look.
	st, changed := statChanged(l.source, f.stamp)
	if !changed && !force && l.cur.Load() != nil {
		return nil
	}
	f.stamp = st // a version that fails is told once, not at every look
	body, rl, err := readRangeFile(l.source)
	if err != nil {
		f.failed = true
		return err
	}
	sum := sha256.Sum256(body)
	if sum == f.sum && !f.failed && l.cur.Load() != nil {
		return nil
	}
	f.sum, f.failed = sum, false
	v.setList(l, &listCopy{prefixes: rl.Prefixes, fetched: v.cfg.Now(), creation: rl.CreationTime})
	l.tried.Store(true)
	return nil
}
