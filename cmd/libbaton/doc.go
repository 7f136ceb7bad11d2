// Command libbaton is the fast lane's C library: built with
//
//	go build -buildmode=c-shared -o libbaton.so ./cmd/libbaton
//
// (which Python's baton.vector does on first use, or python -m baton.build), it steps
// vectors of the environments that examples/catalog registers, in the process that
// loads it, writing their results into the caller's memory.
//
// Its C ABI passes no Go pointer out: a vector is an int64 handle. Every function
// returns 0 or an error code (internal/fastlane's Code: 1 configuration, 2 argument,
// 3 action, 4 copy, 5 state, 6 internal, 7 log, 8 limit) and, on an error, writes a NUL-terminated
// JSON report ({"message", "failures": [{"copy", "agent", "op", "reason", "panic"}]})
// into the caller's buffer err of errlen bytes, cut to fit.
//
//	int32 baton_describe(char *name, char *config, char *out, int64 outlen, char *err, int64 errlen)
//	int32 baton_admit(char *name, char *config, int64 n, int64 workers, int64 max_bytes,
//	        char *err, int64 errlen)
//	int32 baton_single_new(char *name, char *config, int64 n, int64 workers, int64 max_bytes,
//	        float *obs, float *final_obs, bool *masks, double *rewards,
//	        bool *terminated, bool *truncated, int64 *handle, char *err, int64 errlen)
//	int32 baton_multi_new(char *name, char *config, int64 n, int64 workers, int64 max_bytes, int64 agents,
//	        int64 **copies, float **obs, bool **masks, int64 **actions,
//	        int64 *counts, int64 *acting, double *rewards, int64 *spans, bool *terminated,
//	        bool *truncated, bool *ended, int64 *handle, char *err, int64 errlen)
//	int32 baton_reset(int64 handle, uint64 seed, char *err, int64 errlen)
//	int32 baton_step_single(int64 handle, int64 *actions, char *err, int64 errlen)
//	int32 baton_step_multi(int64 handle, char *err, int64 errlen)
//	int32 baton_view_new(char *name, char *config, char *agent, char *policies, void *fn,
//	        int64 n, int64 workers, int64 max_bytes, float *obs, float *final_obs, bool *masks, double *rewards,
//	        bool *terminated, bool *truncated, int64 *spans, int64 *handle, char *err, int64 errlen)
//	int32 baton_view_reset(int64 handle, uint64 seed, bool fresh, char *err, int64 errlen)
//	int32 baton_view_step(int64 handle, int64 *actions, char *err, int64 errlen)
//	int32 baton_turns_new(char *name, char *config, int64 agents, float **obs, bool **masks,
//	        bool *reported, bool *started, double *rewards, int64 *spans, bool *terminated,
//	        bool *truncated, int64 *ids, int64 *state, int64 *handle, char *err, int64 errlen)
//	int32 baton_turns_step(int64 handle, int64 action, char *err, int64 errlen)
//	int32 baton_async_new(char *name, char *config, int64 n, int64 workers, int64 max_bytes, int64 batch,
//	        int64 *ids, float *obs, float *final_obs, bool *masks, double *rewards,
//	        bool *terminated, bool *truncated, int64 *handle, char *err, int64 errlen)
//	int32 baton_async_multi_new(char *name, char *config, int64 n, int64 workers, int64 max_bytes,
//	        int64 batch, int64 agents, int64 *ids, int64 *acting, int64 *counts, int64 **copies,
//	        float **obs, bool **masks, double *rewards, int64 *spans, bool *terminated,
//	        bool *truncated, bool *ended, int64 *handle, char *err, int64 errlen)
//	int32 baton_async_send(int64 handle, int64 *actions, int64 *ids, int64 k, char *err, int64 errlen)
//	int32 baton_async_reset_copies(int64 handle, int64 *ids, int64 k, char *err, int64 errlen)
//	int32 baton_async_recv(int64 handle, int64 wait_us, bool *done, char *err, int64 errlen)
//	int32 baton_record(int64 handle, char *recording, char *err, int64 errlen)
//	int32 baton_record_close(int64 handle, char *err, int64 errlen)
//	int32 baton_close(int64 handle)
//	int64 baton_live(void)
//	int64 baton_goroutines(void)
//
// Limits. Every function that makes n copies (the _new functions but turns_new) first
// checks them as baton_admit does (internal/fastlane's Admit), and the caller may ask
// baton_admit itself before it allocates their buffers: workers must be at most 4 per
// CPU, or 256 where that is more, and the copies' estimated memory (each copy's
// environment, measured on probe environments, plus its rows of the buffers on both
// sides) at most max_bytes, 0 meaning 4 GiB. Over a limit is code 8, with a message
// that names the copies, the estimate and the limit.
//
// baton_view_new makes a vector of one agent of a multi-agent environment, the others
// driven by named policies or by the caller's function fn (policies is JSON: agent
// name to policy name, or to an index passed to fn; see view_exports.go and
// callback.go), for Python's baton.make; baton_turns_new one environment stepped turn
// by turn, for baton.pettingzoo (see turns_exports.go). fn is called on the thread
// that steps the vector, or on the vector's workers, during baton_view_step and
// baton_view_reset only.
//
// baton_record makes a vector of baton_single_new or baton_multi_new record its
// steps into an activity log from its next reset on (internal/fastlane's
// Recording), recording being JSON: {"dir": DIR, "run": NAME, "policies": {agent:
// name}} ("run" and "policies" optional); a vector of another kind gives code 1.
// baton_record_close ends the recording and closes the log, reporting its error (a
// log that could not be written gives code 7, as do the steps after the failure);
// baton_close closes it too, without a report.
//
// baton_describe writes the environment's layout as JSON into out (internal/fastlane's
// Layout): its kind ("single" or "multi") and each agent's observation and mask
// lengths, so that the caller allocates the buffers that the _new functions take, as
// internal/fastlane's vector.Buffers and MultiBuffers lay them out. The buffers must
// stay valid, and be written by nobody else while a call runs, until baton_close;
// the library keeps pointers to them (C memory, which cgo's rules let Go keep).
// baton_step_single reads its actions during the call only. baton_close frees the
// vector and stops its workers, and is harmless on a closed handle; baton_live counts
// the open vectors and baton_goroutines the library's goroutines (for leak checks).
//
// A Go panic at this boundary is recovered into CodeInternal. A process must not fork
// after loading the library and use it in the child: the Go runtime's threads do not
// survive fork.
package main
