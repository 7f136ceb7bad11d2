package datalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A maze campaign on two workers, logged and read back: one row per step event, the
// same values, the trials and episodes tables, the agents' spaces; with every
// compression and with parts rolled over at a small size.
func TestCampaignRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t)
	const trials = 8
	for _, tc := range []struct {
		name     string
		opts     []datalog.WriteOption
		manyPart bool
	}{
		{name: "defaults"},
		{name: "none", opts: []datalog.WriteOption{datalog.WithCompression(datalog.Uncompressed)}},
		{name: "lz4", opts: []datalog.WriteOption{datalog.WithCompression(datalog.LZ4)}},
		{name: "zstd", opts: []datalog.WriteOption{datalog.WithCompression(datalog.ZSTD)}},
		{name: "small parts", opts: []datalog.WriteOption{datalog.WithMaxPartBytes(40 << 10), datalog.WithCompression(datalog.Uncompressed)}, manyPart: true},
		{name: "small parts lz4", opts: []datalog.WriteOption{datalog.WithMaxPartBytes(8 << 10), datalog.WithCompression(datalog.LZ4)}, manyPart: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mem, withMem := checked(t)
			c := runCampaign(t, dir, trials, append([]datalog.WriteOption{withMem, datalog.WithBatchRows(64)}, tc.opts...)...)
			mem.AssertSize(t, 0)

			rmem, withRMem := checked(t)
			l, err := datalog.Open(dir, withRMem)
			require.NoError(t, err)
			assert.Equal(t, []string{maze.MotionName, maze.StrategyName}, l.Agents())
			for _, name := range l.Agents() {
				n, sum := 0, uint64(0)
				for r, err := range l.Rows(name) {
					require.NoError(t, err)
					assert.Equal(t, name, r.Agent)
					n++
					sum += rowDigest(&r)
				}
				assert.Equal(t, c.steps[name], n, "rows of %s", name)
				assert.Equal(t, c.digest[name], sum, "values of %s", name)
				parts := 0
				for _, p := range l.Parts() {
					if p.Agent == name {
						parts++
					}
				}
				if tc.manyPart {
					assert.Greater(t, parts, 2, "parts of %s", name)
				}
			}
			// Every part was finished: there is nothing to recover.
			recovered, err := datalog.Recover(dir, withRMem)
			require.NoError(t, err)
			assert.Empty(t, recovered)

			ts, err := l.Trials()
			require.NoError(t, err)
			require.Len(t, ts, trials)
			for _, tr := range ts {
				assert.True(t, tr.HasInfo)
				assert.Equal(t, event.Ended, tr.State, tr.ID)
				assert.Equal(t, "maze", tr.Env)
				assert.Equal(t, 3, tr.Episodes)
				assert.Equal(t, 40, tr.MaxTicks)
				assert.True(t, c.seeds[tr.Seed], "seed of %s", tr.ID)
				assert.Equal(t, map[string]string{maze.StrategyName: "oracle", maze.MotionName: "random"}, tr.Policies)
				assert.True(t, tr.DefinesSuccess)
				require.Len(t, tr.Agents, 2)
				assert.Equal(t, maze.StrategyName, tr.Agents[0].Name)
			}
			eps, err := l.Episodes()
			require.NoError(t, err)
			assert.Len(t, eps, c.episodes)
			for _, e := range eps {
				assert.True(t, e.DefinesSuccess)
				require.Len(t, e.Returns, 2)
				assert.Equal(t, maze.StrategyName, e.Returns[0].Agent)
			}
			rmem.AssertSize(t, 0)
		})
	}
}

