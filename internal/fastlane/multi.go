package fastlane

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/registry"
)

// AgentBuffers are one agent's buffers of a MultiBuffers, for N copies: the agent's
// group after each Reset and Step in the first Counts[j] rows of Copies (copy indices,
// ascending), Obs (rows of ObsDim) and Masks (rows of MaskLen; nil without a mask),
// and the group's actions, which the caller writes into the first Counts[j] elements
// of Actions before a Step.
type AgentBuffers struct {
	Copies  []int64
	Obs     []float32
	Masks   []bool
	Actions []int64
}

// MultiBuffers are the caller's buffers of a Multi of N copies and A agents, filled
// after every Reset and Step:
//
//	Agents      [A]          each agent's group (AgentBuffers), in the layout's order
//	Counts      [A]int64     how many copies each agent acts in
//	Acting      [N]int64     the index of the agent acting in each copy
//	Rewards     [N × A]float64  the sum of the rewards each agent was reported in each copy
//	Spans       [N × A]int64    the sum of the span ticks of those rewards (env.Report's
//	                            SpanTicks: a parent's decision lasts its child's sub-episode)
//	Terminated  [N × A]bool  whether an agent of that name was reported terminated
//	Truncated   [N × A]bool  ... or truncated, in the last Step (false after Reset)
//	Ended       [N]bool      which copies' episodes ended in the last Step, and were reset
type MultiBuffers struct {
	Agents                []AgentBuffers
	Counts, Acting        []int64
	Rewards               []float64
	Spans                 []int64
	Terminated, Truncated []bool
	Ended                 []bool
}

