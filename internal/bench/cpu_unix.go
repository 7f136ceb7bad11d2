//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used so far, in user and in system
// mode, as getrusage(2) counts it (to the microsecond); ok is false where that cannot
// be read.
func processCPU() (cpu time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
