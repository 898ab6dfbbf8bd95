//go:build race

package caddymodule

// raceEnabled reports whether the tests run under the race detector,
// whose sync.Pool drops a share of what is put back on purpose.
const raceEnabled = true
