// Package heapsize counts what values hold on Go's heap, as its allocator
// gives it: a request of n octets takes the size class n rounds up to
// (internal/runtime/gc/sizeclasses.go), a block of pointer-holding
// memory over 512 octets an 8-octet header before it, and a request past
// 32 KiB less that header whole pages of 8 KiB. Counting by these rules, the sizes of a value's
// allocations add up to what the runtime's heap figures say it holds
// (the tests of package rules and package robotstxt check the two
// against each other), which a bound on memory needs: a table's length
// alone undercounts small allocations by up to a half.
package heapsize

// The allocator's constants (Go 1.22 and later, internal/runtime/gc).
const (
	maxSmallSize     = 32 << 10 // larger requests take whole pages
	pageSize         = 8 << 10
	mallocHeaderSize = 8   // before a pointer-holding block past minHeaderSize
	minHeaderSize    = 512 // blocks up to this size have no header
	tinySize         = 16  // pointer-free requests below it share 16-octet blocks
)

// classes are the sizes of the allocator's size classes, smallest first.
var classes = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728,
	10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// Alloc returns the octets the heap gives a request of n octets, pointers
// saying whether the memory holds pointers. Zero octets take none, and a
// pointer-free request of fewer than 16 octets its size rounded up to 8:
// the tiny allocator packs such requests into shared blocks of 16, as
// their alignment allows, and about half a block is what one takes over
// the files of testdata/robots (the race detector turns it off, and each
// then takes a size class of its own).
func Alloc(n int, pointers bool) int {
	if n <= 0 {
		return 0
	}
	if n > maxSmallSize-mallocHeaderSize {
		return (n + pageSize - 1) / pageSize * pageSize
	}
	if !pointers && n < tinySize {
		return (n + 7) &^ 7
	}
	if pointers && n > minHeaderSize {
		n += mallocHeaderSize
	}
	// A binary search of the classes: at most seven steps.
	lo, hi := 0, len(classes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if classes[mid] < n {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return classes[lo]
}

// Slice returns what a slice's backing array of capacity c, of elements
// of size octets, holds.
func Slice(c int, size uintptr, pointers bool) int { return Alloc(c*int(size), pointers) }

// String returns what a string of its own allocation holds.
func String(s string) int { return Alloc(len(s), false) }

// Map returns about what a map of n entries, each key and value
// keyValue octets together, holds: Go's maps (Go 1.24 and later) keep
// groups of 8 slots, each group with a control word, at most 7/8 full,
// in tables of up to 1,024 slots under a directory; a map of at most 8
// entries is one group, and an empty one its header alone.
func Map(n int, keyValue uintptr, pointers bool) int {
	const (
		header      = 48 // the map's own struct
		groupSlots  = 8
		maxTable    = 1024
		tableHeader = 32
	)
	group := 8 + groupSlots*int(keyValue)
	switch {
	case n <= 0:
		return Alloc(header, true)
	case n <= groupSlots:
		return Alloc(header, true) + Alloc(group, pointers)
	}
	slots := 16
	for slots*7/8 < n {
		slots *= 2
	}
	tables := max(1, slots/maxTable)
	perTable := slots / tables
	held := Alloc(header, true) + Alloc(8*tables, true)
	held += tables * (Alloc(tableHeader, true) + Alloc(perTable/groupSlots*group, pointers))
	return held
}
