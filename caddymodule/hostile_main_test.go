package caddymodule

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

// The hostile tests (e2e_crash_test.go, e2e_target_test.go,
// e2e_flood_test.go, ...) attack a Caddy that runs as a process of its
// own: an attack that ends the process must fail the test that made it,
// not end the test binary with every other test. The caddy of ../cmd/caddy
// is built once per test binary, into a directory TestMain removes.

// hxBuildTimeout bounds the build of ../cmd/caddy: a link on a warm build
// cache takes seconds, a cold cache on a 2-core machine about 140 s (see
// README).
const hxBuildTimeout = 5 * time.Minute

// hxBuild is the caddy binary the hostile tests share.
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

// hxBinary returns the path of the caddy built from ../cmd/caddy, building
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
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/caddy").CombinedOutput()
		if err != nil {
			hxBuild.err = fmt.Errorf("go build ../cmd/caddy: %v\n%s", err, out)
			return
		}
		hxBuild.bin = bin
		t.Logf("built ../cmd/caddy in %v", time.Since(start).Round(time.Millisecond))
	})
	if hxBuild.err != nil {
		t.Fatal(hxBuild.err)
	}
	return hxBuild.bin
}
