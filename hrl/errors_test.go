package hrl_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corridorEpisode plays a whole corridor episode.
var corridorEpisode = []move{
	d("planner_0", 2), d("walker_0", 1), d("walker_0", 1), d("walker_0", 1),
	d("planner_0", 2), d("walker_1", 1), d("walker_1", 1), d("walker_1", 1),
}

// TestStepErrors plays moves, then a bad step, and checks the error, that the runtime
// is exactly as it was, and that the rest of the episode is the one a twin runtime that
// never saw the bad step plays.
func TestStepErrors(t *testing.T) {
	box := func(v ...float32) agent.RawAction { return agent.Continuous(v) }
	ints := func(v ...int64) agent.RawAction { return agent.MultiInts(v) }
	tests := []struct {
		name    string
		env     func() *testEnv
		noReset bool   // the bad step comes before any reset
		before  []move // played after the reset, before the bad step
		bad     move
		kind    error  // the sentinel
		cause   error  // the cause errors.Is must also find, nil when there is none
		acting  string // StepError.Acting
		after   []move // played after the bad step (after a new reset when there is no episode to go on with)
	}{
		{
			name: "step before reset", env: corridorEnv, noReset: true,
			bad: d("planner_0", 0), kind: env.ErrNotReset,
			after: corridorEpisode,
		},
		{
			name: "step after the end", env: corridorEnv, before: corridorEpisode,
			bad: d("planner_0", 0), kind: env.ErrEpisodeOver,
			after: corridorEpisode,
		},
		{
			name: "step after the end, another id", env: corridorEnv, before: corridorEpisode,
			bad: d("walker_1", 1), kind: env.ErrEpisodeOver,
			after: corridorEpisode[:3],
		},
		{
			name: "the parent while its child acts", env: corridorEnv, before: corridorEpisode[:2],
			bad: d("planner_0", 0), kind: env.ErrNotActing, acting: "walker_0",
			after: corridorEpisode[2:],
		},
		{
			name: "an agent of the environment that is not in control", env: corridorEnv,
			bad: d("walker_0", 1), kind: env.ErrNotActing, acting: "planner_0",
			after: corridorEpisode,
		},
		{
			name: "an id of a later sub-episode", env: corridorEnv, before: corridorEpisode[:2],
			bad: d("walker_1", 1), kind: env.ErrNotActing, acting: "walker_0",
			after: corridorEpisode[2:],
		},
		{
			name: "an id of an ended sub-episode", env: corridorEnv, before: corridorEpisode[:5],
			bad: d("walker_0", 1), kind: env.ErrNotActing, acting: "walker_1",
			after: corridorEpisode[5:],
		},
		{
			name: "an unknown id", env: corridorEnv,
			bad: d("nobody_0", 0), kind: env.ErrNotActing, acting: "planner_0",
			after: corridorEpisode,
		},
		{
			name: "an empty id", env: corridorEnv,
			bad: d("", 0), kind: env.ErrNotActing, acting: "planner_0",
			after: corridorEpisode,
		},
		{
			name: "above the Discrete space", env: corridorEnv, before: corridorEpisode[:1],
			bad: d("walker_0", 3), kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "walker_0",
			after: corridorEpisode[1:],
		},
		{
			name: "below the Discrete space", env: corridorEnv,
			bad: d("planner_0", -1), kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "planner_0",
			after: corridorEpisode,
		},
		{
			name: "Floats for a Discrete agent", env: corridorEnv,
			bad: move{"planner_0", box(1)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "planner_0",
			after: corridorEpisode,
		},
		{
			name: "Ints for a Discrete agent", env: corridorEnv, before: corridorEpisode[:1],
			bad: move{"walker_0", ints(1)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "walker_0",
			after: corridorEpisode[1:],
		},
		{
			name: "empty Ints for a Discrete agent", env: corridorEnv,
			bad: move{"planner_0", agent.MultiInts([]int64{})}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "planner_0",
			after: corridorEpisode,
		},
		{
			name: "DecodeAction refuses", env: corridorEnv, before: corridorEpisode[:2],
			bad: d("walker_0", 2), kind: env.ErrInvalidAction, cause: errStumble, acting: "walker_0",
			after: corridorEpisode[2:],
		},
		{
			name: "the environment refuses", env: corridorEnv, before: corridorEpisode[:1],
			bad: d("walker_0", 0), kind: env.ErrRejected, cause: errBlocked, acting: "walker_0",
			after: corridorEpisode[1:],
		},
		{
			name: "the environment refuses a lateral successor", env: lateralEnv,
			before: []move{d("planner_0", 0), d("a_0", 1), d("b_0", 0)},
			bad:    d("b_0", 0), kind: env.ErrRejected, cause: errBlocked, acting: "b_0",
			after: []move{d("b_0", 1), d("planner_0", 1)},
		},
		{
			name: "a procedure refuses", env: procedureEnv,
			before: []move{d("planner_0", 0), d("walker_0", 1), d("planner_0", 2)},
			bad:    d("planner_0", 2), kind: env.ErrRejected, cause: errOvershoot, acting: "planner_0",
			after: []move{d("planner_0", 0), d("walker_1", 1), d("planner_0", 0), d("walker_2", 1)},
		},
		{
			name: "no trigger matches a switching action", env: procedureEnv,
			bad: d("planner_0", 1), kind: hrl.ErrNoTrigger, acting: "planner_0",
			after: []move{d("planner_0", 2), d("planner_0", 2)},
		},
		{
			name: "no trigger matches, after OnStep changed the state", env: hookedEnv,
			before: []move{d("planner_0", 0), d("walker_0", 1), d("walker_0", 1)},
			bad:    d("planner_0", 2), kind: hrl.ErrNoTrigger, acting: "planner_0",
			after: []move{d("planner_0", 1), d("walker_1", 1)},
		},
		{
			name: "DecodeAction refuses a hooked agent", env: hookedEnv, before: []move{d("planner_0", 1)},
			bad: d("walker_0", 2), kind: env.ErrInvalidAction, cause: errStumble, acting: "walker_0",
			after: []move{d("walker_0", 1)},
		},
		{
			name: "a three-level stack", env: threeLevelEnv, before: []move{d("top_0", 2), d("mid_0", 2)},
			bad: d("mid_0", 0), kind: env.ErrNotActing, acting: "low_0",
			after: []move{d("low_0", 1), d("low_0", 1), d("low_0", 1), d("top_0", 0)},
		},
		{
			name: "no Box action", env: boxEnv,
			bad: move{"box_0", agent.RawAction{}}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}, {"box_0", box(0, 0)}, {"box_0", box(1, 1)}},
		},
		{
			name: "an empty Box action", env: boxEnv,
			bad: move{"box_0", box()}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "a Box action too long", env: boxEnv, before: []move{{"box_0", box(1, 0)}},
			bad: move{"box_0", box(0, 0, 0)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "NaN in a Box action", env: boxEnv,
			bad: move{"box_0", box(float32(math.NaN()), 0)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "a Box action above the bound", env: boxEnv,
			bad: move{"box_0", box(0, 2)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "a Discrete action for a Box agent", env: boxEnv,
			bad: d("box_0", 1), kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "a Box action with Int set too", env: boxEnv,
			bad: move{"box_0", agent.RawAction{Int: 1, Floats: []float32{1, 0}}}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "Ints for a Box agent", env: boxEnv,
			bad: move{"box_0", agent.RawAction{Ints: []int64{1, 0}, Floats: []float32{1, 0}}}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "box_0",
			after: []move{{"box_0", box(1, 0)}},
		},
		{
			name: "no MultiDiscrete action", env: multiEnv,
			bad: move{"multi_0", agent.RawAction{}}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "multi_0",
			after: []move{{"multi_0", ints(2, 1)}, {"multi_0", ints(0, 0)}},
		},
		{
			name: "a MultiDiscrete entry above its bound", env: multiEnv, before: []move{{"multi_0", ints(1, 0)}},
			bad: move{"multi_0", ints(3, 0)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "multi_0",
			after: []move{{"multi_0", ints(2, 1)}},
		},
		{
			name: "a MultiDiscrete action too short", env: multiEnv,
			bad: move{"multi_0", ints(1)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "multi_0",
			after: []move{{"multi_0", ints(2, 1)}},
		},
		{
			name: "Floats for a MultiDiscrete agent", env: multiEnv,
			bad: move{"multi_0", agent.RawAction{Ints: []int64{1, 1}, Floats: []float32{}}}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "multi_0",
			after: []move{{"multi_0", ints(2, 1)}},
		},
		{
			name: "no MultiBinary action", env: bitsEnv,
			bad: move{"bits_0", agent.RawAction{}}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "bits_0",
			after: []move{{"bits_0", ints(1, 0)}},
		},
		{
			name: "a MultiBinary entry that is not a bit", env: bitsEnv,
			bad: move{"bits_0", ints(2, 0)}, kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "bits_0",
			after: []move{{"bits_0", ints(1, 0)}},
		},
		{
			name: "a Discrete action for a MultiBinary agent", env: bitsEnv,
			bad: d("bits_0", 1), kind: env.ErrOutsideSpace, cause: spaces.ErrOutside, acting: "bits_0",
			after: []move{{"bits_0", ints(1, 0)}},
		},
	}
	kinds := []error{env.ErrNotReset, env.ErrEpisodeOver, env.ErrNotActing, env.ErrOutsideSpace,
		env.ErrInvalidAction, env.ErrRejected, hrl.ErrNoTrigger}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.env(), hrl.Config{})
			twin := newRuntime(t, tt.env(), hrl.Config{})
			var last env.Turn
			if !tt.noReset {
				last = mustReset(t, rt, seed)
				mustReset(t, twin, seed)
				for i, m := range tt.before {
					var err error
					last, err = rt.Step(m.id, m.raw)
					require.NoError(t, err, "move %d", i)
				}
				playMoves(t, twin, tt.before)
			}
			lastSnap := snap(rt, last)
			state, tick, acting, over := rt.State(), rt.Tick(), rt.Acting(), rt.Over()
			require.Equal(t, tt.acting, acting)
			raw := tt.bad.raw
			raw.Ints, raw.Floats = slices.Clone(raw.Ints), slices.Clone(raw.Floats)

			var res env.Turn
			var err error
			require.NotPanics(t, func() { res, err = rt.Step(tt.bad.id, raw) })
			require.Error(t, err)
			assert.Empty(t, res.Reports)

			// The error: the sentinel, the cause, and a *StepError saying who, what and why.
			assert.ErrorIs(t, err, tt.kind)
			for _, k := range kinds {
				if k != tt.kind {
					assert.NotErrorIs(t, err, k)
				}
			}
			var se *env.StepError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.bad.id, se.AgentID)
			assert.Equal(t, tt.acting, se.Acting)
			assert.Equal(t, rawText(tt.bad.raw), rawText(se.Action))
			assert.Equal(t, tt.kind, se.Kind)
			if tt.cause != nil {
				assert.ErrorIs(t, err, tt.cause)
				assert.ErrorIs(t, se.Err, tt.cause)
				assert.Contains(t, err.Error(), se.Err.Error())
			} else {
				assert.NoError(t, se.Err)
			}
			assert.Contains(t, err.Error(), tt.kind.Error())
			assert.Contains(t, err.Error(), "agent "+tt.bad.id)
			if errors.Is(err, env.ErrNotActing) {
				assert.Contains(t, err.Error(), "(acting: "+tt.acting+")")
			}
			// The error keeps its own copy of the action.
			for i := range raw.Ints {
				raw.Ints[i] = 99
			}
			for i := range raw.Floats {
				raw.Floats[i] = 99
			}
			assert.Equal(t, rawText(tt.bad.raw), rawText(se.Action))

			// Nothing changed: the state, the clock, who acts, the last result.
			assert.Equal(t, state, rt.State())
			assert.Equal(t, tick, rt.Tick())
			assert.Equal(t, acting, rt.Acting())
			assert.Equal(t, over, rt.Over())
			assert.Equal(t, lastSnap, snap(rt, last))
			assert.Equal(t, twin.State(), rt.State())

			// The rest of the episode is the twin's.
			if tt.noReset || over {
				assert.Equal(t, snap(twin, mustReset(t, twin, seed+1)), snap(rt, mustReset(t, rt, seed+1)))
			}
			assert.Equal(t, playMoves(t, twin, tt.after), playMoves(t, rt, tt.after))
		})
	}
}

