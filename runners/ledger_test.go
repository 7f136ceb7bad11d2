package runners

import (
	"github.com/batonrl/baton/event"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newLedger returns a ledger of the agents "a" and "b" in episode 0.
func newLedger() *ledger {
	l := &ledger{}
	l.start()
	l.join("a")
	l.join("b")
	l.begin(0)
	return l
}

func TestLedgerSettle(t *testing.T) {
	type step struct {
		agent  int
		id     string
		reward float64
		tick   int
		done   bool
	}
	tests := []struct {
		name string
		// before runs on the ledger before the step is settled.
		before      func(t *testing.T, l *ledger)
		step        step
		want        float64
		wantSources []event.RewardSource
		wantReturns []float64
		wantPending int
	}{
		{
			name:        "the environment's reward",
			step:        step{0, "a_0", 1.5, 1, false},
			want:        1.5,
			wantSources: []event.RewardSource{{Source: event.SourceEnv, Value: 1.5}},
			wantReturns: []float64{1.5, 0},
		},
		{
			name:        "the end of a sub-episode",
			step:        step{1, "b_0", -1, 3, true},
			want:        -1,
			wantSources: []event.RewardSource{{Source: event.SourceEnv, Value: -1}},
			wantReturns: []float64{0, -1},
		},
		{
			name: "a pending reward joins the last step",
			before: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 0, 0, false)
				require.NoError(t, l.address("a_0", "actor:b", 2, 0))
			},
			step:        step{0, "a_0", 1, 1, true},
			want:        3,
			wantSources: []event.RewardSource{{Source: event.SourceEnv, Value: 1}, {Source: "actor:b", Value: 2}},
			wantReturns: []float64{3, 0},
		},
		{
			name: "a pending reward joins the next step",
			before: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 0, 0, false)
				require.NoError(t, l.address("a_0", "actor:b", 2, 0))
				require.NoError(t, l.address("a_0", "controller", -0.5, 0))
			},
			step:        step{0, "a_0", 1, 1, false},
			want:        2.5,
			wantSources: []event.RewardSource{{Source: event.SourceEnv, Value: 1}, {Source: "actor:b", Value: 2}, {Source: "controller", Value: -0.5}},
			wantReturns: []float64{2.5, 0},
		},
		{
			name: "a pending reward waits for its own id",
			before: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 0, 0, false)
				require.NoError(t, l.address("a_0", "actor:b", 2, 0))
			},
			step:        step{1, "b_0", 1, 1, false},
			want:        1,
			wantSources: []event.RewardSource{{Source: event.SourceEnv, Value: 1}},
			wantReturns: []float64{0, 1},
			wantPending: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			if tt.before != nil {
				tt.before(t, l)
			}
			s := tt.step
			total, sources := l.settle(s.agent, s.id, s.reward, s.tick, s.done)
			assert.Equal(t, tt.want, total)
			assert.Equal(t, tt.wantSources, sources)
			assert.Equal(t, tt.wantReturns, l.returns(0))
			assert.Len(t, l.pending, tt.wantPending)
			assert.Empty(t, l.unsent)
		})
	}
}