// The agent's first part has the columns and the metadata the package documents.
func TestAgentSchema(t *testing.T) {
	dir := t.TempDir()
	runCampaign(t, dir, 2, datalog.WithMetadata(map[string]string{"run": "test"}), datalog.WithCompression(datalog.LZ4))
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	camp, err := runners.NewCampaign(testRegistry(t), mazeSpec())
	require.NoError(t, err)
	for _, spec := range camp.Agents() {
		t.Run(spec.Name, func(t *testing.T) {
			info, err := l.Agent(spec.Name)
			require.NoError(t, err)
			assert.True(t, spec.ObservationSpace.Equal(info.ObservationSpace))
			assert.True(t, spec.ActionSpace.Equal(info.ActionSpace))
			assert.Equal(t, spec.MaskLen, info.MaskLen)
			assert.Equal(t, spec.ObservationSpace.FlatDim(), info.ObservationDim)
			assert.Equal(t, 1, info.ActionDim)
			md := info.Metadata
			assert.Equal(t, strconv.Itoa(datalog.FormatVersion), md[datalog.MetaFormatVersion])
			assert.NotEmpty(t, md[datalog.MetaVersion])
			assert.Equal(t, datalog.TableSteps, md[datalog.MetaTable])
			assert.Equal(t, "lz4", md[datalog.MetaCompression])
			assert.Equal(t, spec.Name, md[datalog.MetaAgent])
			assert.Equal(t, "maze", md[datalog.MetaEnv])
			assert.Equal(t, "", md[datalog.MetaEnvConfig])
			assert.Contains(t, []string{"maze-0", "maze-1"}, md[datalog.MetaTrial])
			seed, err := strconv.ParseUint(md[datalog.MetaSeed], 10, 64)
			require.NoError(t, err)
			assert.Contains(t, []uint64{env.DeriveSeed(11, 0), env.DeriveSeed(11, 1)}, seed)
			assert.Equal(t, "test", md["run"])
			obsJS, err := spaces.Marshal(spec.ObservationSpace)
			require.NoError(t, err)
			assert.JSONEq(t, string(obsJS), md[datalog.MetaObservationSpace])

			dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
			want := []arrow.Field{
				{Name: "trial_id", Type: dict},
				{Name: "episode", Type: arrow.PrimitiveTypes.Int32},
				{Name: "tick", Type: arrow.PrimitiveTypes.Int64},
				{Name: "index", Type: arrow.PrimitiveTypes.Int32},
				{Name: "agent_id", Type: dict},
				{Name: "parent_agent_id", Type: dict, Nullable: true},
				{Name: "start", Type: arrow.FixedWidthTypes.Boolean},
				{Name: "acting", Type: arrow.FixedWidthTypes.Boolean},
				{Name: "observation", Type: arrow.FixedSizeListOf(int32(info.ObservationDim), arrow.PrimitiveTypes.Float32)},
				{Name: "action", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				{Name: "action_mask", Type: arrow.FixedSizeListOf(int32(spec.MaskLen), arrow.FixedWidthTypes.Boolean), Nullable: true},
				{Name: "reward", Type: arrow.PrimitiveTypes.Float32},
				{Name: "reward_sources", Type: arrow.ListOf(arrow.StructOf(
					arrow.Field{Name: "source", Type: dict}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Float32}))},
				{Name: "terminated", Type: arrow.FixedWidthTypes.Boolean},
				{Name: "truncated", Type: arrow.FixedWidthTypes.Boolean},
				{Name: "span_ticks", Type: arrow.PrimitiveTypes.Int32},
				{Name: "messages", Type: arrow.ListOf(arrow.StructOf(
					arrow.Field{Name: "from", Type: arrow.BinaryTypes.String}, arrow.Field{Name: "to", Type: arrow.BinaryTypes.String},
					arrow.Field{Name: "payload", Type: arrow.BinaryTypes.Binary}, arrow.Field{Name: "sent", Type: arrow.PrimitiveTypes.Int64}))},
			}
			got := info.Schema.Fields()
			require.Len(t, got, len(want))
			for i := range want {
				assert.True(t, want[i].Equal(got[i]), "column %d: want %v, got %v", i, want[i], got[i])
			}
		})
	}
}

// The transition convention of the package documentation holds for a maze log: a
// row that is not a Start row follows a row of the same agent id, at tick - span,
// that was acting; and a row's Action is the action the agent chose there.
func TestTransitions(t *testing.T) {
	dir := t.TempDir()
	runCampaign(t, dir, 3)
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	for _, name := range l.Agents() {
		type prev struct {
			tick   int
			acting bool
			done   bool
		}
		last := map[string]prev{}
		n := 0
		for r, err := range l.Rows(name) {
			require.NoError(t, err)
			key := r.Trial + "/" + strconv.Itoa(r.Episode) + "/" + r.AgentID
			p, seen := last[key]
			if r.Start {
				assert.False(t, seen, "a Start row begins its agent id: %s", key)
			} else {
				require.True(t, seen, "row of %s at tick %d follows another", key, r.Tick)
				assert.True(t, p.acting, "%s acted at tick %d", key, p.tick)
				assert.False(t, p.done)
				assert.Equal(t, p.tick, r.Tick-r.SpanTicks, "%s: tick - span_ticks is the tick of the previous row", key)
				n++
			}
			last[key] = prev{tick: r.Tick, acting: r.Acting, done: r.Done()}
		}
		assert.Positive(t, n)
	}
}

