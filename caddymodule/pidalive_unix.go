//go:build unix

package caddymodule

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process with id pid runs on this host, as
// far as this process can see: signal 0 checks without sending. A
// process this one may not signal (EPERM) runs.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