func TestLedgerRetro(t *testing.T) {
	retro := func(episode, tick int, id, source string, value float64, arrivedEpisode, arrivedTick int) event.RetroReward {
		name, _ := agentName(id)
		return event.RetroReward{Episode: episode, Tick: tick, AgentID: id, Agent: name, Source: source, Value: value, ArrivedEpisode: arrivedEpisode, ArrivedTick: arrivedTick}
	}
	tests := []struct {
		name        string
		run         func(t *testing.T, l *ledger)
		want        []event.RetroReward
		wantReturns [][]float64 // by episode
	}{
		{
			name: "an ended sub-episode is rewarded at its last step",
			run: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 1, 3, true)
				require.NoError(t, l.address("a_0", "actor:b", 0.5, 5))
			},
			want:        []event.RetroReward{retro(0, 3, "a_0", "actor:b", 0.5, 0, 5)},
			wantReturns: [][]float64{{1.5, 0}},
		},
		{
			name: "an earlier sub-episode of a live agent",
			run: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 0, 2, true)
				l.settle(0, "a_1", 0, 4, false)
				require.NoError(t, l.address("a_0", "actor:b", 1, 4))
				require.NoError(t, l.address("a_1", "actor:b", 2, 4)) // pending
			},
			want:        []event.RetroReward{retro(0, 2, "a_0", "actor:b", 1, 0, 4)},
			wantReturns: [][]float64{{1, 0}},
		},
		{
			name: "pending rewards left at the end go to the last step",
			run: func(t *testing.T, l *ledger) {
				l.settle(1, "b_0", 0, 6, false)
				require.NoError(t, l.address("b_0", "actor:a", 2, 6))
				l.unpend(7)
				assert.Empty(t, l.pending)
			},
			want:        []event.RetroReward{retro(0, 6, "b_0", "actor:a", 2, 0, 7)},
			wantReturns: [][]float64{{0, 2}},
		},
		{
			name: "feedback now is pending, its source the controller's",
			run: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 0, 1, false)
				l.feedback(Feedback{AgentID: "a_0", Tick: Now, Value: 3}, 1)
				total, sources := l.settle(0, "a_0", 0, 2, false)
				assert.Equal(t, 3.0, total)
				assert.Equal(t, []event.RewardSource{{Source: event.SourceEnv, Value: 0}, {Source: event.SourceController, Value: 3}}, sources)
			},
			wantReturns: [][]float64{{3, 0}},
		},
		{
			name: "feedback for a past tick of an earlier episode",
			run: func(t *testing.T, l *ledger) {
				l.settle(0, "a_0", 1, 1, true)
				l.begin(1)
				l.settle(1, "b_0", 1, 1, false)
				l.feedback(Feedback{AgentID: "b_0", Episode: 0, Tick: 1, Value: 4, Source: "person"}, 1)
			},
			want:        []event.RetroReward{retro(0, 1, "b_0", "person", 4, 1, 1)},
			wantReturns: [][]float64{{1, 4}, {0, 1}},
		},
		{
			name: "feedback dropped: an id not reported yet, an episode not begun",
			run: func(t *testing.T, l *ledger) {
				l.feedback(Feedback{AgentID: "a_0", Tick: Now, Value: 3}, 0)
				l.feedback(Feedback{AgentID: "a_0", Episode: 1, Tick: 0, Value: 3}, 0)
				l.feedback(Feedback{AgentID: "c_0", Episode: 0, Tick: 0, Value: 3}, 0)
				assert.Empty(t, l.pending)
			},
			wantReturns: [][]float64{{0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			tt.run(t, l)
			assert.Equal(t, tt.want, nilIfEmpty(l.unsent))
			assert.Equal(t, tt.want, l.received)
			for e, want := range tt.wantReturns {
				assert.Equal(t, want, l.returns(e), "episode %d", e)
			}
			l.sent()
			assert.Empty(t, l.unsent)
			assert.Equal(t, tt.want, l.received, "sent rewards stay received")
		})
	}
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestLedgerAddressErrors(t *testing.T) {
	tests := []struct {
		name string
		id   string
		msg  string
	}{
		{"unknown agent", "c_0", `runners: invalid reward address: "c_0" is not the id of an agent of the trial (agents: [a b])`},
		{"not an id", "a", `runners: invalid reward address: "a" is not the id of an agent of the trial (agents: [a b])`},
		{"not reported", "a_3", "runners: invalid reward address: agent a_3 has not been reported in episode 0"},
		{"before its first report", "b_0", "runners: invalid reward address: agent b_0 has not been reported in episode 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			l.settle(0, "a_0", 1, 1, false)
			err := l.address(tt.id, "actor:a", 1, 1)
			require.ErrorIs(t, err, ErrReward)
			assert.EqualError(t, err, tt.msg)
			// The ledger is as it was.
			assert.Empty(t, l.pending)
			assert.Empty(t, l.received)
			assert.Equal(t, []float64{1, 0}, l.returns(0))
		})
	}
}

func TestLedgerReuse(t *testing.T) {
	l := newLedger()
	l.settle(0, "a_0", 1, 1, true)
	require.NoError(t, l.address("a_0", "actor:b", 1, 1))
	l.settle(1, "b_0", 0, 1, false)
	require.NoError(t, l.address("b_0", "actor:a", 1, 1))
	returns, received := l.returns(0), l.received

	l.start()
	l.join("c")
	l.begin(0)
	assert.Equal(t, -1, l.agent("a_0"), "the previous trial's agents are gone")
	assert.Empty(t, l.pending)
	assert.Empty(t, l.unsent)
	assert.Nil(t, l.received)
	l.settle(0, "c_0", 5, 1, false)
	assert.Equal(t, []float64{5}, l.returns(0))
	assert.Equal(t, []float64{2, 0}, returns, "the previous trial's returns are its own")
	assert.Len(t, received, 1, "and so are its retroactive rewards")
	require.ErrorIs(t, l.address("a_0", "x", 1, 1), ErrReward)
}

func TestLedgerBegin(t *testing.T) {
	l := newLedger()
	l.settle(0, "a_0", 1, 1, true)
	l.settle(1, "b_0", 2, 1, false)
	require.NoError(t, l.address("b_0", "actor:a", 1, 1))
	l.begin(1)
	assert.Empty(t, l.pending, "a pending reward does not cross episodes")
	assert.Empty(t, l.ends)
	require.ErrorIs(t, l.address("a_0", "x", 1, 0), ErrReward, "ids start afresh")
	assert.Equal(t, []float64{1, 2}, l.returns(0))
	assert.Equal(t, []float64{0, 0}, l.returns(1))
	assert.Len(t, l.returns(1), 2)
	assert.Equal(t, 2, cap(l.returns(0)), "an episode's returns cannot grow into the next's")
}
