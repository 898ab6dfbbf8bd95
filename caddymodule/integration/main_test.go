// Package integration holds the tests that run a real Caddy: loaded in
// this process with caddy.Load (e2e_*_test.go, lifecycle_test.go), or
// built from ../../cmd/caddy and run as a process of its own (the hostile
// tests, hostile_*_test.go and e2e_crash_test.go, e2e_target_test.go,
// e2e_flood_test.go, ...; adapt_binary_test.go, commands_binary_test.go,
// e2e_check_test.go), in front of origins on 127.0.0.1. They see the
// module only as Caddy and its users do: its configuration, its
// responses, logs and metrics, and the internal packages it is built on.
// The unit tests stay beside the code, in caddymodule and robotscmd.
package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A hostile test attacks a Caddy that runs as a process of its own: an
// attack that ends the process must fail the test that made it, not end
// the test binary with every other test. The binary is built once per
// test binary, into a directory TestMain removes.

// hxBuildTimeout bounds the build of ../../cmd/caddy: a link on a warm build
// cache takes seconds, a cold cache on a 2-core machine about 140 s (see
// README).
const hxBuildTimeout = 5 * time.Minute

// hxBuild is the caddy binary the tests of this package share.
var hxBuild struct {
	once sync.Once
	dir  string // removed by TestMain
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if hxBuild.dir != "" {
		os.RemoveAll(hxBuild.dir)
	}
	os.Exit(code)
}

// hxBinary returns the path of the caddy built from ../../cmd/caddy, building
// it on the first call.
func hxBinary(t testing.TB) string {
	t.Helper()
	hxBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "robots-enforce-hostile-")
		if err != nil {
			hxBuild.err = err
			return
		}
		hxBuild.dir = dir
		bin := filepath.Join(dir, "caddy")
		ctx, cancel := context.WithTimeout(context.Background(), hxBuildTimeout)
		defer cancel()
		start := time.Now()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../cmd/caddy").CombinedOutput()
		if err != nil {
			hxBuild.err = fmt.Errorf("go build ../../cmd/caddy: %v\n%s", err, out)
			return
		}
		hxBuild.bin = bin
		t.Logf("built ../../cmd/caddy in %v", time.Since(start).Round(time.Millisecond))
	})
	if hxBuild.err != nil {
		t.Fatal(hxBuild.err)
	}
	return hxBuild.bin
}
