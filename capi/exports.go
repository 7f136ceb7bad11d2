package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
)

// The library's open vectors (its registry is lib, see registry.go). A C library has
// nowhere else to keep them.
var handles fastlane.Handles

// codeOf is fastlane.CodeOf, the registry's errors being configuration errors.
func codeOf(err error) fastlane.Code {
	if errors.Is(err, ErrNoRegistry) || errors.Is(err, ErrUse) || errors.Is(err, ErrRegister) {
		return fastlane.CodeConfig
	}
	return fastlane.CodeOf(err)
}

// fail writes err's report into the caller's buffer and returns its code.
func fail(err error, agent func(int) string, buf *C.char, n C.int64_t) C.int32_t {
	code := codeOf(err)
	if buf != nil && n > 0 {
		report := fastlane.Report(err, agent)
		out := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		k := copy(out[:len(out)-1], report)
		out[k] = 0
	}
	return C.int32_t(code)
}

// guard turns a panic at the boundary into CodeInternal.
func guard(code *C.int32_t, buf *C.char, n C.int64_t) {
	if r := recover(); r != nil {
		*code = fail(fmt.Errorf("fastlane: panic: %v", r), nil, buf, n)
	}
}

func slice[T any](p unsafe.Pointer, n int) []T {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

func open(name, config *C.char) (*registry.Registry, string, []byte, error) {
	reg, err := lib.get()
	if err != nil {
		return nil, "", nil, err
	}
	var cfg []byte
	if config != nil {
		cfg = []byte(C.GoString(config))
	}
	return reg, C.GoString(name), cfg, nil
}

// describe opens the environment that name and config name, as open does, and
// describes its layout.
func describe(name, config *C.char) (*registry.Registry, string, []byte, fastlane.Layout, error) {
	reg, nm, cfg, err := open(name, config)
	if err != nil {
		return nil, "", nil, fastlane.Layout{}, err
	}
	l, err := fastlane.Describe(reg, nm, cfg)
	return reg, nm, cfg, l, err
}

//export baton_describe
func baton_describe(name, config, out *C.char, outlen C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	_, _, _, l, err := describe(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	b, err := layoutJSON(l)
	if err == nil && len(b) >= int(outlen) {
		err = fmt.Errorf("%w: the layout takes %d bytes; the buffer has %d", fastlane.ErrArgument, len(b)+1, outlen)
	}
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(outlen))
	dst[copy(dst, b)] = 0
	return 0
}

// admit checks n copies of the environment that name and config name against the
// limits (fastlane.Admit), before anything is allocated for them.
func admit(name, config *C.char, n, workers, maxBytes C.int64_t) error {
	reg, nm, cfg, err := open(name, config)
	if err != nil {
		return err
	}
	return fastlane.Admit(reg, nm, cfg, int(n), int(workers), int64(maxBytes))
}

// baton_admit checks that n copies on workers workers stay within the limits, as
// every _new function does before it makes them, so that the caller can ask before
// it allocates their buffers.
//
//export baton_admit
func baton_admit(name, config *C.char, n, workers, maxBytes C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	if err := admit(name, config, n, workers, maxBytes); err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	return 0
}

// baton_single_new makes n copies of a single-agent environment writing into the
// buffers. hold, when not NULL, is n holds that the caller writes between steps to
// say what a step does with each copy: 0 steps it, 1 leaves it as it is, 2 ends its
// episode where it is (truncated) and resets it (internal/fastlane's WithHold).
//
//export baton_single_new
func baton_single_new(name, config *C.char, n, workers, maxBytes C.int64_t,
	obs, final *C.float, masks *C.bool, rewards *C.double, term, trunc *C.bool, hold *C.int32_t,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, l, err := describe(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if n < 1 || l.Kind != fastlane.KindSingle {
		return fail(fmt.Errorf("%w: %d copies of %s, a %v environment", fastlane.ErrArgument, n, nm, l.Kind), nil, errbuf, errlen)
	}
	if err := admit(name, config, n, workers, maxBytes); err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	k, a := int(n), l.Agents[0]
	b := vector.Buffers{
		Obs: slice[float32](unsafe.Pointer(obs), k*a.ObsDim), FinalObs: slice[float32](unsafe.Pointer(final), k*a.ObsDim),
		Masks: slice[bool](unsafe.Pointer(masks), k*a.MaskLen), Rewards: slice[float64](unsafe.Pointer(rewards), k),
		Terminated: slice[bool](unsafe.Pointer(term), k), Truncated: slice[bool](unsafe.Pointer(trunc), k),
	}
	v, err := fastlane.NewSingle(reg, nm, cfg, k, int(workers), b, holdOption(hold, k))
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	*handle = C.int64_t(handles.Add(v))
	return 0
}

//export baton_multi_new
func baton_multi_new(name, config *C.char, n, workers, maxBytes, agents C.int64_t,
	copies, obs, masks, actions *unsafe.Pointer,
	counts, acting *C.int64_t, rewards *C.double, spans *C.int64_t, term, trunc, ended *C.bool,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, l, err := describe(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if n < 1 || int(agents) != len(l.Agents) {
		return fail(fmt.Errorf("%w: %d copies and buffers of %d agents for %s, of %d agents", fastlane.ErrArgument, n, agents, nm, len(l.Agents)), nil, errbuf, errlen)
	}
	if err := admit(name, config, n, workers, maxBytes); err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	k, na := int(n), len(l.Agents)
	b := fastlane.MultiBuffers{
		Agents: make([]fastlane.AgentBuffers, na),
		Counts: slice[int64](unsafe.Pointer(counts), na), Acting: slice[int64](unsafe.Pointer(acting), k),
		Rewards: slice[float64](unsafe.Pointer(rewards), k*na), Spans: slice[int64](unsafe.Pointer(spans), k*na),
		Terminated: slice[bool](unsafe.Pointer(term), k*na),
		Truncated:  slice[bool](unsafe.Pointer(trunc), k*na), Ended: slice[bool](unsafe.Pointer(ended), k),
	}
	cs, ob, ms, as := slice[unsafe.Pointer](unsafe.Pointer(copies), na), slice[unsafe.Pointer](unsafe.Pointer(obs), na),
		slice[unsafe.Pointer](unsafe.Pointer(masks), na), slice[unsafe.Pointer](unsafe.Pointer(actions), na)
	for j, a := range l.Agents {
		b.Agents[j] = fastlane.AgentBuffers{
			Copies: slice[int64](cs[j], k), Obs: slice[float32](ob[j], k*a.ObsDim),
			Masks: slice[bool](ms[j], k*a.MaskLen), Actions: slice[int64](as[j], k),
		}
	}
	v, err := fastlane.NewMulti(reg, nm, cfg, k, int(workers), b)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	*handle = C.int64_t(handles.Add(v))
	return 0
}

// The calls are short (a step of a thousand cart-poles takes tens of microseconds),
// so they take no context that the caller could cancel: Python delivers a
// KeyboardInterrupt between two calls.

//export baton_reset
func baton_reset(h C.int64_t, seed C.uint64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		agent = v.Agent
		return v.Reset(context.Background(), uint64(seed))
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}

//export baton_step_single
func baton_step_single(h C.int64_t, actions *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		s, ok := v.(*fastlane.Single)
		if !ok {
			return fmt.Errorf("%w: handle %d is a multi-agent vector", fastlane.ErrArgument, h)
		}
		agent = s.Agent
		return s.Step(context.Background(), slice[int64](unsafe.Pointer(actions), s.Len()))
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}

//export baton_step_multi
func baton_step_multi(h C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		m, ok := v.(*fastlane.Multi)
		if !ok {
			return fmt.Errorf("%w: handle %d is a single-agent vector", fastlane.ErrArgument, h)
		}
		agent = m.Agent
		return m.Step(context.Background())
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}

//export baton_close
func baton_close(h C.int64_t) C.int32_t {
	if handles.Close(int64(h)) {
		return 0
	}
	return C.int32_t(fastlane.CodeState)
}

//export baton_live
func baton_live() C.int64_t { return C.int64_t(handles.Len()) }

//export baton_goroutines
func baton_goroutines() C.int64_t { return C.int64_t(runtime.NumGoroutine()) }

func layoutJSON(l fastlane.Layout) ([]byte, error) { return json.Marshal(l) }
