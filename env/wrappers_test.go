package env_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
)

// Actions of the counter.
var (
	down  = agent.Discrete(0)
	stay  = agent.Discrete(1)
	up    = agent.Discrete(2)
	wrong = agent.Discrete(7)
)

func stepString(st env.Step) string {
	return fmt.Sprintf("obs %v r=%v term=%v trunc=%v", st.Obs, st.Reward, st.Terminated, st.Truncated)
}

// playSteps plays actions and formats each Step, or the error.
func playSteps(e env.Env, actions ...agent.RawAction) []string {
	var out []string
	for _, a := range actions {
		st, err := e.Step(a)
		if err != nil {
			out = append(out, "error: "+err.Error())
			continue
		}
		out = append(out, stepString(st))
	}
	return out
}

func TestTimeLimit(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		seed    uint64
		actions []agent.RawAction
		want    []string
	}{
		{"truncates", 2, 0, []agent.RawAction{up, up, up}, []string{
			"obs [1] r=1 term=false trunc=false",
			"obs [2] r=1 term=false trunc=true",
			"error: env: episode is over: time limit of 2 steps",
		}},
		{"terminated at the limit is not truncated", 3, 0, []agent.RawAction{up, up, up, up}, []string{
			"obs [1] r=1 term=false trunc=false",
			"obs [2] r=1 term=false trunc=false",
			"obs [3] r=1 term=true trunc=false",
			"error: env: episode is over: time limit of 3 steps",
		}},
		{"terminated before the limit", 10, 1, []agent.RawAction{up, up, stay}, []string{
			"obs [2] r=1 term=false trunc=false",
			"obs [3] r=1 term=true trunc=false",
			"error: env: episode is over: time limit of 10 steps",
		}},
		{"0: no limit", 0, 0, []agent.RawAction{stay, stay, stay, stay}, []string{
			"obs [0] r=0 term=false trunc=false",
			"obs [0] r=0 term=false trunc=false",
			"obs [0] r=0 term=false trunc=false",
			"obs [0] r=0 term=false trunc=false",
		}},
		{"negative: no limit", -3, 0, []agent.RawAction{stay, stay}, []string{
			"obs [0] r=0 term=false trunc=false",
			"obs [0] r=0 term=false trunc=false",
		}},
		{"errors pass through and do not count", 2, 0, []agent.RawAction{down, wrong, up, up, up}, []string{
			"error: counter: below zero",
			"error: spaces: value outside Discrete(3): 7 is above the high bound 2",
			"obs [1] r=1 term=false trunc=false",
			"obs [2] r=1 term=false trunc=true",
			"error: env: episode is over: time limit of 2 steps",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCounter(3)
			e := env.TimeLimit(c, tt.max)
			assert.Equal(t, c.Spec(), e.Spec())
			_, err := e.Step(up)
			require.ErrorIs(t, err, env.ErrNotReset)
			st, err := e.Reset(tt.seed)
			require.NoError(t, err)
			assert.Equal(t, []float32{float32(tt.seed)}, st.Obs)
			assert.Equal(t, tt.want, playSteps(e, tt.actions...))
			assert.Equal(t, counterInfo{c.pos}, e.Info())

			// Reset starts the count again.
			_, err = e.Reset(tt.seed)
			require.NoError(t, err)
			assert.Equal(t, tt.want, playSteps(e, tt.actions...))
		})
	}
}

