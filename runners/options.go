package runners

import (
	"context"
	"fmt"
	"github.com/batonrl/baton/event"
	"maps"
	"runtime"
	"slices"
)

// CampaignOption configures NewCampaign. Options follow the one style of baton's
// packages (grpc-go's): an option is a value that only this package's With functions
// make; the constructor applies them in the order given and ignores a nil one; an
// option left out, or given its zero value, means the default its With function
// documents; a bad value makes the constructor fail with an error wrapping the
// package's sentinel (here ErrInvalidSpec). An option that configures several
// constructors has a type that implements the option interface of each (Option).
type CampaignOption interface{ applyCampaign(*campaignOptions) }

// ControllerOption configures NewController, in the style of CampaignOption.
type ControllerOption interface{ applyController(*controllerOptions) }

// Option configures both NewCampaign and NewController.
type Option interface {
	CampaignOption
	ControllerOption
}

type commonOptions struct {
	sinks   []event.Sink
	workers int
	err     error
}

func (c *commonOptions) workerCount() int {
	if c.workers == 0 {
		return runtime.GOMAXPROCS(0)
	}
	return c.workers
}

type campaignOptions struct {
	commonOptions
	trials      int
	first       int
	hooks       []Hook
	progress    func(Progress)
	workerSinks func(worker int) (event.Sink, error)
	schedule    *Schedule
}

type controllerOptions struct {
	commonOptions
	maxLive      int
	keepFinished int
	window       int
}

// Defaults of the controller's bounds.
const (
	// DefaultMaxLive bounds the trials a Controller holds unfinished (WithMaxLive).
	DefaultMaxLive = 10000
	// DefaultKeepFinished bounds the finished trials a Controller keeps
	// (WithKeepFinished).
	DefaultKeepFinished = 1000
	// DefaultEpisodeWindow bounds the episodes a Controller's trial keeps
	// (WithEpisodeWindow).
	DefaultEpisodeWindow = 1000
)

type controllerOption func(*controllerOptions)

func (o controllerOption) applyController(c *controllerOptions) { o(c) }

// positive is the option of a bound: 0 means def; below 0 is an error.
func positive(c *controllerOptions, dst *int, n, def int, name string) {
	switch {
	case n < 0:
		c.err = fmt.Errorf("%w: %s(%d): want 0 (for %d) or more", ErrInvalidSpec, name, n, def)
	case n == 0:
		*dst = def
	default:
		*dst = n
	}
}

// WithMaxLive bounds the trials a Controller holds unfinished, pending or running:
// Start (and StartCampaign) refuse trials past it with an error wrapping ErrFull,
// starting none. 0 means DefaultMaxLive.
func WithMaxLive(n int) ControllerOption {
	return controllerOption(func(c *controllerOptions) { positive(c, &c.maxLive, n, DefaultMaxLive, "WithMaxLive") })
}

// WithKeepFinished bounds the finished trials a Controller keeps: past n, it forgets
// the trial that finished first (as Forget does), so that a long-lived controller
// holds its latest results and no more (a trial's steps and results stay in the
// sinks, an activity log). 0 means DefaultKeepFinished.
func WithKeepFinished(n int) ControllerOption {
	return controllerOption(func(c *controllerOptions) {
		positive(c, &c.keepFinished, n, DefaultKeepFinished, "WithKeepFinished")
	})
}

// WithEpisodeWindow bounds the episodes each trial of a Controller keeps: its Result
// and Controller.Episodes list its last n episodes (Result.FirstEpisode is the index
// of the first listed), Result.Totals sums every episode, and a retroactive reward for
// an episode older than the window reaches the sinks and the totals, not the listed
// returns. A trial of many episodes then holds bounded memory. 0 means
// DefaultEpisodeWindow.
func WithEpisodeWindow(n int) ControllerOption {
	return controllerOption(func(c *controllerOptions) {
		positive(c, &c.window, n, DefaultEpisodeWindow, "WithEpisodeWindow")
	})
}

type commonOption func(*commonOptions)

func (o commonOption) applyCampaign(c *campaignOptions)     { o(&c.commonOptions) }
func (o commonOption) applyController(c *controllerOptions) { o(&c.commonOptions) }

type campaignOption func(*campaignOptions)

func (o campaignOption) applyCampaign(c *campaignOptions) { o(c) }

// WithSinks sends every trial's events to the sinks, in order (see MultiSink). The
// sinks are shared by the trials that run at once: they must be safe for concurrent
// use unless there is one worker. Without it, events are not built at all.
func WithSinks(sinks ...event.Sink) Option {
	return commonOption(func(c *commonOptions) { c.sinks = append(c.sinks, sinks...) })
}

