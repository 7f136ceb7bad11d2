package datalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The validity of a side column: no bitmap while every value is valid, then the
// bits of every value, those before the first null included, batch after batch.
func TestValidity(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var v validity
	rng := rand.New(rand.NewPCG(3, 4))
	for batch := range 50 {
		n := rng.IntN(200)
		firstNull := rng.IntN(n + 1) // n: none
		want := make([]bool, n)
		for i := range want {
			want[i] = i != firstNull && (i < firstNull || rng.IntN(3) > 0)
			v.push(mem, i, want[i])
		}
		buf := v.buffer(n)
		if firstNull == n {
			assert.Nil(t, buf, "batch %d", batch)
			assert.Zero(t, v.nulls)
		} else {
			require.NotNil(t, buf, "batch %d", batch)
			for i, ok := range want {
				require.Equal(t, ok, bitutil.BitIsSet(buf.Bytes(), i), "batch %d, value %d", batch, i)
			}
			if n%8 != 0 {
				assert.Zero(t, buf.Bytes()[len(buf.Bytes())-1]>>(n%8), "bits past the values")
			}
		}
		v.nulls = 0 // the column's reset
	}
	v.bits.free(mem)
}

// twoAgents is a trial's info for agents p and c, each with an observation of 2.
func twoAgents(id string) *event.TrialInfo {
	box := spaces.Must(spaces.NewBox([]int{2}, -10, 10))
	return &event.TrialInfo{ID: id, Env: "syn", Seed: 9, Episodes: 1, Agents: []env.Spec{
		{Name: "p", ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}},
		{Name: "c", ObservationSpace: box, ActionSpace: spaces.Discrete{N: 2}}}}
}

// logTrial logs trial id of info in, with a row of each of agents: its Running
// state, the rows, its Ended state.
func logTrial(t *testing.T, w *Writer, in *event.TrialInfo, agents ...string) {
	t.Helper()
	ctx, id := context.Background(), in.ID
	require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindState, Trial: id, State: &event.StateChange{Trial: id, State: event.Running, Info: in}}))
	for k, a := range agents {
		s := event.StepEvent{Tick: k, Agent: a, AgentID: a + "_0", Start: true, Obs: []float32{1, 2}}
		require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindStep, Trial: id, Step: &s}))
	}
	require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindState, Trial: id, State: &event.StateChange{Trial: id, State: event.Ended, Info: in}}))
}

// trialColumn returns the trial ids of the rows of agent's parts in dir, and each
// part's dictionary of them.
func trialColumn(t *testing.T, dir, agent string) (rows []string, dicts [][]string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "agent="+agent, "*.arrow"))
	require.NoError(t, err)
	for _, path := range paths {
		r, err := openPart(path, memory.DefaultAllocator)
		require.NoError(t, err)
		var dict []string
		for rec, err := range r.batches() {
			require.NoError(t, err)
			col := rec.Column(0).(*array.Dictionary)
			values := col.Dictionary().(*array.String)
			dict = dict[:0]
			for i := range values.Len() {
				dict = append(dict, values.Value(i))
			}
			for i := range col.Len() {
				rows = append(rows, values.Value(col.GetValueIndex(i)))
			}
		}
		dicts = append(dicts, dict)
		require.NoError(t, r.Close())
	}
	return rows, dicts
}

// A writer reuses the log of a trial that ended for one that begins later; each
// agent's log, which knows the trial of its latest row by the address of its
// trialLog, must not take the later trial for the one before. And a trial id that
// comes again after its trial ended keeps its index in the part's dictionary.
func TestTrialLogReuse(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDataset(dir)
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	logTrial(t, w, twoAgents("a"), "p", "c") // the parts' opener
	logTrial(t, w, twoAgents("b"), "p")      // p's latest trial, b, ends
	logTrial(t, w, twoAgents("c"), "c")      // b's log is spare now
	require.Len(t, w.spare, 1)
	spare := w.spare[0]
	assert.Equal(t, "b", spare.id)
	logTrial(t, w, twoAgents("d"), "p") // in b's log: p must see a new trial
	assert.Equal(t, "d", spare.id, "d reuses b's log")
	logTrial(t, w, twoAgents("a"), "p", "c") // a again
	logTrial(t, w, twoAgents("e"), "p")
	require.NoError(t, ds.Close())

	rows, dicts := trialColumn(t, dir, "p")
	assert.Equal(t, []string{"a", "b", "d", "a", "e"}, rows)
	assert.Equal(t, [][]string{{"a", "b", "d", "e"}}, dicts, "one index per id")
	rows, dicts = trialColumn(t, dir, "c")
	assert.Equal(t, []string{"a", "c", "a"}, rows)
	assert.Equal(t, [][]string{{"a", "c"}}, dicts)
}

// The trial of a part's first row gives the part's metadata when its first batch is
// handed over, trials later: its log is not reused meanwhile.
func TestPartOpenerKept(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDataset(dir)
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	for i := range 10 {
		in := twoAgents(fmt.Sprintf("t-%d", i))
		in.Seed = uint64(100 + i)
		logTrial(t, w, in, "p")
	}
	require.NoError(t, ds.Close())
	l, err := Open(dir)
	require.NoError(t, err)
	info, err := l.Agent("p")
	require.NoError(t, err)
	assert.Equal(t, "t-0", info.Metadata[MetaTrial])
	assert.Equal(t, "100", info.Metadata[MetaSeed])
}

// A row's reward sources, however many, go to the sources' columns, which grow past
// the room made for one a row.
func TestManySources(t *testing.T) {
	dir := t.TempDir()
	ds, err := NewDataset(dir, WithBatchRows(8))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	ctx, in := context.Background(), twoAgents("s")
	require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindState, Trial: "s", State: &event.StateChange{Trial: "s", State: event.Running, Info: in}}))
	var want [][]event.RewardSource
	for i := range 20 {
		var srcs []event.RewardSource
		for j := range i % 6 {
			srcs = append(srcs, event.RewardSource{Source: fmt.Sprintf("src-%d", (i+j)%4), Value: float64(i*10 + j)})
		}
		want = append(want, srcs)
		s := event.StepEvent{Tick: i, Agent: "p", AgentID: "p_0", Start: true, Obs: []float32{1, 2}, Sources: srcs}
		require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindStep, Trial: "s", Step: &s}))
	}
	require.NoError(t, ds.Close())
	l, err := Open(dir)
	require.NoError(t, err)
	i := 0
	for r, err := range l.Rows("p") {
		require.NoError(t, err)
		if len(want[i]) == 0 {
			assert.Empty(t, r.Sources, "row %d", i)
		} else {
			assert.Equal(t, want[i], r.Sources, "row %d", i)
		}
		i++
	}
	assert.Equal(t, 20, i)
}
