package fastlane

import (
	"errors"
	"fmt"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/registry"
)

// AsyncGroup is one agent's rows of an AsyncMultiBatch: the copies of the batch it
// acts in (the first Counts[j] elements of Copies, in the batch's order) with their
// observations (rows of ObsDim) and masks (rows of MaskLen, nil without a mask).
type AsyncGroup struct {
	Copies []int64
	Obs    []float32
	Masks  []bool
}

// AsyncMultiBatch is where an AsyncMulti's Recv writes a batch of B copies of an
// environment of A agents:
//
//	IDs         [B]int64        the copies, in the order they finished
//	Acting      [B]int64        the index of the agent acting now in each
//	Counts      [A]int64        how many of them each agent acts in
//	Agents      [A]AsyncGroup   each agent's group, in the layout's order
//	Rewards     [B × A]float64  what each agent was reported in the copy's last step,
//	Spans       [B × A]int64    as MultiBuffers has them (all zero after a reset)
//	Terminated  [B × A]bool
//	Truncated   [B × A]bool
//	Ended       [B]bool         whether the copy's episode ended in its last step (and
//	                            the copy was reset)
//
// The memory may be the caller's C memory; it must stay valid until the AsyncMulti
// is closed.
type AsyncMultiBatch struct {
	IDs, Acting, Counts   []int64
	Agents                []AsyncGroup
	Rewards               []float64
	Spans                 []int64
	Terminated, Truncated []bool
	Ended                 []bool
}

func (b *AsyncMultiBatch) check(batch int, l Layout) error {
	a := len(l.Agents)
	if len(b.Agents) != a {
		return fmt.Errorf("%w: buffers of %d agents; the environment has %d", ErrArgument, len(b.Agents), a)
	}
	errs := []error{
		sameSize("IDs", len(b.IDs), batch), sameSize("Acting", len(b.Acting), batch), sameSize("Counts", len(b.Counts), a),
		sameSize("Rewards", len(b.Rewards), batch*a), sameSize("Spans", len(b.Spans), batch*a),
		sameSize("Terminated", len(b.Terminated), batch*a), sameSize("Truncated", len(b.Truncated), batch*a),
		sameSize("Ended", len(b.Ended), batch),
	}
	for j, ag := range l.Agents {
		g := &b.Agents[j]
		errs = append(errs, sameSize(ag.Name+" Copies", len(g.Copies), batch),
			sameSize(ag.Name+" Obs", len(g.Obs), batch*ag.ObsDim), sameSize(ag.Name+" Masks", len(g.Masks), batch*ag.MaskLen))
	}
	return errors.Join(errs...)
}

// AsyncMulti is Async for a hierarchical or multi-agent environment: in each copy one
// agent acts at a time, so Send takes, for each copy named, the action of the agent
// acting in it, and Recv writes the batch grouped per acting agent (AsyncMultiBatch)
// with what every agent was reported in each copy's last step. Episodes, seeds,
// errors and concurrency are as for Async.
type AsyncMulti struct {
	async
	layout Layout
	index  map[string]int
	envs   []env.MultiAgent
	a      int // agents
	dim    int // the longest observation
	ml     int // the longest mask
	out    AsyncMultiBatch

	// Each copy's state and rows (see async): the acting agent, its id, its
	// observation and mask (in a row of the longest), and the last step's reports.
	acting  []int
	ids     []string
	obs     []float32
	masks   []bool
	rewards []float64
	spans   []int64
	term    []bool
	trunc   []bool
	ended   []bool
}

// NewAsyncMulti makes n copies of the named environment (of either kind) stepped by
// workers goroutines (0 means 1), whose Recv returns batches of batch copies (0 means
// n) written into out, whose lengths must fit batch copies.
func NewAsyncMulti(reg *registry.Registry, name string, config []byte, n, workers, batch int, out AsyncMultiBatch) (*AsyncMulti, error) {
	f, l, err := open(reg, name, config)
	if err != nil {
		return nil, err
	}
	workers, batch, err = asyncArgs(n, workers, batch)
	if err != nil {
		return nil, err
	}
	if err := out.check(batch, l); err != nil {
		return nil, err
	}
	a := &AsyncMulti{layout: l, index: make(map[string]int, len(l.Agents)), a: len(l.Agents), out: out}
	for j, ag := range l.Agents {
		a.index[ag.Name] = j
		a.dim, a.ml = max(a.dim, ag.ObsDim), max(a.ml, ag.MaskLen)
	}
	a.envs = make([]env.MultiAgent, n)
	for i := range n {
		if a.envs[i], err = f.NewEnv(registry.EnvOptions{}); err != nil {
			return nil, fmt.Errorf("%w: %s: copy %d: %w", ErrConfig, name, i, err)
		}
	}
	a.acting, a.ids = make([]int, n), make([]string, n)
	a.obs, a.masks = make([]float32, n*a.dim), make([]bool, n*a.ml)
	a.rewards, a.spans = make([]float64, n*a.a), make([]int64, n*a.a)
	a.term, a.trunc, a.ended = make([]bool, n*a.a), make([]bool, n*a.a), make([]bool, n)
	a.stepOne, a.resetOne, a.act, a.gather = a.stepCopy, a.resetCopy, a.check, a.gatherGroups
	a.start(n, workers, batch)
	return a, nil
}

