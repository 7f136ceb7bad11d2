package env

import (
	"fmt"

	"github.com/batonrl/baton/agent"
)

// TimeLimit truncates e's episodes after maxSteps steps, as Gymnasium's TimeLimit does:
// the maxSteps-th Step of an episode is reported truncated unless it terminated; maxSteps
// 0 or less means no limit. After the episode ends, by e or by the limit, Step returns an
// error wrapping ErrEpisodeOver until the next Reset, without calling e. Otherwise it
// keeps e's error semantics: an error from e is returned as it is, the step is not
// counted, and e is left as it was.
//
// The returned Env is not safe for concurrent use; its Unwrap method returns e, and As
// reaches through it. It allocates nothing.
func TimeLimit(e Env, maxSteps int) Env {
	return &timeLimit{e: e, max: maxSteps}
}

type timeLimit struct {
	e       Env
	max     int
	elapsed int
	started bool
	over    bool
}

// Unwrap returns the inner environment.
func (t *timeLimit) Unwrap() Env { return t.e }

func (t *timeLimit) Spec() Spec { return t.e.Spec() }

func (t *timeLimit) Info() any { return t.e.Info() }

func (t *timeLimit) Reset(seed uint64) (Step, error) {
	st, err := t.e.Reset(seed)
	if err != nil {
		return st, err
	}
	t.started, t.over, t.elapsed = true, st.Done(), 0
	return st, nil
}

func (t *timeLimit) Step(a agent.RawAction) (Step, error) {
	switch {
	case !t.started:
		return Step{}, fmt.Errorf("%w: time limit of %d steps", ErrNotReset, t.max)
	case t.over:
		return Step{}, fmt.Errorf("%w: time limit of %d steps", ErrEpisodeOver, t.max)
	}
	st, err := t.e.Step(a)
	if err != nil {
		return st, err
	}
	t.elapsed++
	if t.max > 0 && t.elapsed >= t.max && !st.Terminated {
		st.Truncated = true
	}
	t.over = st.Done()
	return st, nil
}

// TimeLimitParallel truncates p's episodes after maxRounds steps: the Round of the
// maxRounds-th Step reports every agent of the round truncated (unless terminated), and
// is Over. maxRounds 0 or less means no limit. After the episode ends, Step returns an
// error wrapping ErrEpisodeOver until the next Reset, without calling p; otherwise p's
// errors are returned as they are and the step is not counted. The Reports of a
// truncating Round are the wrapper's copies; their Obs and Mask are p's.
//
// Through Sequential this limits the ticks of a simultaneous multi-agent episode. A
// turn-taking MultiAgent gets no such wrapper: the environment itself must cut its
// episode, since only it knows every agent that waits for control (a parent waiting for
// its child, say) and what each observes when cut short. For an *hrl.Runtime that is
// hrl.Config.MaxTicks.
//
// The returned Parallel is not safe for concurrent use; its Unwrap method returns p. It
// allocates nothing in steady state.
func TimeLimitParallel(p Parallel, maxRounds int) Parallel {
	return &timeLimitParallel{p: p, max: maxRounds}
}

type timeLimitParallel struct {
	p       Parallel
	max     int
	elapsed int
	started bool
	over    bool
	reports []Report
}

// Unwrap returns the inner environment.
func (t *timeLimitParallel) Unwrap() Parallel { return t.p }

func (t *timeLimitParallel) Agents() []Spec { return t.p.Agents() }

func (t *timeLimitParallel) Info() any { return t.p.Info() }

func (t *timeLimitParallel) Reset(seed uint64) (Round, error) {
	r, err := t.p.Reset(seed)
	if err != nil {
		return r, err
	}
	t.started, t.over, t.elapsed = true, r.Over, 0
	return r, nil
}

func (t *timeLimitParallel) Step(actions []agent.RawAction) (Round, error) {
	switch {
	case !t.started:
		return Round{}, fmt.Errorf("%w: time limit of %d rounds", ErrNotReset, t.max)
	case t.over:
		return Round{}, fmt.Errorf("%w: time limit of %d rounds", ErrEpisodeOver, t.max)
	}
	r, err := t.p.Step(actions)
	if err != nil {
		return r, err
	}
	t.elapsed++
	if t.max > 0 && t.elapsed >= t.max && !r.Over {
		t.reports = append(t.reports[:0], r.Reports...)
		for i := range t.reports {
			if rep := &t.reports[i]; !rep.Terminated {
				rep.Truncated = true
			}
		}
		r = Round{Reports: t.reports, Over: true}
	}
	t.over = r.Over
	return r, nil
}
