package runners_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// learning records what a policy is told, copying the slices it must not retain.
type learning struct {
	agent.Policy
	outcomes []runners.Outcome
	ended    string // the agent id whose sub-episode ended last, until taken
	failAt   int    // when > 0, the outcome of that number (from 1) fails
	panicAt  int    // when > 0, the outcome of that number (from 1) panics
}

var errLearn = errors.New("learning: failing as configured")

func (l *learning) Learn(_ context.Context, o *runners.Outcome) error {
	c := *o
	c.Sources, c.Obs, c.Mask = slices.Clone(o.Sources), slices.Clone(o.Obs), slices.Clone(o.Mask)
	l.outcomes = append(l.outcomes, c)
	switch {
	case o.Kind == runners.OutcomeStep && o.Last:
		l.ended = o.AgentID
	case o.Kind == runners.OutcomeEpisodeEnd:
		l.ended = ""
	}
	switch len(l.outcomes) {
	case l.failAt:
		return errLearn
	case l.panicAt:
		panic("learning: panicking as configured")
	}
	return nil
}

func (l *learning) kind(k runners.OutcomeKind) []runners.Outcome {
	var out []runners.Outcome
	for _, o := range l.outcomes {
		if o.Kind == k {
			out = append(out, o)
		}
	}
	return out
}

// thanker plays the oracle and, when it acts, rewards the last ended motion
// sub-episode retroactively.
type thanker struct {
	*maze.Oracle
	motion *learning
	value  float64
}

func (th *thanker) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	if th.motion.ended != "" {
		if err := x.Reward(th.motion.ended, th.value); err != nil {
			return agent.RawAction{}, err
		}
		th.motion.ended = ""
	}
	return th.Act(ctx, obs, mask)
}

func TestLearnerSeesWhatTheSinksSee(t *testing.T) {
	defer goleak.VerifyNone(t)
	m, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	tests := []struct {
		name     string
		seed     uint64
		motion   func(rng *rand.Rand) agent.Policy
		maxTicks int
		episodes int
		retro    float64
	}{
		{"forward", 1, func(*rand.Rand) agent.Policy { return maze.AlwaysForward() }, 0, 2, 0.5},
		{"random, cut at the tick limit", 7, func(rng *rand.Rand) agent.Policy {
			p, err := agent.Random(m.Agents()[1].ActionSpace(), rng)
			require.NoError(t, err)
			return p
		}, 25, 3, -0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			motion := &learning{Policy: tt.motion(rand.New(rand.NewPCG(tt.seed, 1)))}
			strategy := &thanker{Oracle: maze.NewOracle(m.Maze()), motion: motion, value: tt.retro}
			spec := runners.Spec{Env: "maze", Seed: tt.seed, Episodes: tt.episodes, MaxTicks: tt.maxTicks,
				Actors: map[string]runners.Actor{maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Value(motion)}}
			res, rec := runOne(t, testRegistry(t), spec)
			require.Equal(t, event.Ended, res.State, "%v", res.Err)

			var steps []runners.Outcome
			var retros []event.RetroReward
			for _, e := range rec.events(res.ID) {
				switch {
				case e.Kind == event.KindStep && e.Step.Agent == maze.MotionName:
					s := e.Step
					steps = append(steps, runners.Outcome{Kind: runners.OutcomeStep, Trial: res.ID, Episode: s.Episode, Tick: s.Tick,
						Agent: s.Agent, AgentID: s.AgentID, Reward: s.Reward, Sources: s.Sources,
						Terminated: s.Terminated, Truncated: s.Truncated, Start: s.Start, Last: s.Terminated || s.Truncated,
						SpanTicks: s.SpanTicks, Obs: s.Obs, Mask: s.Mask})
				case e.Kind == event.KindReward:
					retros = append(retros, *e.Reward)
				}
			}
			require.NotEmpty(t, steps)
			assert.Equal(t, steps, motion.kind(runners.OutcomeStep))

			require.NotEmpty(t, retros)
			var told []event.RetroReward
			for _, o := range motion.kind(runners.OutcomeRetro) {
				require.Len(t, o.Sources, 1)
				assert.Equal(t, o.Reward, o.Sources[0].Value)
				told = append(told, event.RetroReward{Episode: o.RetroEpisode, Tick: o.Tick, AgentID: o.AgentID, Agent: o.Agent,
					Source: o.Sources[0].Source, Value: o.Reward, ArrivedEpisode: o.Episode, ArrivedTick: o.ArrivedTick})
			}
			assert.Equal(t, retros, told)
			assert.Equal(t, res.Retro, told)
			for _, r := range told { // each retroactive reward addresses the last step of its id
				k := slices.IndexFunc(steps, func(o runners.Outcome) bool { return o.Episode == r.Episode && o.AgentID == r.AgentID && o.Last })
				require.GreaterOrEqual(t, k, 0, r.AgentID)
				assert.Equal(t, steps[k].Tick, r.Tick)
				assert.Equal(t, steps[k].Episode, r.Episode)
			}

			type epID struct {
				episode int
				id      string
			}
			ends := map[epID]int{}
			for _, o := range steps {
				if o.Last {
					ends[epID{o.Episode, o.AgentID}]++
				}
			}
			require.NotEmpty(t, ends)
			for id, n := range ends { // ids are reused from episode to episode
				assert.Equal(t, 1, n, id)
			}
			var episodes []int
			for _, o := range motion.kind(runners.OutcomeEpisodeEnd) {
				episodes = append(episodes, o.Episode)
				assert.Equal(t, res.Episodes[o.Episode].Ticks, o.Tick)
				assert.Equal(t, res.Episodes[o.Episode].Truncated, o.Truncated)
				assert.Equal(t, maze.MotionName, o.Agent)
			}
			assert.Equal(t, []int{0, 1, 2}[:tt.episodes], episodes)
			last := motion.outcomes[len(motion.outcomes)-1]
			assert.Equal(t, runners.OutcomeEpisodeEnd, last.Kind)
		})
	}
}

