package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/batonrl/baton/internal/fastlane"
)

// The asynchronous mode (internal/fastlane's Async, and AsyncMulti for hierarchical
// environments, whose batch is laid out as its AsyncMultiBatch): baton_async_new and
// baton_async_multi_new make the vector, baton_async_send queues actions of the copies
// named, baton_async_reset_copies queues resets of them, and baton_async_recv waits
// for the next batch.
//
// baton_reset queues a reset of every copy, and baton_close stops the workers. The
// buffers of baton_async_new hold one batch (batch rows) and are written by
// baton_async_recv when it sets *done; it waits at most waitUS microseconds, so that
// the caller can handle its interrupts between calls.

// asyncVector is what Async and AsyncMulti have in common.
type asyncVector interface {
	Len() int
	Agent(i int) string
	Send(actions, ids []int64) error
	ResetCopies(ids []int64) error
	Recv(ctx context.Context, wait time.Duration) (bool, error)
}

func asyncOf(v fastlane.Vector, h C.int64_t) (asyncVector, error) {
	a, ok := v.(asyncVector)
	if !ok {
		return nil, fmt.Errorf("%w: handle %d is not an asynchronous vector", fastlane.ErrArgument, h)
	}
	return a, nil
}

//export baton_async_multi_new
func baton_async_multi_new(name, config *C.char, n, workers, maxBytes, batch, agents C.int64_t,
	ids, acting, counts *C.int64_t, copies, obs, masks *unsafe.Pointer,
	rewards *C.double, spans *C.int64_t, term, trunc, ended *C.bool,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, l, err := describe(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if n < 1 || batch < 0 || batch > n || int(agents) != len(l.Agents) {
		return fail(fmt.Errorf("%w: %d copies in batches of %d, and buffers of %d agents for %s, of %d agents", fastlane.ErrArgument, n, batch, agents, nm, len(l.Agents)), nil, errbuf, errlen)
	}
	if err := admit(name, config, n, workers, maxBytes); err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	b, na := int(batch), len(l.Agents)
	if b == 0 {
		b = int(n)
	}
	out := fastlane.AsyncMultiBatch{
		IDs: slice[int64](unsafe.Pointer(ids), b), Acting: slice[int64](unsafe.Pointer(acting), b),
		Counts: slice[int64](unsafe.Pointer(counts), na), Agents: make([]fastlane.AsyncGroup, na),
		Rewards: slice[float64](unsafe.Pointer(rewards), b*na), Spans: slice[int64](unsafe.Pointer(spans), b*na),
		Terminated: slice[bool](unsafe.Pointer(term), b*na), Truncated: slice[bool](unsafe.Pointer(trunc), b*na),
		Ended: slice[bool](unsafe.Pointer(ended), b),
	}
	cs, ob, ms := slice[unsafe.Pointer](unsafe.Pointer(copies), na), slice[unsafe.Pointer](unsafe.Pointer(obs), na), slice[unsafe.Pointer](unsafe.Pointer(masks), na)
	for j, a := range l.Agents {
		out.Agents[j] = fastlane.AsyncGroup{Copies: slice[int64](cs[j], b), Obs: slice[float32](ob[j], b*a.ObsDim), Masks: slice[bool](ms[j], b*a.MaskLen)}
	}
	v, err := fastlane.NewAsyncMulti(reg, nm, cfg, int(n), int(workers), b, out)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	*handle = C.int64_t(handles.Add(v))
	return 0
}

//export baton_async_new
func baton_async_new(name, config *C.char, n, workers, maxBytes, batch C.int64_t,
	ids *C.int64_t, obs, final *C.float, masks *C.bool, rewards *C.double, term, trunc *C.bool,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, l, err := describe(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if n < 1 || batch < 0 || batch > n || l.Kind != fastlane.KindSingle {
		return fail(fmt.Errorf("%w: %d copies in batches of %d of %s, a %v environment", fastlane.ErrArgument, n, batch, nm, l.Kind), nil, errbuf, errlen)
	}
	if err := admit(name, config, n, workers, maxBytes); err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	b := int(batch)
	if b == 0 {
		b = int(n)
	}
	a := l.Agents[0]
	out := fastlane.AsyncBatch{
		IDs: slice[int64](unsafe.Pointer(ids), b),
		Obs: slice[float32](unsafe.Pointer(obs), b*a.ObsDim), FinalObs: slice[float32](unsafe.Pointer(final), b*a.ObsDim),
		Masks: slice[bool](unsafe.Pointer(masks), b*a.MaskLen), Rewards: slice[float64](unsafe.Pointer(rewards), b),
		Terminated: slice[bool](unsafe.Pointer(term), b), Truncated: slice[bool](unsafe.Pointer(trunc), b),
	}
	v, err := fastlane.NewAsync(reg, nm, cfg, int(n), int(workers), b, out)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	*handle = C.int64_t(handles.Add(v))
	return 0
}

//export baton_async_send
func baton_async_send(h C.int64_t, actions, ids *C.int64_t, k C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		a, err := asyncOf(v, h)
		if err != nil {
			return err
		}
		agent = a.Agent
		if k < 0 || int(k) > a.Len() {
			return fmt.Errorf("%w: %d actions for %d copies", fastlane.ErrArgument, k, a.Len())
		}
		return a.Send(slice[int64](unsafe.Pointer(actions), int(k)), slice[int64](unsafe.Pointer(ids), int(k)))
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}

//export baton_async_reset_copies
func baton_async_reset_copies(h C.int64_t, ids *C.int64_t, k C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		a, err := asyncOf(v, h)
		if err != nil {
			return err
		}
		if k < 0 || int(k) > a.Len() {
			return fmt.Errorf("%w: %d ids for %d copies", fastlane.ErrArgument, k, a.Len())
		}
		return a.ResetCopies(slice[int64](unsafe.Pointer(ids), int(k)))
	})
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	return 0
}

//export baton_async_recv
func baton_async_recv(h C.int64_t, waitUS C.int64_t, done *C.bool, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	var agent func(int) string
	*done = false
	err := handles.Do(int64(h), func(v fastlane.Vector) error {
		a, err := asyncOf(v, h)
		if err != nil {
			return err
		}
		agent = a.Agent
		ok, err := a.Recv(context.Background(), time.Duration(waitUS)*time.Microsecond)
		*done = C.bool(ok)
		return err
	})
	if err != nil {
		return fail(err, agent, errbuf, errlen)
	}
	return 0
}
