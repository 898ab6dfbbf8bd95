package enforce

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestLedgerBounds checks the ledger's bounds: it never holds more than
// its max, nor more than perGroup entries of one group, and a group that
// floods it pushes out only its own entries.
func TestLedgerBounds(t *testing.T) {
	l := newLedger[string, int](100, 10)
	for i := range 50 {
		*l.put(fmt.Sprintf("quiet%d", i), fmt.Sprintf("g%d", i), nil) = i
	}
	for i := range 10_000 {
		l.put(fmt.Sprintf("flood%d", i), "flood", nil)
		if l.len() > 100 || l.groupLen("flood") > 10 {
			t.Fatalf("after %d: %d entries, %d of the flood's", i, l.len(), l.groupLen("flood"))
		}
	}
	for i := range 50 {
		if v, ok := l.get(fmt.Sprintf("quiet%d", i)); !ok || *v != i {
			t.Errorf("quiet%d pushed out by one group's flood", i)
		}
	}
	// The newest of the flood are those held.
	for i := 9_990; i < 10_000; i++ {
		if _, ok := l.get(fmt.Sprintf("flood%d", i)); !ok {
			t.Errorf("flood%d, among the newest, not held", i)
		}
	}
}

// TestLedgerOldestFirst checks that a full ledger lets its oldest entry
// go, that putting a key again makes it the newest, and that remove and
// evicted keep the lists and counts right, against a plain model.
func TestLedgerOldestFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	l := newLedger[int, int](16, 4)
	var order []int           // the model: keys, oldest first
	group := map[int]string{} // and their groups
	for step := range 20_000 {
		k := r.IntN(40)
		g := fmt.Sprint(k % 7)
		if r.IntN(5) == 0 {
			l.remove(k)
			order = remove(order, k)
			continue
		}
		var gone []int
		l.put(k, g, func(k int, _ *int) { gone = append(gone, k) })
		want := modelPut(&order, group, k, g, 16, 4)
		if fmt.Sprint(gone) != fmt.Sprint(want) {
			t.Fatalf("step %d: put(%d) evicted %v, want %v", step, k, gone, want)
		}
		var got []int
		l.each(func(k int, _ *int) bool { got = append(got, k); return true })
		if fmt.Sprint(got) != fmt.Sprint(order) {
			t.Fatalf("step %d: ledger %v, model %v", step, got, order)
		}
	}
}

// modelPut is put on a slice, oldest first.
func modelPut(order *[]int, group map[int]string, k int, g string, max, perGroup int) (gone []int) {
	for _, o := range *order {
		if o == k {
			*order = append(remove(*order, k), k)
			return nil
		}
	}
	n := 0
	for _, o := range *order {
		if group[o] == g {
			n++
		}
	}
	if n >= perGroup {
		for _, o := range *order {
			if group[o] == g {
				gone = append(gone, o)
				*order = remove(*order, o)
				break
			}
		}
	} else if len(*order) >= max {
		gone = append(gone, (*order)[0])
		*order = (*order)[1:]
	}
	group[k] = g
	*order = append(*order, k)
	return gone
}

func remove(s []int, k int) []int {
	out := s[:0:0]
	for _, o := range s {
		if o != k {
			out = append(out, o)
		}
	}
	return out
}
