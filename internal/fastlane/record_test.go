package fastlane_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/replay"
)

// loggedRow is what a test expects of a row of the log.
type loggedRow struct {
	Tick                  int
	Start, Acting         bool
	Obs                   []float32
	Action                int64
	Reward                float64
	Terminated, Truncated bool
}

// readTrials reads the rows of agent name in dir, per trial, and the log.
func readTrials(t *testing.T, dir, name string) (*datalog.Log, map[string][]loggedRow) {
	t.Helper()
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	got := map[string][]loggedRow{}
	for r, err := range l.Rows(name) {
		require.NoError(t, err)
		got[r.Trial] = append(got[r.Trial], loggedRow{Tick: r.Tick, Start: r.Start, Acting: r.Acting, Obs: slices.Clone(r.Obs),
			Action: r.Action.Int, Reward: r.Reward, Terminated: r.Terminated, Truncated: r.Truncated})
	}
	return l, got
}

// replays checks that replay.Run finds the log in dir as the environment plays.
func replays(t *testing.T, dir string, trials int) {
	t.Helper()
	rep, err := replay.Run(bg, dir, testRegistry(t))
	require.NoError(t, err)
	assert.Equal(t, trials, rep.Trials)
	assert.Empty(t, rep.Mismatches)
	assert.Empty(t, rep.Diverged)
	assert.Empty(t, rep.Incomplete)
	assert.Positive(t, rep.Steps)
}

// TestRecordSingle: the log of a recorded cart-pole vector holds, per episode of
// each copy, a trial whose rows are the steps taken, its episode's return, and its
// state; it replays.
//
// The second case stages enough rows to hand several batches to the writing
// goroutine.
func TestRecordSingle(t *testing.T) {
	for _, tc := range []struct{ n, w, ticks int }{{5, 1, 120}, {5, 2, 120}, {64, 2, 400}} {
		t.Run(fmt.Sprintf("N=%d/W=%d", tc.n, tc.w), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const seed = 11
			n, w, ticks := tc.n, tc.w, tc.ticks
			reg, dir := testRegistry(t), t.TempDir()
			b := buffers(n, 4, 0)
			s, err := fastlane.NewSingle(reg, "cartpole", nil, n, w, b)
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Record(fastlane.Recording{Dir: dir, Run: "pole", Policies: map[string]string{"cartpole": "coin"}}))

			// want holds each trial's rows; trial K is the K-th episode begun.
			want := map[string][]loggedRow{}
			returns := map[string]float64{}
			cur, next := make([]string, n), 0
			begin := func(i int) {
				cur[i] = fmt.Sprintf("pole-%d", next)
				next++
				want[cur[i]] = append(want[cur[i]], loggedRow{Start: true, Acting: true, Obs: slices.Clone(b.Obs[i*4 : i*4+4])})
			}
			require.NoError(t, s.Reset(bg, seed))
			for i := range n {
				begin(i)
			}
			rng := rand.New(rand.NewPCG(seed, 1))
			actions := make([]int64, n)
			ended := 0
			for range ticks {
				for i := range actions {
					actions[i] = rng.Int64N(2)
				}
				require.NoError(t, s.Step(bg, actions))
				for i := range n {
					done := b.Terminated[i] || b.Truncated[i]
					obs := b.Obs[i*4 : i*4+4]
					if done {
						obs = b.FinalObs[i*4 : i*4+4]
					}
					id := cur[i]
					want[id] = append(want[id], loggedRow{Tick: len(want[id]), Acting: !done, Obs: slices.Clone(obs), Action: actions[i],
						Reward: b.Rewards[i], Terminated: b.Terminated[i], Truncated: b.Truncated[i]})
					returns[id] += b.Rewards[i]
					if done {
						ended++
						begin(i)
					}
				}
			}
			require.NoError(t, s.CloseLog())
			require.NoError(t, s.CloseLog(), "twice")
			require.Positive(t, ended)

			l, got := readTrials(t, dir, "cartpole")
			assert.Equal(t, want, got)
			trials, err := l.Trials()
			require.NoError(t, err)
			require.Len(t, trials, next)
			slices.SortFunc(trials, func(a, b datalog.Trial) int { return a.Index - b.Index })
			states := map[event.State]int{}
			for k, tr := range trials {
				assert.Equal(t, fmt.Sprintf("pole-%d", k), tr.ID)
				assert.Equal(t, k, tr.Index)
				assert.Equal(t, "cartpole", tr.Env)
				assert.Equal(t, 1, tr.Episodes)
				assert.Equal(t, map[string]string{"cartpole": "coin"}, tr.Policies)
				states[tr.State]++
			}
			assert.Equal(t, map[event.State]int{event.Ended: ended, event.Stopped: n}, states)
			episodes, err := l.Episodes()
			require.NoError(t, err)
			require.Len(t, episodes, ended)
			for _, e := range episodes {
				require.Len(t, e.Returns, 1)
				assert.Equal(t, returns[e.Trial], e.Returns[0].Value, e.Trial)
				assert.Equal(t, len(want[e.Trial])-1, e.Ticks, e.Trial)
			}
			replays(t, dir, next)
		})
	}
}