// Each kind of action space, a mask, parents, sources, messages and a retroactive
// reward, written and read back value for value; the side tables too.
func TestWriterColumns(t *testing.T) {
	defer goleak.VerifyNone(t)
	md := spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4}))
	mb := spaces.Must(spaces.NewMultiBinary(3))
	box := spaces.Must(spaces.NewBox([]int{2}, -1, 1))
	for _, tc := range []struct {
		name    string
		space   spaces.Space
		mask    int
		actions []agent.RawAction
	}{
		{"discrete with mask", spaces.Discrete{N: 3}, 3, []agent.RawAction{agent.Discrete(2), agent.Discrete(0)}},
		{"box", box, 0, []agent.RawAction{agent.Continuous([]float32{0.5, -1}), agent.Continuous([]float32{1, 0})}},
		{"multi discrete", md, 0, []agent.RawAction{agent.MultiInts([]int64{2, 3}), agent.MultiInts([]int64{0, 1})}},
		{"multi binary", mb, 3, []agent.RawAction{agent.MultiInts([]int64{1, 0, 1}), agent.MultiInts([]int64{0, 0, 1})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, withMem := checked(t)
			dir := t.TempDir()
			ds, err := datalog.NewDataset(dir, withMem, datalog.WithBatchRows(2))
			require.NoError(t, err)
			w, err := ds.NewWriter()
			require.NoError(t, err)
			ctx := context.Background()
			obsSpace := spaces.Must(spaces.NewBox([]int{3}, -5, 5))
			info := &event.TrialInfo{ID: "x-0", Env: "synthetic", Config: []byte(` {"a": 1} `), Seed: 42, Episodes: 1, MaxTicks: 9,
				Agents: []env.Spec{{Name: "a", ObservationSpace: obsSpace, ActionSpace: tc.space, MaskLen: tc.mask}}, Policies: []string{"p"}}
			send := func(e event.Event) {
				t.Helper()
				require.NoError(t, w.Handle(ctx, &e))
			}
			send(event.Event{Kind: event.KindState, Trial: "x-0", State: &event.StateChange{Trial: "x-0", State: event.Running, Info: info}})
			var mask []bool
			if tc.mask > 0 {
				mask = make([]bool, tc.mask)
				mask[1] = true
			}
			msgs := []event.Message{{From: "env", To: "a", Payload: []byte("hello"), Sent: 0}, {From: "a_0", To: "env", Payload: nil, Sent: 1}}
			steps := []event.StepEvent{
				{Tick: 0, Agent: "a", AgentID: "a_0", Start: true, Acting: true, Obs: []float32{1, 2, 3}, Mask: mask,
					Sources: []event.RewardSource{{Source: event.SourceEnv}}},
				{Tick: 1, Agent: "a", AgentID: "a_0", ParentID: "b_0", Acting: true, Obs: []float32{4, 5, 6}, Mask: mask, Action: tc.actions[0],
					Reward: 1.5, Sources: []event.RewardSource{{Source: event.SourceEnv, Value: 1}, {Source: "actor:b", Value: 0.5}}, SpanTicks: 1, Messages: msgs},
				{Tick: 2, Index: 1, Agent: "a", AgentID: "a_0", Obs: []float32{7, 8, 9}, Action: tc.actions[1], Reward: -1,
					Sources: []event.RewardSource{{Source: event.SourceEnv, Value: -1}}, Terminated: true, SpanTicks: 1},
			}
			for i := range steps {
				send(event.Event{Kind: event.KindStep, Trial: "x-0", Step: &steps[i]})
			}
			send(event.Event{Kind: event.KindReward, Trial: "x-0", Reward: &event.RetroReward{Episode: 0, Tick: 2, AgentID: "a_0", Agent: "a", Source: "controller", Value: 0.25, ArrivedTick: 2}})
			send(event.Event{Kind: event.KindEpisode, Trial: "x-0", Episode: &event.EpisodeEvent{Episode: 0, Seed: 42, End: true, Ticks: 2, Success: true, Returns: []float64{0.75}}})
			send(event.Event{Kind: event.KindState, Trial: "x-0", State: &event.StateChange{Trial: "x-0", State: event.Ended, Info: info}})
			require.NoError(t, w.Close())
			require.NoError(t, ds.Close())
			mem.AssertSize(t, 0)

			l, err := datalog.Open(dir, withMem)
			require.NoError(t, err)
			var rows []datalog.Row
			for r, err := range l.Rows("a") {
				require.NoError(t, err)
				r.Obs, r.Mask, r.Sources, r.Retro, r.Messages = slices.Clone(r.Obs), slices.Clone(r.Mask), slices.Clone(r.Sources), slices.Clone(r.Retro), slices.Clone(r.Messages)
				r.Action.Ints, r.Action.Floats = slices.Clone(r.Action.Ints), slices.Clone(r.Action.Floats)
				rows = append(rows, r)
			}
			require.Len(t, rows, len(steps))
			for i, s := range steps {
				r := rows[i]
				assert.Equal(t, "x-0", r.Trial)
				assert.Equal(t, s.Tick, r.Tick)
				assert.Equal(t, s.Index, r.Index)
				assert.Equal(t, s.AgentID, r.AgentID)
				assert.Equal(t, s.ParentID, r.ParentID)
				assert.Equal(t, s.Start, r.Start)
				assert.Equal(t, s.Acting, r.Acting)
				assert.Equal(t, s.Obs, r.Obs)
				assert.Equal(t, s.Mask, r.Mask)
				if !s.Start {
					assert.Equal(t, s.Action, r.Action, "row %d", i)
				} else {
					assert.Equal(t, agent.RawAction{}, r.Action)
				}
				assert.Equal(t, s.Reward, r.Reward)
				assert.Equal(t, s.Sources, r.Sources)
				assert.Equal(t, s.Terminated, r.Terminated)
				assert.Equal(t, s.SpanTicks, r.SpanTicks)
				if len(s.Messages) > 0 {
					require.Len(t, r.Messages, len(msgs))
					assert.Equal(t, "hello", string(r.Messages[0].Payload))
					assert.Equal(t, msgs[1].From, r.Messages[1].From)
					assert.Equal(t, 1, r.Messages[1].Sent)
				} else {
					assert.Empty(t, r.Messages)
				}
			}
			assert.Equal(t, []event.RewardSource{{Source: "controller", Value: 0.25}}, rows[2].Retro)
			assert.InDelta(t, -0.75, rows[2].TotalReward(), 1e-9)
			assert.Empty(t, rows[1].Retro)

			ts, err := l.Trials()
			require.NoError(t, err)
			require.Len(t, ts, 1)
			assert.Equal(t, `{"a": 1}`, string(ts[0].Config))
			assert.Equal(t, uint64(42), ts[0].Seed)
			assert.Equal(t, 9, ts[0].MaxTicks)
			assert.Equal(t, event.Ended, ts[0].State)
			assert.True(t, tc.space.Equal(ts[0].Agents[0].ActionSpace))
			eps, err := l.Episodes()
			require.NoError(t, err)
			assert.Equal(t, []datalog.Episode{{Trial: "x-0", Seed: 42, Ticks: 2, Returns: []datalog.Return{{Agent: "a", Value: 0.75}}}}, eps)
			retro, err := l.Retro()
			require.NoError(t, err)
			require.Len(t, retro, 1)
			assert.Equal(t, "x-0", retro[0].Trial)
			assert.Equal(t, 0.25, retro[0].Value)
			mem.AssertSize(t, 0)
		})
	}
}

