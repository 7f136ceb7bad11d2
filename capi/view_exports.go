package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/internal/fastlane"
)

// baton_view_new makes n copies of the view of one agent (agent) of a multi-agent
// environment, the other agents driven by the registry's named policies: policies is
// a JSON object of agent name to policy name, or to an integer k for the caller's
// policy fn called with agent index k (see callback.go's baton_policy_fn); an agent
// left out plays its default (NULL or "{}": every agent plays its default). Its
// buffers are baton_single_new's, hold included, plus spans (n int64s: each copy's
// span ticks after a step). It is stepped with baton_view_step and reset with
// baton_view_reset.
//
//export baton_view_new
func baton_view_new(name, config, agentName, policies *C.char, fn C.uintptr_t, n, workers, maxBytes C.int64_t,
	obs, final *C.float, masks *C.bool, rewards *C.double, term, trunc *C.bool, hold *C.int32_t, spans *C.int64_t,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, err := open(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	pol, funcs := map[string]string{}, map[string]agent.Policy{}
	if policies != nil {
		var raw map[string]any
		if err := json.Unmarshal([]byte(C.GoString(policies)), &raw); err != nil {
			return fail(fmt.Errorf("%w: policies: %w", fastlane.ErrConfig, err), nil, errbuf, errlen)
		}
		for k, v := range raw {
			switch v := v.(type) {
			case string:
				pol[k] = v
			case float64:
				if fn == 0 {
					return fail(fmt.Errorf("%w: policies: agent %q plays the caller's policy %v, and there is none", fastlane.ErrConfig, k, v), nil, errbuf, errlen)
				}
				funcs[k] = &callbackPolicy{fn: fn, index: int64(v), name: k}
			default:
				return fail(fmt.Errorf("%w: policies: agent %q: %v is neither a policy name nor an index", fastlane.ErrConfig, k, v), nil, errbuf, errlen)
			}
		}
	}
	l, err := fastlane.Describe(reg, nm, cfg)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	an := C.GoString(agentName)
	var a *fastlane.AgentLayout
	for i := range l.Agents {
		if l.Agents[i].Name == an {
			a = &l.Agents[i]
		}
	}
	if a == nil || n < 1 {
		return fail(fmt.Errorf("%w: %d copies of agent %q of %s", fastlane.ErrConfig, n, an, nm), nil, errbuf, errlen)
	}
	if err := admit(name, config, n, workers, maxBytes); err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	k := int(n)
	b := vector.Buffers{
		Obs: slice[float32](unsafe.Pointer(obs), k*a.ObsDim), FinalObs: slice[float32](unsafe.Pointer(final), k*a.ObsDim),
		Masks: slice[bool](unsafe.Pointer(masks), k*a.MaskLen), Rewards: slice[float64](unsafe.Pointer(rewards), k),
		Terminated: slice[bool](unsafe.Pointer(term), k), Truncated: slice[bool](unsafe.Pointer(trunc), k),
	}
	// The view keeps the context for its life (env.NewView); the library has no other.
	v, err := fastlane.NewView(context.Background(), reg, nm, cfg, an, pol, funcs, k, int(workers), b, slice[int64](unsafe.Pointer(spans), k),
		holdOption(hold, k))
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	*handle = C.int64_t(handles.Add(v))
	return 0
}

// baton_view_reset resets a view vector as baton_reset does; with fresh, every copy
// starts a new underlying episode (fastlane.View.Restart), else a copy goes on with its
// underlying episode where it can.
//
//export baton_view_reset
func baton_view_reset(h C.int64_t, seed C.uint64_t, fresh C.bool, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		w, ok := v.(*fastlane.View)
		if !ok {
			return fmt.Errorf("%w: handle %d is not a view", fastlane.ErrArgument, h)
		}
		agent = w.Agent
		if fresh {
			return w.Restart(context.Background(), uint64(seed))
		}
		return w.Reset(context.Background(), uint64(seed))
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}

// baton_view_step steps a view vector as baton_step_single steps a single-agent one.
//
//export baton_view_step
func baton_view_step(h C.int64_t, actions *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		w, ok := v.(*fastlane.View)
		if !ok {
			return fmt.Errorf("%w: handle %d is not a view", fastlane.ErrArgument, h)
		}
		agent = w.Agent
		return w.Step(context.Background(), slice[int64](unsafe.Pointer(actions), w.Len()))
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}