func TestEpisodeStats(t *testing.T) {
	c := newCounter(3)
	s := env.EpisodeStats(env.TimeLimit(c, 6))
	assert.Equal(t, c.Spec(), s.Spec())

	_, err := s.Reset(0)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"obs [1] r=1 term=false trunc=false",
		"error: spaces: value outside Discrete(3): 7 is above the high bound 2",
	}, playSteps(s, up, wrong))
	assert.Equal(t, env.Episode{Return: 1, Length: 1}, s.Current(), "the failed step is not counted")
	assert.Equal(t, counterInfo{1}, s.Info(), "no episode ended")
	playSteps(s, down, down, up, up) // the second down is below zero
	assert.Equal(t, env.Episode{Return: 2, Length: 4}, s.Current())
	assert.Zero(t, s.Episodes())
	playSteps(s, up) // terminated
	want := env.Episode{Return: 3, Length: 5, Terminated: true}
	assert.Equal(t, want, s.Last())
	assert.Equal(t, map[string]any{env.InfoKeyEnv: counterInfo{3}, env.InfoKeyEpisode: want}, s.Info())
	assert.Equal(t, 1, s.Episodes())
	assert.Equal(t, 5, s.Steps())
	assert.Equal(t, env.Episode{}, s.Current())

	// Cut short by a Reset: not recorded.
	_, err = s.Reset(1)
	require.NoError(t, err)
	assert.Equal(t, counterInfo{1}, s.Info(), "Reset forgets the ended episode")
	playSteps(s, stay)
	_, err = s.Reset(1)
	require.NoError(t, err)
	assert.Equal(t, 1, s.Episodes())
	assert.Equal(t, 6, s.Steps())

	// Truncated by the time limit inside.
	playSteps(s, stay, down, stay, stay, stay, stay)
	want = env.Episode{Return: -1, Length: 6, Truncated: true}
	assert.Equal(t, want, s.Last())
	assert.Equal(t, 2, s.Episodes())
	assert.Equal(t, 12, s.Steps())
	assert.Equal(t, want, s.Info().(map[string]any)[env.InfoKeyEpisode])

	t.Run("the order of wrappers matters", func(t *testing.T) {
		inner := env.EpisodeStats(newCounter(3))
		e := env.TimeLimit(inner, 2)
		_, err := e.Reset(0)
		require.NoError(t, err)
		playSteps(e, stay, stay)
		assert.Zero(t, inner.Episodes(), "inside the time limit, stats do not see its truncation")
		assert.Equal(t, 2, inner.Steps())
	})
}

func TestActionMaskInfo(t *testing.T) {
	c := newCounter(2)
	e := env.ActionMaskInfo(c)
	assert.Equal(t, c.Spec(), e.Spec())
	assert.Equal(t, counterInfo{0}, e.Info(), "nothing to add before Reset")
	_, err := e.Reset(0)
	require.NoError(t, err)
	info := e.Info().(map[string]any)
	assert.Equal(t, map[string]any{env.InfoKeyEnv: counterInfo{0}, env.InfoKeyActionMask: []bool{false, true, true}}, info)
	info[env.InfoKeyActionMask].([]bool)[0] = true
	assert.Equal(t, []bool{false, true, true}, c.mask[:], "Info returns a copy")

	playSteps(e, up, wrong)
	assert.Equal(t, []bool{true, true, true}, e.Info().(map[string]any)[env.InfoKeyActionMask], "the failed step changed nothing")

	t.Run("over a map", func(t *testing.T) {
		e := env.ActionMaskInfo(env.EpisodeStats(newCounter(1)))
		_, err := e.Reset(0)
		require.NoError(t, err)
		playSteps(e, up)
		assert.Equal(t, map[string]any{
			env.InfoKeyEnv:        counterInfo{1},
			env.InfoKeyEpisode:    env.Episode{Return: 1, Length: 1, Terminated: true},
			env.InfoKeyActionMask: []bool{true, true, true},
		}, e.Info())
	})

	t.Run("no mask", func(t *testing.T) {
		e := env.ActionMaskInfo(noMask{newCounter(2)})
		_, err := e.Reset(0)
		require.NoError(t, err)
		assert.Equal(t, counterInfo{0}, e.Info())
	})
}

// noMask is an Env that reports no action mask.
type noMask struct{ env.Env }

func (n noMask) Reset(seed uint64) (env.Step, error) {
	st, err := n.Env.Reset(seed)
	st.Mask = nil
	return st, err
}

func TestAs(t *testing.T) {
	c := newCounter(3)
	stats := env.EpisodeStats(c)
	e := env.ActionMaskInfo(env.TimeLimit(stats, 5))

	got, ok := env.As[*env.Stats](e)
	assert.True(t, ok)
	assert.Same(t, stats, got)
	inner, ok := env.As[*counter](e)
	assert.True(t, ok)
	assert.Same(t, c, inner)
	_, ok = env.As[*env.View](e)
	assert.False(t, ok)
	_, ok = env.As[noMask](e)
	assert.False(t, ok)
	self, ok := env.As[env.Env](e)
	assert.True(t, ok)
	assert.Same(t, e, self)
	_, ok = env.As[*counter](nil)
	assert.False(t, ok)
}

func TestWrapperAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	e := env.EpisodeStats(env.TimeLimit(env.ActionMaskInfo(newCounter(1000)), 50))
	_, err := e.Reset(0)
	require.NoError(t, err)
	n := 0
	allocs := testing.AllocsPerRun(1000, func() {
		n++
		st, err := e.Step(agent.Discrete(int64(1 + n%2)))
		if err == nil && st.Done() {
			_, err = e.Reset(0)
		}
		if err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Positive(t, e.Episodes())
}