// TestRecordMulti: the log of a recorded maze vector has a row per report of each
// copy's turns, the actions given, each ended episode's returns (the sums of the
// rewards the vector reported), and replays.
func TestRecordMulti(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const n, seed, ticks = 6, 5, 400
			reg, dir := testRegistry(t), t.TempDir()
			l, err := fastlane.Describe(reg, "maze", nil)
			require.NoError(t, err)
			b := multiBuffers(n, l)
			x, err := fastlane.NewMulti(reg, "maze", nil, n, w, b)
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, x.Record(fastlane.Recording{Dir: dir}))
			require.NoError(t, x.Reset(bg, seed))
			a := len(l.Agents)
			cur, next := make([]string, n), n
			for i := range n {
				cur[i] = fmt.Sprintf("maze-%d", i)
			}
			returns := map[string][]float64{}
			acted := map[string][]int64{} // per trial, the actions of each agent in order
			rng := rand.New(rand.NewPCG(seed, 2))
			ended := 0
			for range ticks {
				for j, ag := range l.Agents {
					for r := range int(b.Counts[j]) {
						m := b.Agents[j].Masks[r*ag.MaskLen : (r+1)*ag.MaskLen]
						for {
							if act := rng.Int64N(int64(ag.MaskLen)); m[act] {
								b.Agents[j].Actions[r] = act
								break
							}
						}
						i := b.Agents[j].Copies[r]
						acted[cur[i]] = append(acted[cur[i]], int64(j)*100+b.Agents[j].Actions[r])
					}
				}
				require.NoError(t, x.Step(bg))
				for i := range n {
					id := cur[i]
					if returns[id] == nil {
						returns[id] = make([]float64, a)
					}
					for j := range a {
						returns[id][j] += b.Rewards[i*a+j]
					}
					if b.Ended[i] {
						ended++
						cur[i] = fmt.Sprintf("maze-%d", next)
						next++
					}
				}
			}
			require.NoError(t, x.Close())
			require.Positive(t, ended)

			log, err := datalog.Open(dir)
			require.NoError(t, err)
			// The actions of each trial, from the rows: each non-start row's action is
			// what the previous row of its agent id acted on (ordered by tick).
			type key struct {
				trial string
				tick  int
			}
			logged := map[key]int64{}
			for j, ag := range l.Agents {
				last := map[string]bool{} // agent ids whose latest row is acting
				for r, err := range log.Rows(ag.Name) {
					require.NoError(t, err)
					if !r.Start && last[r.Trial+"/"+r.AgentID] {
						logged[key{r.Trial, r.Tick - r.SpanTicks}] = int64(j)*100 + r.Action.Int
					}
					last[r.Trial+"/"+r.AgentID] = r.Acting
				}
			}
			for id, acts := range acted {
				var fromLog []int64
				for tick := 0; ; tick++ {
					v, ok := logged[key{id, tick}]
					if !ok {
						break
					}
					fromLog = append(fromLog, v)
				}
				// The last action of an episode cut by Close has no row after it.
				require.LessOrEqual(t, len(acts)-len(fromLog), 1, id)
				assert.Equal(t, acts[:len(fromLog)], fromLog, id)
			}
			episodes, err := log.Episodes()
			require.NoError(t, err)
			require.Len(t, episodes, ended)
			for _, e := range episodes {
				require.Len(t, e.Returns, a)
				for j := range a {
					assert.InDelta(t, returns[e.Trial][j], e.Returns[j].Value, 1e-9, e.Trial)
				}
			}
			trials, err := log.Trials()
			require.NoError(t, err)
			assert.Len(t, trials, next)
			replays(t, dir, next)
		})
	}
}

