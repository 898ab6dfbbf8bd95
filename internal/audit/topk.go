package audit

import (
	"cmp"
	"slices"
)

// spaceSaving counts the most frequent strings of a stream in a fixed
// number of counters, by the Space-Saving algorithm (Metwally, Agrawal and
// El Abbadi, 2005): a string that has a counter adds one to it; one that
// has none, while all are taken, takes over the smallest counter, adding
// one to that counter's count and remembering the count it inherited as
// its error. After n additions with k counters:
//
//   - every string seen more than n/k times has a counter;
//   - a counter's count is at least the true count of its string, and at
//     most its error above it;
//   - every error is at most n/k.
//
// The counters are a min-heap by count, so each addition costs O(log k).
type spaceSaving struct {
	k      int
	index  map[string]int // string to its position in heap
	heap   []pathCounter
	total  int64
	evicts int64
}

type pathCounter struct {
	path  string
	count int64
	err   int64
}

func newSpaceSaving(k int) *spaceSaving {
	return &spaceSaving{k: k, index: make(map[string]int, k)}
}

// add counts one occurrence of p. p is copied only when it takes a counter.
func (s *spaceSaving) add(p []byte) {
	s.total++
	if i, ok := s.index[string(p)]; ok {
		s.heap[i].count++
		s.down(i)
		return
	}
	if len(s.heap) < s.k {
		path := string(p)
		s.heap = append(s.heap, pathCounter{path: path, count: 1})
		s.index[path] = len(s.heap) - 1
		s.up(len(s.heap) - 1)
		return
	}
	// Take over the smallest counter, at the root.
	s.evicts++
	root := &s.heap[0]
	delete(s.index, root.path)
	root.path = string(p)
	root.err = root.count
	root.count++
	s.index[root.path] = 0
	s.down(0)
}

func (s *spaceSaving) less(i, j int) bool { return s.heap[i].count < s.heap[j].count }

func (s *spaceSaving) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.index[s.heap[i].path] = i
	s.index[s.heap[j].path] = j
}

func (s *spaceSaving) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *spaceSaving) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			return
		}
		s.swap(i, m)
		i = m
	}
}

// top returns the n largest counts, largest first, ties by path.
func (s *spaceSaving) top(n int) []PathCount {
	all := make([]PathCount, 0, len(s.heap))
	for _, c := range s.heap {
		all = append(all, PathCount{Path: c.path, Count: c.count, Error: c.err})
	}
	slices.SortFunc(all, func(a, b PathCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	return all[:min(n, len(all))]
}
