package fastlane

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/batonrl/baton/registry"
)

// DefaultMaxBytes is the memory that a vector may take when its maker names no limit
// (Admit's maxBytes 0): 4 GiB.
const DefaultMaxBytes int64 = 4 << 30

// minMaxWorkers is the least MaxWorkers returns, whatever the CPUs.
const minMaxWorkers = 256

// ErrLimit: a vector would be over a limit: its estimated memory (*SizeError) or its
// workers (MaxWorkers).
var ErrLimit = errors.New("fastlane: over a limit")

// MaxWorkers returns the most workers a vector may have: four per CPU that the Go
// runtime uses (runtime.GOMAXPROCS), and at least 256. Workers beyond the CPUs buy no
// speed (a vector's workers compute); the bound stops a count typed by mistake from
// starting a goroutine per copy.
func MaxWorkers() int { return max(minMaxWorkers, 4*runtime.GOMAXPROCS(0)) }

// SizeError is a vector whose copies would take more memory than its limit, as
// estimated by Admit before anything is allocated.
type SizeError struct {
	// Env names the environment; Copies is the number of copies asked for.
	Env    string
	Copies int
	// CopyBytes is the estimated memory of one copy; Limit the vector's limit.
	CopyBytes, Limit int64
}

// Bytes is the estimated memory of every copy: Copies × CopyBytes, saturated at the
// largest int64.
func (e *SizeError) Bytes() int64 {
	if e.CopyBytes > 0 && int64(e.Copies) > math.MaxInt64/e.CopyBytes {
		return math.MaxInt64
	}
	return int64(e.Copies) * e.CopyBytes
}

func (e *SizeError) Error() string {
	copies, take := "copies", "take"
	if e.Copies == 1 {
		copies, take = "copy", "takes"
	}
	return fmt.Sprintf("%v: %d %s (num_envs) of %s %s an estimated %s (%s a copy), over the limit of %s "+
		"(max_bytes): make fewer copies, or raise the limit", ErrLimit, e.Copies, copies, e.Env, take,
		byteSize(e.Bytes()), byteSize(e.CopyBytes), byteSize(e.Limit))
}

// Unwrap returns ErrLimit.
func (e *SizeError) Unwrap() error { return ErrLimit }

// Admit checks, before the caller allocates a vector's buffers, that n copies of the
// named environment on the given number of workers stay within the limits:
//
//   - workers at most MaxWorkers (ErrLimit) and not negative (ErrArgument);
//   - the vector's estimated memory, n × CopyBytes, at most maxBytes (a *SizeError,
//     which wraps ErrLimit); maxBytes 0 means DefaultMaxBytes, a negative one is
//     ErrArgument.
//
// The estimate of one copy is the memory its environment allocates when it is made
// and reset (measured on probe environments, counting every byte allocated, so a
// little more than what stays live), plus each agent's observation and mask rows
// twice (the caller's buffers and the vector's own) and 64 bytes of bookkeeping per
// agent and per copy. An unknown name or a bad configuration wraps ErrConfig.
//
// Admit makes environments but keeps none; it is safe for concurrent use.
func Admit(reg *registry.Registry, name string, config []byte, n, workers int, maxBytes int64) error {
	switch {
	case n < 1:
		return fmt.Errorf("%w: %d copies; want 1 or more", ErrArgument, n)
	case workers < 0:
		return fmt.Errorf("%w: %d workers; want 0 or more", ErrArgument, workers)
	case workers > MaxWorkers():
		return fmt.Errorf("%w: %d workers; the most a vector may have is %d (4 per CPU, or %d where that is more)",
			ErrLimit, workers, MaxWorkers(), minMaxWorkers)
	case maxBytes < 0:
		return fmt.Errorf("%w: a memory limit (max_bytes) of %d bytes; want 0 (the default, %s) or more",
			ErrArgument, maxBytes, byteSize(DefaultMaxBytes))
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	f, l, err := open(reg, name, config)
	if err != nil {
		return err
	}
	per := copyBytes(f, l)
	if int64(n) > maxBytes/per {
		return &SizeError{Env: name, Copies: n, CopyBytes: per, Limit: maxBytes}
	}
	return nil
}

// copyBytes is the estimated memory of one copy of an environment of f and layout l;
// see Admit. It is at least 1.
func copyBytes(f registry.Factory, l Layout) int64 {
	b := probeBytes(f) + 64
	for _, a := range l.Agents {
		b += 2*(4*int64(a.ObsDim)+int64(a.MaskLen)) + 64
	}
	return max(b, 1)
}

// probeBytes is the memory that making and resetting an environment of f allocates:
// the smaller of two tries, so that what another goroutine allocates meanwhile (the
// process's other vectors) counts only if it does so both times.
func probeBytes(f registry.Factory) int64 {
	best := int64(math.MaxInt64)
	var ms runtime.MemStats
	for range 2 {
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		m, err := f.NewEnv(registry.EnvOptions{})
		if err == nil {
			_, _ = m.Reset(0) // its errors are the vector's to report
		}
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(m)
		best = min(best, int64(ms.TotalAlloc-before))
	}
	return best
}

// byteSize writes b bytes for people: "512 B", "5.9 KiB", "4 GiB".
func byteSize(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, i := float64(b), -1
	for v >= unit && i < 5 {
		v /= unit
		i++
	}
	s := fmt.Sprintf("%.1f", v)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s + " " + []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}[i]
}