func (b *MultiBuffers) check(n int, l Layout) error {
	a := len(l.Agents)
	if len(b.Agents) != a {
		return fmt.Errorf("%w: buffers of %d agents; the environment has %d", ErrArgument, len(b.Agents), a)
	}
	checks := []error{
		sameSize("Counts", len(b.Counts), a), sameSize("Acting", len(b.Acting), n),
		sameSize("Rewards", len(b.Rewards), n*a), sameSize("Spans", len(b.Spans), n*a), sameSize("Terminated", len(b.Terminated), n*a),
		sameSize("Truncated", len(b.Truncated), n*a), sameSize("Ended", len(b.Ended), n),
	}
	for j, ag := range l.Agents {
		g := &b.Agents[j]
		checks = append(checks,
			sameSize(ag.Name+" Copies", len(g.Copies), n), sameSize(ag.Name+" Obs", len(g.Obs), n*ag.ObsDim),
			sameSize(ag.Name+" Masks", len(g.Masks), n*ag.MaskLen), sameSize(ag.Name+" Actions", len(g.Actions), n))
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// Multi is a vector of a multi-agent environment over the caller's buffers, batched
// per acting agent name. It is not safe for concurrent use.
type Multi struct {
	m      *vector.Multi
	layout Layout
	b      MultiBuffers
	before []int // the acting agent of each copy before the Step in progress
	// The Step in progress: each copy's acting agent (before's next value) and the
	// error of its action, written on the vector's workers; failed says one failed.
	next    []int
	errs    []error
	failed  atomic.Bool
	stepped bool // publish's argument, for publishRange
	// takeActions and publishRange as funcs, made once: a method value made per call
	// would allocate.
	takeFn, publishFn func(lo, hi int)
	src               source
	// rec records the steps into dir; nil when not recording.
	rec *recorder
	dir string
	*frames
}

// NewMulti makes n copies of the named environment, of either kind, with the given
// number of workers, and fills b (see MultiBuffers for the lengths) after each Reset
// and Step.
func NewMulti(reg *registry.Registry, name string, config []byte, n, workers int, b MultiBuffers) (*Multi, error) {
	f, l, err := open(reg, name, config)
	if err != nil {
		return nil, err
	}
	return NewMultiOf(reg, name, config, f, l, n, workers, b)
}

// NewMultiOf is NewMulti over a factory f that the caller opened itself, from the
// entry name of reg with config (an environment server opens its callers'
// configurations through a remote view of its registry, registry.Registry.Remote, and
// answers their errors its own way), whose environments have the layout l
// (LayoutOf).
func NewMultiOf(reg *registry.Registry, name string, config []byte, f registry.Factory, l Layout, n, workers int, b MultiBuffers) (*Multi, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d copies; want 1 or more", ErrArgument, n)
	}
	if err := b.check(n, l); err != nil {
		return nil, err
	}
	x := &Multi{layout: l, b: b, before: make([]int, n),
		next: make([]int, n), errs: make([]error, n), src: source{reg: reg, name: name, config: config, f: f}}
	x.frames = &frames{ms: make([]env.MultiAgent, n), look: look(reg, name)}
	m, err := vector.NewMulti(n, func(i int) (env.MultiAgent, error) {
		e, err := f.NewEnv(registry.EnvOptions{})
		x.frames.ms[i] = e
		return e, err
	}, vector.WithWorkers(workers), vector.WithEpisodeEnd(x.judge))
	if err != nil {
		return nil, err
	}
	x.m = m
	x.takeFn, x.publishFn = x.takeActions, x.publishRange
	return x, nil
}

// judge judges copy i's ended episode for the recording, if any, while its final
// Turn is live (vector.WithEpisodeEnd): on the goroutine that steps the copy.
func (x *Multi) judge(i int, final env.Turn) {
	if r := x.rec; r != nil {
		r.judge(i, &final)
	}
}

// Layout returns the vector's layout.
func (x *Multi) Layout() Layout { return x.layout }

// Len returns the number of copies.
func (x *Multi) Len() int { return x.m.Len() }

// Reset resets every copy, copy i with vector.EpisodeSeed(seed, i, 0), and fills the
// buffers.
func (x *Multi) Reset(ctx context.Context, seed uint64) error {
	err := x.m.Reset(ctx, seed)
	x.publish(false)
	if x.rec == nil {
		return err
	}
	x.rec.afterReset(err, x.m.Seeds(), func(i int) {
		t := x.m.Turn(i)
		x.rec.turn(i, &t)
	})
	return cmp.Or(err, x.rec.err())
}

// Step checks the action of every row of every group in the agents' Actions buffers
// (an *ActionError for the first bad one, changing nothing), steps every copy with
// its action and fills the buffers.
func (x *Multi) Step(ctx context.Context) error {
	// The actions are checked and converted on the vector's workers, each copy's by
	// the goroutine that steps it; the error is the first in the order of the groups
	// and their rows, as a check one row after the other finds it.
	groups := x.m.Groups()
	x.failed.Store(false)
	x.m.Spread(x.takeFn)
	if x.failed.Load() {
		var first error
		for j := range groups {
			for _, i := range groups[j].Copies {
				if err := x.errs[i]; err != nil && first == nil {
					first = err
				}
			}
		}
		clear(x.errs)
		return first
	}
	x.before, x.next = x.next, x.before
	if x.rec != nil {
		for j := range groups {
			for r, i := range groups[j].Copies {
				x.rec.copies[i].last[j] = x.b.Agents[j].Actions[r]
			}
		}
	}
	err := x.m.Step(ctx)
	x.publish(err == nil)
	if x.rec == nil {
		return err
	}
	if err == nil {
		x.logStep()
	}
	x.rec.afterStep(err)
	return cmp.Or(err, x.rec.err())
}

// takeActions checks the actions of the copies lo to hi-1 and converts them into
// the vector's actions, for Step.
func (x *Multi) takeActions(lo, hi int) {
	groups := x.m.Groups()
	for i := lo; i < hi; i++ {
		j, r := x.m.Acting(i)
		g := &groups[j]
		if r >= len(g.Copies) || g.Copies[r] != i {
			continue // not reset, or after a failure: the groups are empty
		}
		a, act := &x.layout.Agents[j], x.b.Agents[j].Actions[r]
		var mask []bool
		if a.MaskLen > 0 {
			mask = g.Mask(r)
		}
		if err := a.check(i, act, mask); err != nil {
			x.errs[i] = err
			x.failed.Store(true)
			continue
		}
		g.Actions[r] = agent.Discrete(act)
		x.next[i] = j
	}
}

// Agent returns the name of the agent that acted in copy i in the last Step, for
// Failures.
func (x *Multi) Agent(i int) string {
	if i < 0 || i >= len(x.before) {
		return ""
	}
	return x.layout.Agents[x.before[i]].Name
}

// publish writes the groups, and the reports of the last Step when stepped, into the
// caller's buffers: the counts here, each copy's rows on the vector's workers.
func (x *Multi) publish(stepped bool) {
	for j, g := range x.m.Groups() {
		x.b.Counts[j] = int64(len(g.Copies))
	}
	x.stepped = stepped
	x.m.Spread(x.publishFn)
}

// publishRange writes copies lo to hi-1's rows: of its group (its copy index, its
// observation and mask), its acting agent, and its rewards, spans and ends.
func (x *Multi) publishRange(lo, hi int) {
	b, a, groups := &x.b, len(x.layout.Agents), x.m.Groups()
	clear(b.Rewards[lo*a : hi*a])
	clear(b.Spans[lo*a : hi*a])
	clear(b.Terminated[lo*a : hi*a])
	clear(b.Truncated[lo*a : hi*a])
	clear(b.Ended[lo:hi])
	for i := lo; i < hi; i++ {
		j, r := x.m.Acting(i)
		if g := &groups[j]; r < len(g.Copies) && g.Copies[r] == i {
			ab := &b.Agents[j]
			ab.Copies[r] = int64(i)
			b.Acting[i] = int64(j)
			copy(ab.Obs[r*g.ObsDim:(r+1)*g.ObsDim], g.Row(r))
			if g.MaskLen > 0 {
				copy(ab.Masks[r*g.MaskLen:(r+1)*g.MaskLen], g.Mask(r))
			}
		}
		if !x.stepped {
			continue
		}
		b.Ended[i] = x.m.Ended(i)
		t := x.m.Stepped(i)
		for k := range t.Reports {
			rep := &t.Reports[k]
			j := x.agentIndex(rep.Agent)
			if j < 0 {
				continue
			}
			b.Rewards[i*a+j] += rep.Reward
			b.Spans[i*a+j] += int64(rep.SpanTicks)
			b.Terminated[i*a+j] = b.Terminated[i*a+j] || rep.Terminated
			b.Truncated[i*a+j] = b.Truncated[i*a+j] || rep.Truncated
		}
	}
}

// agentIndex returns the index of the named agent in the layout, or -1: a look along
// a few names, cheaper than a map's hash.
func (x *Multi) agentIndex(name string) int {
	for j := range x.layout.Agents {
		if x.layout.Agents[j].Name == name {
			return j
		}
	}
	return -1
}

// Close ends the recording (CloseLog, whose error it returns) and stops the
// vector's workers. It is idempotent.
func (x *Multi) Close() error {
	err := x.CloseLog()
	return cmp.Or(x.m.Close(), err)
}