// TestRecordAppends: a second recording into a log numbers its trials after the
// first one's, and a bad recording is refused.
func TestRecordAppends(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, dir := testRegistry(t), t.TempDir()
	for k := range 2 {
		s, err := fastlane.NewSingle(reg, "cartpole", nil, 3, 1, buffers(3, 4, 0))
		require.NoError(t, err)
		require.NoError(t, s.Record(fastlane.Recording{Dir: dir}))
		require.ErrorIs(t, s.Record(fastlane.Recording{Dir: dir}), fastlane.ErrArgument, "twice")
		require.NoError(t, s.Reset(bg, uint64(k)))
		require.NoError(t, s.Close())
	}
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	trials, err := l.Trials()
	require.NoError(t, err)
	var ids []string
	for _, tr := range trials {
		ids = append(ids, tr.ID)
	}
	assert.ElementsMatch(t, []string{"cartpole-0", "cartpole-1", "cartpole-2", "cartpole-3", "cartpole-4", "cartpole-5"}, ids)

	s, err := fastlane.NewSingle(reg, "cartpole", nil, 1, 1, buffers(1, 4, 0))
	require.NoError(t, err)
	defer s.Close()
	for name, rec := range map[string]fastlane.Recording{
		"no dir":        {},
		"unknown agent": {Dir: dir, Policies: map[string]string{"motion": "ppo"}},
		"spaced run":    {Dir: dir, Run: "a b"},
	} {
		assert.ErrorIs(t, s.Record(rec), fastlane.ErrArgument, name)
	}
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	err = s.Record(fastlane.Recording{Dir: file})
	require.ErrorIs(t, err, fastlane.ErrLog, "a file, not a directory")
	assert.Equal(t, fastlane.CodeLog, fastlane.CodeOf(err))
	require.NoError(t, s.Record(fastlane.Recording{Dir: dir}), "after a failed Record")
}

// TestRecordJudgesWithTypedObservations: a recorded episode's success and metrics are
// judged on its live final turn, whose typed observations the web-testing example's
// metrics read (they are gone from the turn the vector keeps after the reset).
func TestRecordJudgesWithTypedObservations(t *testing.T) {
	for _, w := range []int{1, 2} {
		t.Run(fmt.Sprintf("W=%d", w), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			const n = 4
			reg, dir := testRegistry(t), t.TempDir()
			l, err := fastlane.Describe(reg, "webtest", nil)
			require.NoError(t, err)
			b := multiBuffers(n, l)
			x, err := fastlane.NewMulti(reg, "webtest", nil, n, w, b)
			require.NoError(t, err)
			defer x.Close()
			require.NoError(t, x.Record(fastlane.Recording{Dir: dir}))
			require.NoError(t, x.Reset(bg, 7))
			rng := rand.New(rand.NewPCG(7, 8))
			ended := 0
			for tick := 0; tick < 5000 && ended < 3; tick++ {
				for j, ag := range l.Agents {
					for r := range int(b.Counts[j]) {
						for {
							a := rng.Int64N(ag.Actions) + ag.Start
							if ag.MaskLen == 0 || b.Agents[j].Masks[r*ag.MaskLen+int(a-ag.Start)] {
								b.Agents[j].Actions[r] = a
								break
							}
						}
					}
				}
				require.NoError(t, x.Step(bg))
				for i := range n {
					ended += btoi(b.Ended[i])
				}
			}
			require.NoError(t, x.CloseLog())
			require.Positive(t, ended)
			log, err := datalog.Open(dir)
			require.NoError(t, err)
			episodes, err := log.Episodes()
			require.NoError(t, err)
			require.Len(t, episodes, ended)
			for _, e := range episodes {
				require.True(t, e.DefinesSuccess)
				var names []string
				for _, m := range e.Metrics {
					names = append(names, m.Name)
				}
				assert.Equal(t, []string{"coverage", "defects_found"}, names, e.Trial)
			}
		})
	}
}

// TestRecordRefusesAnotherLog: a recording refuses a directory that another vector
// is recording into (the log's lock), and one that holds a log of another
// environment, whose trials would mix with its own; the log is left as it was.
func TestRecordRefusesAnotherLog(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, dir := testRegistry(t), t.TempDir()
	s, err := fastlane.NewSingle(reg, "cartpole", nil, 2, 1, buffers(2, 4, 0))
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Record(fastlane.Recording{Dir: dir}))
	require.NoError(t, s.Reset(bg, 1))

	other, err := fastlane.NewSingle(reg, "cartpole", nil, 2, 1, buffers(2, 4, 0))
	require.NoError(t, err)
	defer other.Close()
	err = other.Record(fastlane.Recording{Dir: dir, Run: "other"})
	require.ErrorIs(t, err, fastlane.ErrLog)
	require.ErrorIs(t, err, datalog.ErrLocked, "a second writer")
	assert.ErrorContains(t, err, dir)
	assert.ErrorContains(t, err, fmt.Sprintf("process %d", os.Getpid()))
	require.NoError(t, s.Close())

	l, err := fastlane.Describe(reg, "maze", nil)
	require.NoError(t, err)
	x, err := fastlane.NewMulti(reg, "maze", nil, 2, 1, multiBuffers(2, l))
	require.NoError(t, err)
	defer x.Close()
	err = x.Record(fastlane.Recording{Dir: dir})
	require.ErrorIs(t, err, fastlane.ErrLog)
	assert.ErrorContains(t, err, "holds a log of cartpole")
	log, err := datalog.Open(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"cartpole"}, log.Agents(), "no maze rows")
}
