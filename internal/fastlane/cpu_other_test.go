//go:build !unix

package fastlane_test

import "time"

// processCPU returns 0 where getrusage is not to be had: the benchmarks then report
// no CPU time.
func processCPU() time.Duration { return 0 }
