//go:build !unix

package datalog_test

import "time"

// processCPU is not measured here: it returns false.
func processCPU() (time.Duration, bool) { return 0, false }
