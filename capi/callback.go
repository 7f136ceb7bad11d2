package capi

/*
#include <stdbool.h>
#include <stdint.h>

// baton_policy_fn is a policy of the caller's: it writes the action of agent (the
// index the caller gave it) for the observation obs of n floats and the mask of m
// bools (NULL when m is 0) into *action, and returns 0, or non-zero when it failed.
typedef int32_t (*baton_policy_fn)(int64_t agent, float *obs, int64_t n, bool *mask, int64_t m, int64_t *action);

static int32_t baton_call_policy(uintptr_t fn, int64_t agent, float *obs, int64_t n, bool *mask, int64_t m, int64_t *action) {
	return ((baton_policy_fn)fn)(agent, obs, n, mask, m, action);
}
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/batonrl/baton/agent"
)

// callbackPolicy is an agent.Policy of the caller's: a C function pointer, called with
// the index of the agent it plays. The observation and mask it is passed are valid
// during the call only.
type callbackPolicy struct {
	fn    C.uintptr_t
	index int64
	name  string
}

func (p *callbackPolicy) Act(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	var o *C.float
	var m *C.bool
	if len(obs) > 0 {
		o = (*C.float)(unsafe.Pointer(&obs[0]))
	}
	if len(mask) > 0 {
		m = (*C.bool)(unsafe.Pointer(&mask[0]))
	}
	var a C.int64_t
	if rc := C.baton_call_policy(p.fn, C.int64_t(p.index), o, C.int64_t(len(obs)), m, C.int64_t(len(mask)), &a); rc != 0 {
		return agent.RawAction{}, fmt.Errorf("the caller's policy of agent %q failed (code %d)", p.name, int32(rc))
	}
	return agent.Discrete(int64(a)), nil
}
