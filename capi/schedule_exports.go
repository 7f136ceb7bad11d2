package capi

/*
#include <stdbool.h>
#include <stdint.h>
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/runners"
)

// The schedules of tasks (curricula) of runners, for Python's baton.schedule, which
// holds no rules of its own: it reads a schedule and takes its tasks trial by trial
// through these functions. None of them needs the library's registry.

// problem is one *runners.ScheduleError of a report.
type problem struct {
	Task   int    `json:"task"`
	Name   string `json:"name"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// failSchedule writes the report of a schedule's error, whose "problems" list each
// *runners.ScheduleError it combines, and returns code 1 (configuration).
func failSchedule(err error, buf *C.char, n C.int64_t) C.int32_t {
	ps := []problem{}
	var walk func(error)
	walk = func(e error) {
		switch x := e.(type) {
		case *runners.ScheduleError:
			ps = append(ps, problem{Task: x.Task, Name: x.Name, Field: x.Field, Reason: x.Reason})
		case interface{ Unwrap() []error }: // multierr's, errors.Join's
			for _, e := range x.Unwrap() {
				walk(e)
			}
		default:
			if u := errors.Unwrap(e); u != nil {
				walk(u)
			}
		}
	}
	walk(err)
	if buf != nil && n > 0 {
		b, jerr := json.Marshal(struct {
			Message  string             `json:"message"`
			Failures []fastlane.Failure `json:"failures"`
			Problems []problem          `json:"problems"`
		}{err.Error(), []fastlane.Failure{}, ps})
		if jerr != nil {
			b = fastlane.Report(err, nil)
		}
		out := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		out[copy(out[:len(out)-1], b)] = 0
	}
	return C.int32_t(fastlane.CodeConfig)
}

// parseSchedule reads the NUL-terminated JSON of a schedule.
func parseSchedule(data *C.char) (runners.Schedule, error) {
	if data == nil {
		return runners.Schedule{}, &runners.ScheduleError{Task: -1, Reason: "NULL: want a JSON object with order and tasks"}
	}
	return runners.ParseSchedule([]byte(C.GoString(data)))
}

// baton_schedule_parse reads a schedule's JSON (what baton run --schedule takes) and
// checks it as runners.ParseSchedule does, then writes its JSON with the defaults
// written out (runners.Schedule.JSON) into out (outlen bytes, NUL included) and its
// length (without the NUL) into *needed: code 2 when out is too small, so that the
// caller can retry with room enough. A schedule with problems is code 1, its report
// listing every one under "problems" ({"task", "name", "field", "reason"}, task -1
// for the schedule itself).
//
//export baton_schedule_parse
func baton_schedule_parse(data, out *C.char, outlen C.int64_t, needed *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	s, err := parseSchedule(data)
	if err != nil {
		return failSchedule(err, errbuf, errlen)
	}
	b, err := s.JSON()
	if err != nil {
		return failSchedule(err, errbuf, errlen)
	}
	if needed != nil {
		*needed = C.int64_t(len(b))
	}
	if out == nil || len(b) >= int(outlen) {
		return fail(fmt.Errorf("%w: the schedule takes %d bytes; the buffer has %d", fastlane.ErrArgument, len(b)+1, outlen), nil, errbuf, errlen)
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(outlen))
	dst[copy(dst, b)] = 0
	return 0
}

// baton_schedule_start writes into pos (3 int64: trial, task, wins) the position of
// trial 0 of the schedule (its JSON) in a campaign of seed seed
// (runners.Schedule.Start), and into *bound how many trials it runs in a campaign of
// trials trials, 0 for no bound (runners.Schedule.TrialCount). A schedule with
// problems is code 1, as baton_schedule_parse reports it.
//
//export baton_schedule_start
func baton_schedule_start(schedule *C.char, seed C.uint64_t, trials C.int64_t, pos, bound *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	s, err := parseSchedule(schedule)
	if err != nil {
		return failSchedule(err, errbuf, errlen)
	}
	if pos == nil || bound == nil || trials < 0 {
		return fail(fmt.Errorf("%w: pos and bound must not be NULL, trials (%d) not negative", fastlane.ErrArgument, trials), nil, errbuf, errlen)
	}
	putPosition(pos, s.Start(uint64(seed)))
	*bound = C.int64_t(s.TrialCount(int(trials)))
	return 0
}

// baton_schedule_next moves pos (3 int64: trial, task, wins, as baton_schedule_start
// writes them) past its trial, whose result was success (runners.Schedule.Next): the
// next trial's task, decided by the schedule's order from the seed and the results of
// the trials before. A schedule with problems is code 1.
//
//export baton_schedule_next
func baton_schedule_next(schedule *C.char, seed C.uint64_t, success C.bool, pos *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	s, err := parseSchedule(schedule)
	if err != nil {
		return failSchedule(err, errbuf, errlen)
	}
	if pos == nil {
		return fail(fmt.Errorf("%w: pos must not be NULL", fastlane.ErrArgument), nil, errbuf, errlen)
	}
	p := slice[int64](unsafe.Pointer(pos), 3)
	cur := runners.Position{Trial: int(p[0]), Task: int(p[1]), Wins: int(p[2])}
	if cur.Trial < 0 || cur.Task < 0 || cur.Task >= len(s.Tasks) || cur.Wins < 0 {
		return fail(fmt.Errorf("%w: position %+v of a schedule of %d tasks", fastlane.ErrArgument, cur, len(s.Tasks)), nil, errbuf, errlen)
	}
	putPosition(pos, s.Next(cur, uint64(seed), bool(success)))
	return 0
}

func putPosition(pos *C.int64_t, p runners.Position) {
	out := slice[int64](unsafe.Pointer(pos), 3)
	out[0], out[1], out[2] = int64(p.Trial), int64(p.Task), int64(p.Wins)
}

// baton_schedule_random_task writes into *task the task of trial i of a campaign of
// seed seed under the random order, for the n tasks' weights (0 means 1):
// runners.RandomTask.
//
//export baton_schedule_random_task
func baton_schedule_random_task(weights *C.double, n C.int64_t, seed C.uint64_t, i C.int64_t, task *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	if weights == nil || n < 1 || i < 0 || task == nil {
		return fail(fmt.Errorf("%w: %d weights for trial %d; want 1 or more, a trial from 0 and a task to write", fastlane.ErrArgument, n, i), nil, errbuf, errlen)
	}
	*task = C.int64_t(runners.RandomTask(slice[float64](unsafe.Pointer(weights), int(n)), uint64(seed), int(i)))
	return 0
}

// baton_schedule_promote writes into *task the task after task cur (of n) following
// a window whose success rate was rate, under the promotion of window, threshold and
// demote (0 for their defaults, and for never demoting): runners.Promote.
//
//export baton_schedule_promote
func baton_schedule_promote(cur, n C.int64_t, rate C.double, window C.int64_t, threshold, demote C.double, task *C.int64_t, errbuf *C.char, errlen C.int64_t) (code C.int32_t) {
	defer guard(&code, errbuf, errlen)
	if n < 1 || cur < 0 || cur >= n || task == nil {
		return fail(fmt.Errorf("%w: task %d of %d; want 0 <= task < n and a task to write", fastlane.ErrArgument, cur, n), nil, errbuf, errlen)
	}
	p := runners.Promotion{Window: int(window), Threshold: float64(threshold), Demote: float64(demote)}
	*task = C.int64_t(runners.Promote(int(cur), int(n), float64(rate), p))
	return 0
}