func TestWriterErrors(t *testing.T) {
	ctx := context.Background()
	ds, err := datalog.NewDataset(t.TempDir())
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	s := newSynthetic(4)

	// A step before its trial's Running state.
	st := event.StepEvent{Agent: "parent", AgentID: "parent_0", Obs: make([]float32, 4)}
	err = w.Handle(ctx, &event.Event{Kind: event.KindStep, Trial: "t-0", Step: &st})
	require.ErrorIs(t, err, datalog.ErrEvent)

	s.start(t, w, "t-0")
	for _, bad := range []event.StepEvent{
		{Agent: "parent", AgentID: "parent_0", Obs: make([]float32, 3)},
		{Agent: "parent", AgentID: "parent_0", Obs: make([]float32, 4), Mask: make([]bool, 2)},
		{Agent: "child", AgentID: "child_0", Obs: make([]float32, 4), Action: agent.Continuous([]float32{1})},
		{Agent: "nobody", AgentID: "nobody_0", Obs: make([]float32, 4)},
	} {
		err = w.Handle(ctx, &event.Event{Kind: event.KindStep, Trial: "t-0", Step: &bad})
		assert.ErrorIs(t, err, datalog.ErrEvent, "%+v", bad)
	}
	// The writer goes on after a rejected event.
	require.NoError(t, s.row(w, "t-0"))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	assert.ErrorIs(t, w.Handle(ctx, &event.Event{Kind: event.KindStep, Trial: "t-0", Step: &st}), datalog.ErrClosed)
	require.NoError(t, ds.Close())
	_, err = ds.NewWriter()
	assert.ErrorIs(t, err, datalog.ErrClosed)

	for _, o := range []datalog.WriteOption{
		datalog.WithBatchRows(-1), datalog.WithMaxPartBytes(-1), datalog.WithCompression(7),
		datalog.WithMetadata(map[string]string{"baton.x": "y"}), datalog.WithShard("a/b"),
	} {
		_, err := datalog.NewDataset(t.TempDir(), o)
		assert.ErrorIs(t, err, datalog.ErrOption)
	}
	_, err = datalog.ParseCompression("gzip")
	assert.ErrorIs(t, err, datalog.ErrOption)
	_, err = datalog.Open(t.TempDir())
	assert.ErrorIs(t, err, datalog.ErrNotLog)
}

