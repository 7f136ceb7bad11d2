// Package capi is the fast lane's C library as an importable package: the C functions
// (baton_*) that step vectors of registered environments in the process that loads
// the library, writing their results into the caller's memory, and Use, which gives
// them their registry. Python's baton.vector, baton.make, baton.pettingzoo and
// baton.rllib load such a library with ctypes.
//
// What you touch here: call Use once, in the init of a main package of your own module
// built with -buildmode=c-shared, to hand the library your register functions; the
// baton_* functions are called from C or Python (baton.vector), never from Go.
//
// # A library of one's own environments
//
// Go exports the functions of an imported package from a -buildmode=c-shared build
// (only the header that the build writes leaves them out, and ctypes needs none), so
// a library is a main package of the user's module that hands capi its register
// functions:
//
//	// cmd/libkeydoor/main.go
//	package main
//
//	import (
//		"example.com/keydoor"
//		"github.com/batonrl/baton/capi"
//	)
//
//	func init() { capi.Use(keydoor.Register) }
//
//	func main() {}
//
// built with go build -buildmode=c-shared -o libkeydoor.so ./cmd/libkeydoor, or from
// Python with baton.build(module_dir=...), which caches it by the sources of every
// package it is built from. baton's own, cmd/libbaton, is capi.Use(catalog.Register);
// a library that wants baton's environments beside its own passes catalog.Register
// too. The library holds only what its register functions register.
//
// Use is called once, before the library's first call. A library given no Use, one
// given Use twice or after its first call, and a register function's error (such as
// two functions registering one name, which the error names with both functions) are
// errors that every call of the library reports (code 1, below; ErrNoRegistry,
// ErrUse, ErrRegister), rather than panics: a panic while a library loads would end
// the process that loads it.
//
// # The ABI
//
// The C signatures are the Go functions' own, with their cgo types:
// python/baton/_lane/abi.py is generated from the header that cgo writes for this
// package (capi/internal/genabi; go run ./capi/internal/genabi -header capi.h keeps
// the header, for C callers), and Python declares the functions from it alone.
//
// No Go pointer is passed out: a vector is an int64 handle. Every function but
// baton_close, baton_live and baton_goroutines returns 0 or an error code
// (internal/fastlane's Code: 1 configuration, 2 argument, 3 action, 4 copy, 5 state,
// 6 internal, 7 log, 8 limit) and, on an error, writes a NUL-terminated JSON report
// ({"message", "failures": [{"copy", "agent", "op", "reason", "panic"}]}) into the
// caller's buffer errbuf of errlen bytes, cut to fit.
//
// The functions:
//
//   - baton_envs lists the library's environments as JSON ({"envs": [{"name",
//     "description", "kind", "agents": [{... as baton_describe, "policies",
//     "default_policy"}], "error"}]}, "error" for one the fast lane cannot step), its
//     length written to *needed so that the caller can retry with room enough.
//   - baton_describe writes an environment's layout as JSON (internal/fastlane's
//     Layout): its kind ("single" or "multi") and each agent's observation and mask
//     lengths, Discrete actions and spaces, so that the caller allocates the buffers
//     that the _new functions take, as internal/fastlane's vector.Buffers and
//     MultiBuffers lay them out.
//   - baton_admit checks that n copies on workers workers stay within the limits, as
//     every _new function but baton_turns_new does before it makes them: workers at
//     most 4 per CPU, or 256 where that is more, and the copies' estimated memory
//     (each copy's environment, measured on probe environments, plus its rows of the
//     buffers on both sides) at most max_bytes, 0 meaning 4 GiB. Over a limit is code
//     8, with a message that names the copies, the estimate and the limit.
//   - baton_single_new and baton_multi_new make a vector of a single-agent
//     environment, or of a hierarchical one batched per acting agent;
//     baton_step_single and baton_step_multi step it and baton_reset resets it (copy i
//     with env/vector's EpisodeSeed(seed, i, 0)). baton_single_new's hold (NULL for
//     none) is one int32 per copy that the caller writes between steps: 0 steps the
//     copy, 1 leaves it as it is for the step, 2 ends its episode where it is and
//     resets it (internal/fastlane's WithHold): Gymnasium's next-step and disabled
//     auto-reset over the vector's same-step one.
//   - baton_view_new makes a vector of one agent of a multi-agent environment, the
//     others driven by named policies or by the caller's function fn (policies is
//     JSON: agent name to policy name, or to an index passed to fn, a
//     baton_policy_fn as callback.go declares it), for Python's baton.make;
//     baton_view_step and baton_view_reset step and reset it. fn is called on the
//     thread that steps the vector, or on the vector's workers, during those calls
//     only.
//   - baton_turns_new makes one environment stepped turn by turn, for baton.pettingzoo;
//     baton_turns_step applies the acting agent's action.
//   - baton_async_new and baton_async_multi_new make an asynchronous vector (EnvPool's
//     send and recv); see async_exports.go.
//   - baton_record makes a vector of baton_single_new or baton_multi_new record its
//     steps into an activity log from its next reset on (internal/fastlane's
//     Recording), recording being JSON: {"dir": DIR, "run": NAME, "policies": {agent:
//     name}} ("run" and "policies" optional); a vector of another kind gives code 1.
//     baton_record_close ends the recording and closes the log, reporting its error
//     (a log that could not be written gives code 7, as do the steps after the
//     failure); baton_close closes it too, without a report.
//   - baton_render draws one copy of a vector (of any kind but asynchronous) as
//     pixels, H×W×3 bytes of red, green and blue, rasterised in Go by env/raster from
//     the environment's frame (its SVG picture, else its text), for Gymnasium's
//     render_mode "rgb_array"; it writes the picture's height and width first, so
//     that a caller whose buffer is too small (code 2) retries with room enough.
//     baton_final_frames makes a vector with hold flags keep each copy's frame at the
//     end of its episodes, before the auto-reset, which baton_render draws with final.
//   - baton_schedule_parse reads and checks a schedule of tasks (a curriculum, as
//     runners.ParseSchedule) and writes its JSON with the defaults written out; a
//     schedule with problems is code 1, its report listing them under "problems"
//     ({"task", "name", "field", "reason"}). baton_schedule_start and
//     baton_schedule_next take it one trial at a time (runners.Schedule.Start and
//     Next), baton_schedule_random_task and baton_schedule_promote are
//     runners.RandomTask and runners.Promote: Python's baton.schedule holds no rules of
//     its own. They need no registry.
//   - baton_close frees a vector and stops its workers, and is harmless on a closed
//     handle; baton_live counts the open vectors and baton_goroutines the library's
//     goroutines (for leak checks).
//
// # Buffers, threads and processes
//
// The buffers a _new function takes must stay valid, and be written by nobody else
// while a call runs, until baton_close: the library keeps pointers to them (C memory,
// which cgo's rules let Go keep). baton_step_single reads its actions during the call
// only. The calls are short (a step of a thousand cart-poles takes tens of
// microseconds) and take no context that the caller could cancel. A vector is used by
// one thread at a time; distinct vectors may be used from distinct threads.
//
// A Go panic at this boundary is recovered into code 6 (internal). A process must not
// fork after loading the library and use it in the child: the Go runtime's threads do
// not survive fork. Each library is a Go runtime of its own, so a process may load
// several (baton's and a user's); a vector's handle means something to the library
// that made it only.
package capi