// WithWorkers bounds how many trials run at once, each on a goroutine of its own; 0
// means runtime.GOMAXPROCS(0). A campaign starts no more workers than it has trials; a
// controller starts them as trials wait and lets them end when none does.
func WithWorkers(n int) Option {
	return commonOption(func(c *commonOptions) {
		if n < 0 {
			c.err = fmt.Errorf("%w: WithWorkers(%d): want 0 (GOMAXPROCS) or more", ErrInvalidSpec, n)
		}
		c.workers = n
	})
}

// WithTrials sets how many trials a campaign runs; 0 means 1.
func WithTrials(k int) CampaignOption {
	return campaignOption(func(c *campaignOptions) {
		if k < 0 {
			c.err = fmt.Errorf("%w: WithTrials(%d): want 0 (for 1) or more", ErrInvalidSpec, k)
		}
		c.trials = k
	})
}

// WithFirstTrial makes the campaign run the trials of indices first, first+1, ...
// (WithTrials of them) instead of 0, 1, ...: trial i keeps the id, seed and
// everything else it has in a campaign from 0, so that processes running disjoint
// ranges of one campaign's indices run its trials between them, each once. Not with
// WithSchedule, whose orders depend on the trials before.
func WithFirstTrial(first int) CampaignOption {
	return campaignOption(func(c *campaignOptions) {
		if first < 0 {
			c.err = fmt.Errorf("%w: WithFirstTrial(%d): want 0 or more", ErrInvalidSpec, first)
		}
		c.first = first
	})
}

// WithSchedule makes the campaign play the tasks of a schedule (a curriculum): trial i
// plays the environment, configuration and actors of the task the schedule picks for
// it (see Order and Promotion), with the campaign spec's ID, Seed, Episodes and
// MaxTicks, and Spec.Task set to the task's name. The campaign's spec then names no
// environment, configuration or actors. NewCampaign checks every task against its
// registry and the schedule's Criterion against every task's environment, reporting
// each problem as a *ScheduleError that names the task and the field. The number of
// trials is the schedule's (see Schedule.Trials); the Summary has Tasks and Runs, and
// its Env lists the tasks' environments, comma-separated. Trial ids are "ID-i", or
// "ENV-i" with the environment of trial i's task. Agents describes the first task's
// agents.
func WithSchedule(s Schedule) CampaignOption {
	return campaignOption(func(c *campaignOptions) {
		s.Tasks = slices.Clone(s.Tasks)
		for k := range s.Tasks {
			s.Tasks[k].Config = slices.Clone(s.Tasks[k].Config)
			s.Tasks[k].Actors = maps.Clone(s.Tasks[k].Actors)
		}
		c.schedule = &s
	})
}

// Hook changes the spec of trial i of a campaign before it runs: it may choose other
// actors, another configuration, even another environment. s is the trial's own copy
// (its ID and Seed already derived; Actors and Config copied), so a hook may change it
// in place. Hooks run on the worker goroutines, several at once: a hook must be safe
// for concurrent use. An error or a panic fails that trial only (ErrHook, or a
// *PanicError).
type Hook func(ctx context.Context, i int, s *Spec) error

// WithPreTrial adds a hook run before each trial of a campaign; hooks run in the order
// added.
func WithPreTrial(h Hook) CampaignOption {
	return campaignOption(func(c *campaignOptions) {
		if h != nil {
			c.hooks = append(c.hooks, h)
		}
	})
}

// Progress tells how far a campaign is, after each trial that finishes.
type Progress struct {
	// Done counts the trials finished, in any state; Total is the campaign's trials.
	Done, Total int
	// Failed and Stopped count the finished trials that failed or stopped.
	Failed, Stopped int
	// Steps counts the environment steps of every episode finished so far, and of the
	// trials finished.
	Steps int64
	// Index is the index of the trial that just finished, Result its result; treat it
	// as read-only.
	Index  int
	Result *Result
}

// WithProgress calls f after each trial of a campaign finishes. Calls are serialised
// (f needs no lock) and made from the worker goroutines: a slow f slows the campaign.
// nil, the default, calls nothing.
func WithProgress(f func(Progress)) CampaignOption {
	return campaignOption(func(c *campaignOptions) { c.progress = f })
}

// WithWorkerSinks gives each worker of a campaign a sink of its own, made by newSink
// when the worker starts (worker counts from 0), so that a sink that buffers (a log
// writer) needs no lock: it sees one trial at a time. Events go to the shared sinks of
// WithSinks first. A sink that is an io.Closer is closed when its worker ends; errors
// from newSink or Close are returned by Run (an error from newSink stops the campaign).
// nil, the default, gives the workers no sink of their own.
func WithWorkerSinks(newSink func(worker int) (event.Sink, error)) CampaignOption {
	return campaignOption(func(c *campaignOptions) { c.workerSinks = newSink })
}

// joinSinks returns nil for no sink, so that the trial builds no event.
func joinSinks(sinks ...event.Sink) event.Sink {
	live := make([]event.Sink, 0, len(sinks))
	for _, s := range sinks {
		if s != nil {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return event.MultiSink(live...)
}