// A dataset opened on a directory that holds a log adds parts after it; shards name
// their parts apart.
func TestDatasetAppend(t *testing.T) {
	dir := t.TempDir()
	first := runCampaign(t, dir, 2)
	second := runCampaign(t, dir, 2, datalog.WithShard("b"))
	third := runCampaign(t, dir, 1)
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, p := range l.Parts() {
		name := filepath.Base(p.Path)
		assert.False(t, seen[p.Table+name], name)
		seen[p.Table+name] = true
	}
	for _, name := range l.Agents() {
		n := 0
		for _, err := range l.Rows(name) {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, first.steps[name]+second.steps[name]+third.steps[name], n)
	}
	ts, err := l.Trials()
	require.NoError(t, err)
	assert.Len(t, ts, 2) // maze-0 and maze-1, logged three times over: the latest row wins
}

// A Locked writer serves a Controller, whose trials run at once.
func TestLockedController(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	mem, withMem := checked(t)
	ds, err := datalog.NewDataset(dir, withMem, datalog.WithBatchRows(50))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	c := newCounts()
	ctrl, err := runners.NewController(testRegistry(t), runners.WithWorkers(3), runners.WithSinks(c, datalog.NewLocked(w)))
	require.NoError(t, err)
	ctx := context.Background()
	var ids []string
	for range 5 {
		id, err := ctrl.Start(ctx, mazeSpec())
		require.NoError(t, err)
		ids = append(ids, id)
	}
	for _, id := range ids {
		res, err := ctrl.Wait(ctx, id)
		require.NoError(t, err)
		require.Equal(t, event.Ended, res.State)
	}
	require.NoError(t, ctrl.Shutdown(ctx))
	require.NoError(t, ds.Close()) // closes the writer
	mem.AssertSize(t, 0)
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	for _, name := range l.Agents() {
		n, sum := 0, uint64(0)
		for r, err := range l.Rows(name) {
			require.NoError(t, err)
			n++
			sum += rowDigest(&r)
		}
		assert.Equal(t, c.steps[name], n)
		assert.Equal(t, c.digest[name], sum)
	}
}

// A write error is returned by the calls that follow it and sticks, and Close leaves
// the part without its footer.
func TestWriterFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	ds, err := datalog.NewDataset(dir, datalog.WithBatchRows(1))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	s := newSynthetic(4)
	s.start(t, w, "t-0")
	require.NoError(t, s.row(w, "t-0"))
	// Make the agent's next part impossible to create: its folder is a file.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent=child"), nil, 0o644))
	// The child's batch is handed over; writing it fails behind the writer's back,
	// and Flush, which waits for the writing, reports it.
	require.NoError(t, s.row(w, "t-0"))
	err = w.Flush()
	require.Error(t, err)
	assert.ErrorContains(t, err, "agent=child")
	assert.Equal(t, err, s.row(w, "t-0"), "the error sticks")
	assert.Equal(t, err, w.Flush())
	assert.ErrorIs(t, w.Close(), err)
	assert.NoError(t, w.Close())
	assert.True(t, errors.Is(w.Handle(context.Background(), &s.ev), datalog.ErrClosed))
}
