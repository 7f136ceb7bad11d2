//go:build !unix

package bench

import "time"

// processCPU reports that the process's CPU time is not read on this system.
func processCPU() (cpu time.Duration, ok bool) { return 0, false }