func TestLearnerFromTheController(t *testing.T) {
	defer goleak.VerifyNone(t)
	gate := make(chan struct{})
	motion := &learning{Policy: maze.AlwaysForward()}
	blocked := make(chan struct{})
	strategy := &blockAt{Policy: agent.Policy(nil), at: 2, blocked: blocked, gate: gate}
	m, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	strategy.Policy = maze.NewOracle(m.Maze())
	c, err := runners.NewController(testRegistry(t), runners.WithWorkers(1))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Seed: 2,
		Actors: map[string]runners.Actor{maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Value(motion)}})
	require.NoError(t, err)
	<-blocked // the strategy's second decision: motion_0 has ended at tick 2
	require.NoError(t, c.Reward(id, runners.Feedback{AgentID: "motion_0", Episode: 0, Tick: 2, Value: 3, Source: "teacher"}))
	close(gate)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, event.Ended, res.State, "%v", res.Err)
	retro := motion.kind(runners.OutcomeRetro)
	require.Len(t, retro, 1)
	o := retro[0]
	assert.Equal(t, "motion_0", o.AgentID)
	assert.Equal(t, 2, o.Tick)
	assert.Equal(t, 0, o.RetroEpisode)
	assert.Equal(t, 3.0, o.Reward)
	assert.Equal(t, []event.RewardSource{{Source: "teacher", Value: 3}}, o.Sources)
}

// blockAt plays Policy, and before its call number at (from 1) says so on blocked and
// waits for gate.
type blockAt struct {
	agent.Policy
	at, n         int
	blocked, gate chan struct{}
}

func (b *blockAt) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	b.n++
	if b.n == b.at {
		close(b.blocked)
		<-b.gate
	}
	return b.Policy.Act(ctx, obs, mask)
}

func TestLearnerFailures(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name    string
		l       *learning
		wantErr error
		where   string
	}{
		{"error", &learning{Policy: maze.AlwaysForward(), failAt: 3}, runners.ErrPolicy, ""},
		{"panic", &learning{Policy: maze.AlwaysForward(), panicAt: 3}, nil, "policy of motion_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runners.Spec{Env: "maze", Seed: 1, Actors: map[string]runners.Actor{maze.MotionName: runners.Value(tt.l)}}
			res, _ := runOne(t, testRegistry(t), spec)
			require.Equal(t, event.Failed, res.State)
			var te *runners.TrialError
			require.ErrorAs(t, res.Err, &te)
			assert.Equal(t, 3, te.Tick) // the third outcome: motion_1's start
			if tt.wantErr != nil {
				require.ErrorIs(t, res.Err, tt.wantErr)
				require.ErrorIs(t, res.Err, errLearn)
				return
			}
			var pe *runners.PanicError
			require.ErrorAs(t, res.Err, &pe)
			assert.Equal(t, tt.where, pe.Where)
		})
	}
}

