//go:build unix

package datalog_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, every thread and the
// kernel's time in its system calls included, and true.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