// Layout returns the environment's layout.
func (a *AsyncMulti) Layout() Layout { return a.layout }

// Agent returns the name of the agent acting in copy i (for a copy that failed, the
// one that acted), for Failures.
func (a *AsyncMulti) Agent(i int) string {
	if i < 0 || i >= a.n {
		return ""
	}
	return a.layout.Agents[a.acting[i]].Name
}

func (a *AsyncMulti) check(i int, x int64) error {
	l := &a.layout.Agents[a.acting[i]]
	var mask []bool
	if l.MaskLen > 0 {
		mask = a.masks[i*a.ml : i*a.ml+l.MaskLen]
	}
	return l.check(i, x, mask)
}

// gatherGroups writes the pending copies into the batch.
func (a *AsyncMulti) gatherGroups(pending []int) {
	o, na := &a.out, a.a
	clear(o.Counts)
	for r, i := range pending {
		j := a.acting[i]
		o.IDs[r], o.Acting[r] = int64(i), int64(j)
		l, g, k := &a.layout.Agents[j], &o.Agents[j], int(o.Counts[j])
		g.Copies[k] = int64(i)
		copy(g.Obs[k*l.ObsDim:(k+1)*l.ObsDim], a.obs[i*a.dim:i*a.dim+l.ObsDim])
		if m := l.MaskLen; m > 0 {
			copy(g.Masks[k*m:(k+1)*m], a.masks[i*a.ml:i*a.ml+m])
		}
		o.Counts[j]++
		copy(o.Rewards[r*na:(r+1)*na], a.rewards[i*na:(i+1)*na])
		copy(o.Spans[r*na:(r+1)*na], a.spans[i*na:(i+1)*na])
		copy(o.Terminated[r*na:(r+1)*na], a.term[i*na:(i+1)*na])
		copy(o.Truncated[r*na:(r+1)*na], a.trunc[i*na:(i+1)*na])
		o.Ended[r] = a.ended[i]
	}
}

// clearReports clears copy i's reports.
func (a *AsyncMulti) clearReports(i int) {
	na := a.a
	clear(a.rewards[i*na : (i+1)*na])
	clear(a.spans[i*na : (i+1)*na])
	clear(a.term[i*na : (i+1)*na])
	clear(a.trunc[i*na : (i+1)*na])
	a.ended[i] = false
}

func (a *AsyncMulti) resetCopy(i int) error {
	a.clearReports(i)
	return a.restart(i)
}

func (a *AsyncMulti) stepCopy(i int) error {
	t, err := a.envs[i].Step(a.ids[i], agent.Discrete(a.actions[i]))
	if err != nil {
		return &vector.CopyError{Copy: i, Op: vector.OpStep, Err: err}
	}
	a.clearReports(i)
	na := a.a
	for r := range t.Reports {
		rep := &t.Reports[r]
		j, ok := a.index[rep.Agent]
		if !ok {
			continue
		}
		a.rewards[i*na+j] += rep.Reward
		a.spans[i*na+j] += int64(rep.SpanTicks)
		a.term[i*na+j] = a.term[i*na+j] || rep.Terminated
		a.trunc[i*na+j] = a.trunc[i*na+j] || rep.Truncated
	}
	if t.Over {
		a.ended[i] = true
		return a.restart(i)
	}
	return a.take(i, &t, vector.OpStep)
}

// restart resets copy i into its next episode.
func (a *AsyncMulti) restart(i int) error {
	k := a.episodes[i] + 1
	t, err := a.envs[i].Reset(vector.EpisodeSeed(a.base, i, k))
	if err != nil {
		return &vector.CopyError{Copy: i, Op: vector.OpReset, Err: err}
	}
	a.episodes[i] = k
	return a.take(i, &t, vector.OpReset)
}

// take keeps the acting agent of copy i's turn t, its id, observation and mask.
func (a *AsyncMulti) take(i int, t *env.Turn, op vector.Op) error {
	rep := t.Acting()
	if rep == nil {
		return &vector.CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: next %q, over %t", vector.ErrNoActing, t.Next, t.Over)}
	}
	j, ok := a.index[rep.Agent]
	if !ok {
		return &vector.CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: acting agent %q is not among %s", vector.ErrNoActing, rep.Agent, names(a.layout))}
	}
	l := &a.layout.Agents[j]
	if len(rep.Obs) != l.ObsDim || len(rep.Mask) != l.MaskLen {
		return &vector.CopyError{Copy: i, Op: op, Err: fmt.Errorf("%w: %s: observation of %d (want %d), mask of %d (want %d)",
			vector.ErrShape, rep.AgentID, len(rep.Obs), l.ObsDim, len(rep.Mask), l.MaskLen)}
	}
	copy(a.obs[i*a.dim:], rep.Obs)
	copy(a.masks[i*a.ml:], rep.Mask)
	a.acting[i], a.ids[i] = j, rep.AgentID
	return nil
}
