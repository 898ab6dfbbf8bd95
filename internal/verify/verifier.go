package verify

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
)

// maxConcurrentListFetches bounds range list fetches under way at once, so
// a start with a cold storage does not open a connection per list at once.
const maxConcurrentListFetches = 4

// A Verifier decides whether a client proves the product token it claims.
// Create one with New, call Start once, and Close when done. Its methods
// are safe for concurrent use.
type Verifier struct {
	cfg         Config
	tokens      *tokenTable
	lists       []*listState
	allSuffixes []string

	rangeMu  sync.Mutex // serializes rebuilds of token range tables
	fetchSem chan struct{}
	// listed answers ListedTokens, rebuilt with the token tables.
	listed atomic.Pointer[listedTable]

	dns      *dnsCache
	dnsLimit *tokenBucket
	dnsQueue chan dnsJob
	// coarse is the time (Unix ns) as of the last coarseTick when the real
	// clock is in use, 0 otherwise (see checkDNS).
	coarse    atomic.Int64
	realClock bool

	wba *wbaState // nil when Web Bot Auth is off

	notifyMu sync.Mutex
	notify   chan struct{} // closed and replaced when an answer comes in

	startOnce sync.Once
	asked     atomic.Bool // with StartOnUse: the background work is started
	closeOnce sync.Once
	closed    atomic.Bool
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// New validates cfg and builds a Verifier. It reads the local files, the
// range lists and the pinned key sets, so that the first claim after a
// start is judged by them, and fails, naming the file and line, on one
// that is missing or malformed; it does no network I/O: lists, DNS and
// key directories are fetched only after Start.
func New(cfg Config) (*Verifier, error) {
	realClock := cfg.Now == nil
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	v := &Verifier{
		cfg:       cfg,
		tokens:    newTokenTable(),
		fetchSem:  make(chan struct{}, maxConcurrentListFetches),
		dns:       newDNSCache(cfg.DNSCacheSize),
		dnsLimit:  newTokenBucket(cfg.DNSRate, cfg.DNSBurst),
		dnsQueue:  make(chan dnsJob, dnsQueueSize),
		notify:    make(chan struct{}),
		realClock: realClock,
	}
	v.buildLists()
	if err := v.loadFiles(); err != nil {
		return nil, err
	}
	v.buildReverseDNS()
	if cfg.WebBotAuth {
		if v.wba, err = newWBAState(v); err != nil {
			return nil, err
		}
	}
	v.tokens.freeze()
	return v, nil
}

// buildLists attaches range lists to tokens: the built-in table, except
// for tokens an override names, then the overrides. A list no token uses
// is not kept, so it is never fetched.
func (v *Verifier) buildLists() {
	overridden := make(map[string]bool)
	for _, o := range v.cfg.RangeOverrides {
		overridden[lowerASCII(o.Token)] = true
	}
	table := builtinLists
	if v.cfg.lists != nil {
		table = v.cfg.lists
	}
	if v.cfg.NoBuiltinLists {
		table = nil
	}
	for _, pl := range table {
		l := &listState{name: pl.Name, key: pl.Name, source: pl.URL}
		for _, tok := range pl.Tokens {
			if !overridden[lowerASCII(tok)] {
				l.tokens = append(l.tokens, v.tokens.add(tok))
			}
		}
		v.attach(l)
	}
	custom := make(map[string]*listState)
	var order []*listState
	for _, o := range v.cfg.RangeOverrides {
		l := custom[o.Source]
		if l == nil {
			l = &listState{name: "custom", key: customKey(o.Source), source: o.Source, isFile: !isURL(o.Source)}
			custom[o.Source] = l
			order = append(order, l)
		}
		l.tokens = append(l.tokens, v.tokens.add(o.Token))
	}
	for _, l := range order { // once all their tokens are known, in config order
		v.attach(l)
	}
}

func (v *Verifier) attach(l *listState) {
	if len(l.tokens) == 0 {
		return
	}
	v.lists = append(v.lists, l)
	for _, e := range l.tokens {
		e.lists = append(e.lists, l)
	}
}

// buildReverseDNS attaches reverse DNS suffixes: built-in, then the
// configured ones, which replace a token's built-in suffixes.
func (v *Verifier) buildReverseDNS() {
	if !v.cfg.NoBuiltinReverseDNS {
		for _, d := range builtinReverseDNS {
			for _, tok := range d.Tokens {
				if _, over := v.cfg.ReverseDNS[tok]; over || v.hasOverride(tok) {
					continue
				}
				e := v.tokens.add(tok)
				for _, s := range d.Suffixes {
					n, _ := normalizeSuffix(s)
					e.suffixes = append(e.suffixes, n)
				}
			}
		}
	}
	keys := make([]string, 0, len(v.cfg.ReverseDNS))
	for tok := range v.cfg.ReverseDNS {
		keys = append(keys, tok)
	}
	sort.Strings(keys)
	for _, tok := range keys {
		e := v.tokens.add(tok)
		e.suffixes = nil
		for _, s := range v.cfg.ReverseDNS[tok] {
			n, _ := normalizeSuffix(s)
			e.suffixes = append(e.suffixes, n)
		}
	}
	seen := make(map[string]bool)
	for _, e := range v.tokens.byName {
		for _, s := range e.suffixes {
			if !seen[s] {
				seen[s] = true
				v.allSuffixes = append(v.allSuffixes, s)
			}
		}
	}
	sort.Strings(v.allSuffixes)
}

// hasOverride reports whether cfg.ReverseDNS names tok in another case.
func (v *Verifier) hasOverride(tok string) bool {
	for k := range v.cfg.ReverseDNS {
		if lowerASCII(k) == lowerASCII(tok) {
			return true
		}
	}
	return false
}

// used starts the background work on the first question, with
// StartOnUse.
func (v *Verifier) used() {
	if v.cfg.StartOnUse && !v.asked.Load() && v.asked.CompareAndSwap(false, true) {
		go v.Start()
	}
}

// Start loads the stored copies of the range lists, then starts the
// background work: list refreshes, reverse DNS
// lookups and key directory fetches. It returns without waiting for any
// network fetch. Calls after the first do nothing.
func (v *Verifier) Start() {
	v.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		v.cancel = cancel
		sctx, scancel := context.WithTimeout(ctx, storageTimeout)
		for _, l := range v.lists {
			v.loadStored(sctx, l) // local files were read by New
		}
		scancel()
		for _, l := range v.lists {
			v.wg.Add(1)
			go v.refreshLoop(ctx, l)
		}
		if v.realClock {
			v.coarse.Store(v.cfg.Now().UnixNano())
			v.wg.Add(1)
			go v.coarseClock(ctx)
		}
		for range v.cfg.DNSConcurrency {
			v.wg.Add(1)
			go v.dnsWorker(ctx)
		}
		if v.wba != nil {
			v.wg.Add(1)
			go v.wba.worker(ctx)
		}
	})
}