// qlearner is an epsilon-greedy tabular Q-learner for the maze's strategy agent: its
// state is the position in the observation, its actions the four directions, masked.
type qlearner struct {
	rng           *rand.Rand
	q             map[[2]int][4]float64
	alpha, gamma  float64
	epsilon       float64
	state         [2]int
	action        int
	acted         bool
	allowed, ties []int
}

func newQLearner(seed uint64) *qlearner {
	return &qlearner{rng: rand.New(rand.NewPCG(seed, 0)), q: map[[2]int][4]float64{}, alpha: 0.5, gamma: 0.95, epsilon: 0.2}
}

// position reads the position from a strategy observation: the map, then row and
// column, then the four mask entries.
func position(obs []float32) [2]int {
	n := len(obs)
	return [2]int{int(obs[n-6]), int(obs[n-5])}
}

func (l *qlearner) Act(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	s := position(obs)
	l.allowed = l.allowed[:0]
	for a, ok := range mask {
		if ok {
			l.allowed = append(l.allowed, a)
		}
	}
	if len(l.allowed) == 0 {
		return agent.RawAction{}, errors.New("qlearner: no allowed action")
	}
	a := l.allowed[l.rng.IntN(len(l.allowed))]
	if l.rng.Float64() >= l.epsilon {
		q := l.q[s]
		l.ties = l.ties[:0]
		for _, b := range l.allowed {
			switch {
			case len(l.ties) == 0 || q[b] > q[l.ties[0]]:
				l.ties = append(l.ties[:0], b)
			case q[b] == q[l.ties[0]]:
				l.ties = append(l.ties, b)
			}
		}
		a = l.ties[l.rng.IntN(len(l.ties))]
	}
	l.state, l.action, l.acted = s, a, true
	return agent.RawAction{Int: int64(a)}, nil
}

func (l *qlearner) Learn(_ context.Context, o *runners.Outcome) error {
	if o.Kind == runners.OutcomeEpisodeEnd {
		l.acted = false
	}
	if o.Kind != runners.OutcomeStep || o.Start || !l.acted {
		return nil
	}
	target := o.Reward
	if !o.Terminated {
		next := l.q[position(o.Obs)]
		best := math.Inf(-1)
		for a, ok := range o.Mask {
			if ok {
				best = max(best, next[a])
			}
		}
		if !math.IsInf(best, -1) {
			target += l.gamma * best
		}
	}
	q := l.q[l.state]
	q[l.action] += l.alpha * (target - q[l.action])
	l.q[l.state] = q
	l.acted = !o.Last
	return nil
}

func TestLearnerQLearning(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name          string
		seed          uint64
		trials, block int
	}{
		{"seed 1", 1, 400, 50},
		{"seed 9", 9, 400, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			learner := newQLearner(tt.seed)
			spec := runners.Spec{Env: "maze", Seed: tt.seed,
				Actors: map[string]runners.Actor{maze.StrategyName: runners.Value(learner), maze.MotionName: runners.Named("forward")}}
			success := make([]bool, tt.trials)
			c, err := runners.NewCampaign(testRegistry(t), spec, runners.WithTrials(tt.trials), runners.WithWorkers(1),
				runners.WithProgress(func(p runners.Progress) {
					require.Equal(t, event.Ended, p.Result.State, "%v", p.Result.Err)
					success[p.Index] = p.Result.Episodes[0].Success
				}))
			require.NoError(t, err)
			_, err = c.Run(t.Context())
			require.NoError(t, err)
			rate := func(s []bool) float64 {
				n := 0
				for _, ok := range s {
					if ok {
						n++
					}
				}
				return float64(n) / float64(len(s))
			}
			first, last := rate(success[:tt.block]), rate(success[tt.trials-tt.block:])
			t.Logf("success: first %d trials %.2f, last %d trials %.2f", tt.block, first, tt.block, last)
			assert.Greater(t, last, first+0.3)
			assert.Greater(t, last, 0.6)
		})
	}
}