// rawText spells out every field of a raw action, nil and NaN included, for
// comparisons.
func rawText(r agent.RawAction) string {
	bits := make([]uint32, len(r.Floats))
	for i, f := range r.Floats {
		bits[i] = math.Float32bits(f)
	}
	return fmt.Sprintf("%d %#v %v %v", r.Int, r.Ints, r.Floats == nil, bits)
}

// TestStepErrorText checks the messages, which name the agent, the action and the
// reason.
func TestStepErrorText(t *testing.T) {
	rt := newRuntime(t, procedureEnv(), hrl.Config{})
	_, err := rt.Step("planner_0", agent.Discrete(1))
	assert.EqualError(t, err, "env: environment not reset: agent planner_0, action 1")
	mustReset(t, rt, seed)
	_, err = rt.Step("walker_0", agent.Discrete(1))
	assert.EqualError(t, err, "env: agent is not acting: agent walker_0, action 1 (acting: planner_0)")
	_, err = rt.Step("planner_0", agent.Discrete(1))
	assert.EqualError(t, err, "hrl: no trigger matches the switching action: agent planner_0, action 1")
	_, err = rt.Step("planner_0", agent.Continuous([]float32{1.5}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "env: action outside the action space: agent planner_0, action [1.5]: spaces: value outside Discrete(3): ")
	playMoves(t, rt, []move{d("planner_0", 2)})
	playMoves(t, rt, []move{d("planner_0", 0), d("walker_0", 1)})
	_, err = rt.Step("planner_0", agent.Discrete(2))
	assert.EqualError(t, err, `env: environment rejected the action: agent planner_0, action 2: procedure "jump": test: the jump overshoots exit: from 4 by 3`)
	playMoves(t, rt, []move{d("planner_0", 0), d("walker_1", 1), d("planner_0", 0), d("walker_2", 1)})
	require.True(t, rt.Over())
	_, err = rt.Step("walker_2", agent.Discrete(1))
	assert.EqualError(t, err, "env: episode is over: agent walker_2, action 1")
	_, err = rt.Step("", agent.Discrete(1))
	assert.EqualError(t, err, "env: episode is over: agent , action 1")

	se := &env.StepError{AgentID: "x_0", Kind: env.ErrNotActing, Action: agent.Discrete(3)}
	assert.EqualError(t, se, "env: agent is not acting: agent x_0, action 3 (no agent is acting)")
	assert.Equal(t, []error{env.ErrNotActing}, se.Unwrap())
}