// Close stops all background work and waits for it to end. Verify still
// answers afterwards from what is loaded, but starts nothing new.
func (v *Verifier) Close() error {
	v.closeOnce.Do(func() {
		v.closed.Store(true)
		v.startOnce.Do(func() {}) // a Start after Close does nothing
		if v.cancel != nil {
			v.cancel()
		}
		v.wg.Wait()
	})
	return nil
}

// HasMethod reports whether some method can decide a claim of token
// (case-insensitive).
func (v *Verifier) HasMethod(token string) bool {
	e := v.tokens.get(token)
	return e != nil && e.hasMethod(v.wba != nil)
}

// Verify decides whether the client at addr proves token: verified by any
// method that applies, in the order the package documentation gives;
// forged only when every method that applies says so; otherwise Pending
// while an answer is on its way, or Unconfirmed when none will come in
// time. r may be nil; it is read only for the Web Bot Auth header fields.
// Verify never waits for the network.
func (v *Verifier) Verify(token string, addr netip.Addr, r *http.Request) Result {
	v.used()
	e := v.tokens.get(token)
	if e == nil || !e.hasMethod(v.wba != nil) {
		return Result{Outcome: Unverified}
	}
	var c combined
	if v.wba != nil && e.agents && r != nil {
		if res, decided := v.wba.verify(e, r, addr); decided {
			if res.Outcome == Verified {
				return res
			}
			c.add(res)
		}
	}
	if !addr.IsValid() {
		return c.result()
	}
	addr = unmap(addr)
	if len(e.lists) > 0 {
		switch hit, complete := e.inRanges(addr); {
		case hit:
			return Result{Outcome: Verified, Method: IPRanges}
		case complete:
			c.add(Result{Outcome: Forged, Method: IPRanges})
		default: // a list never loaded: it may hold the address
			c.add(Result{Outcome: Unconfirmed, Method: IPRanges})
		}
	}
	if len(e.suffixes) > 0 {
		out := v.checkDNS(e, addr)
		if out == Verified {
			return Result{Outcome: Verified, Method: ReverseDNS}
		}
		c.add(Result{Outcome: out, Method: ReverseDNS})
	}
	return c.result()
}

// VerifyNow answers like Verify, but waits while the answer is Pending or
// Unconfirmed: for a range list to load, a lookup to finish or a key
// directory to arrive, until ctx is done, when it answers Pending. Start
// must have been called. It is meant for a command line ("is this address
// this crawler?"), which may wait, not for requests, which may not.
func (v *Verifier) VerifyNow(ctx context.Context, token string, addr netip.Addr) (Result, error) {
	for {
		v.notifyMu.Lock()
		ch := v.notify
		v.notifyMu.Unlock()
		res := v.Verify(token, addr, nil)
		if res.Outcome == Unconfirmed {
			res.Outcome = Pending // the command waits for the answer
		}
		if res.Outcome != Pending {
			return res, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return res, fmt.Errorf("verify %s %s: %w", token, addr, ctx.Err())
		}
	}
}

// WaitLists waits until every range list has loaded, or been tried and
// failed, or ctx is done. Start must have been called. It is meant for a
// command line, as VerifyNow is.
func (v *Verifier) WaitLists(ctx context.Context) error {
	for {
		v.notifyMu.Lock()
		ch := v.notify
		v.notifyMu.Unlock()
		settled := true
		for _, l := range v.lists {
			settled = settled && (l.cur.Load() != nil || l.tried.Load())
		}
		if settled {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// broadcast wakes VerifyNow callers: some answer came in.
func (v *Verifier) broadcast() {
	v.notifyMu.Lock()
	close(v.notify)
	v.notify = make(chan struct{})
	v.notifyMu.Unlock()
}

func (v *Verifier) emit(ev Event) {
	if v.cfg.OnEvent != nil {
		v.cfg.OnEvent(ev)
	}
}

func (v *Verifier) reportErr(err error) {
	if v.cfg.OnError != nil {
		v.cfg.OnError(err)
	}
}

// recoverPanic, deferred at the top of a background goroutine, reports a
// panic instead of ending the process.
func (v *Verifier) recoverPanic(what string) {
	if p := recover(); p != nil {
		v.reportErr(fmt.Errorf("%s: panic: %v", what, p))
	}
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
