package main

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

// The asynchronous mode (internal/fastlane's Async):
//
//	int32 baton_async_new(char *name, char *config, int64 n, int64 workers, int64 batch,
//	        int64 *ids, float *obs, float *final_obs, bool *masks, double *rewards,
//	        bool *terminated, bool *truncated, int64 *handle, char *err, int64 errlen)
//	int32 baton_async_send(int64 handle, int64 *actions, int64 *ids, int64 k, char *err, int64 errlen)
//	int32 baton_async_reset_copies(int64 handle, int64 *ids, int64 k, char *err, int64 errlen)
//	int32 baton_async_recv(int64 handle, int64 wait_us, bool *done, char *err, int64 errlen)
//
// baton_reset queues a reset of every copy, and baton_close stops the workers. The
// buffers of baton_async_new hold one batch (batch rows) and are written by
// baton_async_recv when it sets *done; it waits at most wait_us microseconds, so that
// the caller can handle its interrupts between calls.

func asyncOf(v fastlane.Vector, h C.int64_t) (*fastlane.Async, error) {
	a, ok := v.(*fastlane.Async)
	if !ok {
		return nil, fmt.Errorf("%w: handle %d is not an asynchronous vector", fastlane.ErrArgument, h)
	}
	return a, nil
}

//export baton_async_new
func baton_async_new(name, config *C.char, n, workers, batch C.int64_t,
	ids *C.int64_t, obs, final *C.float, masks *C.bool, rewards *C.double, term, trunc *C.bool,
	handle *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	reg, nm, cfg, err := open(name, config)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	l, err := fastlane.Describe(reg, nm, cfg)
	if err != nil {
		return fail(err, nil, errbuf, errlen)
	}
	if n < 1 || batch < 0 || batch > n || l.Kind != fastlane.KindSingle {
		return fail(fmt.Errorf("%w: %d copies in batches of %d of %s, a %v environment", fastlane.ErrArgument, n, batch, nm, l.Kind), nil, errbuf, errlen)
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
