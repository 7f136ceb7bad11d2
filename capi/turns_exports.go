package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/batonrl/baton/internal/fastlane"
)

// baton_turns_new makes one environment stepped turn by turn (internal/fastlane's
// Turns), for PettingZoo's APIs, writing each Turn into the caller's buffers per agent:
// obs and masks are tables of agents pointers (each agent's observation and mask), the
// others as fastlane.TurnBuffers lays them out. It is reset with baton_reset and
// stepped with baton_turns_step.
//
//export baton_turns_new
func baton_turns_new(name, config *C.char, agents C.int64_t, obs, masks *unsafe.Pointer,
	reported, started *C.bool, rewards *C.double, spans *C.int64_t, term, trunc *C.bool, ids, state *C.int64_t,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, l, err := describe(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if int(agents) != len(l.Agents) {
		return fail(fmt.Errorf("%w: buffers of %d agents for %s, of %d agents", fastlane.ErrArgument, agents, nm, len(l.Agents)), nil, errbuf, errlen)
	}
	na := len(l.Agents)
	b := fastlane.TurnBuffers{
		Obs: make([][]float32, na), Masks: make([][]bool, na),
		Reported: slice[bool](unsafe.Pointer(reported), na), Started: slice[bool](unsafe.Pointer(started), na),
		Rewards: slice[float64](unsafe.Pointer(rewards), na), Spans: slice[int64](unsafe.Pointer(spans), na),
		Terminated: slice[bool](unsafe.Pointer(term), na), Truncated: slice[bool](unsafe.Pointer(trunc), na),
		IDs: slice[int64](unsafe.Pointer(ids), na), State: slice[int64](unsafe.Pointer(state), 3),
	}
	ob, ms := slice[unsafe.Pointer](unsafe.Pointer(obs), na), slice[unsafe.Pointer](unsafe.Pointer(masks), na)
	for j, a := range l.Agents {
		b.Obs[j] = slice[float32](ob[j], a.ObsDim)
		b.Masks[j] = slice[bool](ms[j], a.MaskLen)
	}
	t, err := fastlane.NewTurns(reg, nm, cfg, b)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	*handle = C.int64_t(handles.Add(t))
	return 0
}

// baton_turns_step applies the action of the agent acting in a Turns.
//
//export baton_turns_step
func baton_turns_step(h C.int64_t, action C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		t, ok := v.(*fastlane.Turns)
		if !ok {
			return fmt.Errorf("%w: handle %d is not a Turns", fastlane.ErrArgument, h)
		}
		agent = t.Agent
		return t.Step(context.Background(), int64(action))
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}
