package datalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/replay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A logged maze campaign replays without a mismatch, with every step compared.
func TestReplay(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name   string
		trials int
		opts   []datalog.WriteOption
	}{
		{"plain", 6, nil},
		{"zstd small parts", 6, []datalog.WriteOption{datalog.WithCompression(datalog.ZSTD), datalog.WithMaxPartBytes(16 << 10), datalog.WithBatchRows(16)}},
		// The two workers' parts are read side by side, and trials span parts: a
		// trial's rows are used in the order of their parts, whichever is read first.
		{"many parts", 120, []datalog.WriteOption{datalog.WithMaxPartBytes(32 << 10), datalog.WithBatchRows(64)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := runCampaign(t, dir, tc.trials, tc.opts...)
			mem, withMem := checked(t)
			rep, err := replay.Run(t.Context(), dir, testRegistry(t), withMem)
			require.NoError(t, err)
			assert.Empty(t, rep.Mismatches)
			assert.Equal(t, tc.trials, rep.Trials)
			assert.Empty(t, rep.Skipped)
			assert.Empty(t, rep.Diverged)
			assert.Empty(t, rep.Incomplete)
			assert.Equal(t, int64(c.steps[maze.MotionName]+c.steps[maze.StrategyName]), rep.Steps)
			mem.AssertSize(t, 0)
		})
	}
}

// copyDir copies a log.
func copyDir(t *testing.T, src string) string {
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// A log with one observation value changed replays with exactly that mismatch; a log
// with a reward changed, with that one.
func TestReplayTampered(t *testing.T) {
	defer goleak.VerifyNone(t)
	orig := t.TempDir()
	runCampaign(t, orig, 4, datalog.WithBatchRows(32))
	l, err := datalog.Open(orig)
	require.NoError(t, err)
	// The row to change: the 11th of the motion agent's first part.
	const at = 10
	var target datalog.Row
	i := 0
	for r, err := range l.Rows(maze.MotionName) {
		require.NoError(t, err)
		if i == at {
			target = r
			target.Obs = append([]float32(nil), r.Obs...)
			break
		}
		i++
	}
	require.False(t, target.Start, "pick a row whose reward the env gives")

	for _, tc := range []struct {
		name   string
		column string
		edit   func(a arrow.Array) arrow.Array
		want   datalog.Mismatch
	}{
		{
			name: "observation", column: "observation",
			edit: func(a arrow.Array) arrow.Array {
				fsl := a.(*array.FixedSizeList)
				vals := append([]float32(nil), fsl.ListValues().(*array.Float32).Float32Values()...)
				lo, _ := fsl.ValueOffsets(at)
				vals[lo+3] += 0.5
				child := array.NewFloat32Data(array.NewData(arrow.PrimitiveTypes.Float32, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0))
				defer child.Release()
				d := array.NewData(fsl.DataType(), fsl.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{child.Data()}, 0, 0)
				defer d.Release()
				return array.MakeFromData(d)
			},
			want: datalog.Mismatch{Trial: target.Trial, Episode: target.Episode, Tick: target.Tick, Index: target.Index, AgentID: target.AgentID,
				Field: datalog.FieldObservation, Element: 3, Logged: fmtF(target.Obs[3] + 0.5), Replayed: fmtF(target.Obs[3])},
		},
		{
			name: "env reward", column: "reward_sources",
			edit: func(a arrow.Array) arrow.Array {
				list := a.(*array.List)
				st := list.ListValues().(*array.Struct)
				vals := append([]float32(nil), st.Field(1).(*array.Float32).Float32Values()...)
				lo, _ := list.ValueOffsets(at)
				vals[lo] = 7
				v := array.NewFloat32Data(array.NewData(arrow.PrimitiveTypes.Float32, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0))
				defer v.Release()
				sd := array.NewData(st.DataType(), st.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{st.Field(0).Data(), v.Data()}, 0, 0)
				defer sd.Release()
				ld := array.NewData(list.DataType(), list.Len(), []*memory.Buffer{nil, list.Data().Buffers()[1]}, []arrow.ArrayData{sd}, 0, 0)
				defer ld.Release()
				return array.MakeFromData(ld)
			},
			want: datalog.Mismatch{Trial: target.Trial, Episode: target.Episode, Tick: target.Tick, Index: target.Index, AgentID: target.AgentID,
				Field: datalog.FieldReward, Element: -1, Logged: "7", Replayed: fmtF(float32(target.Sources[0].Value))},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, orig)
			parts, err := filepath.Glob(filepath.Join(dir, "agent="+maze.MotionName, "*.arrow"))
			require.NoError(t, err)
			first := parts[0]
			for _, p := range parts {
				if filepath.Base(p) < filepath.Base(first) {
					first = p
				}
			}
			require.NoError(t, datalog.RewritePart(first, func(i int, rec arrow.RecordBatch) arrow.RecordBatch {
				if i != 0 {
					return rec
				}
				col := rec.Schema().FieldIndices(tc.column)[0]
				cols := append([]arrow.Array(nil), rec.Columns()...)
				cols[col] = tc.edit(cols[col])
				defer cols[col].Release()
				return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
			}))
			rep, err := replay.Run(t.Context(), dir, testRegistry(t))
			require.NoError(t, err)
			require.Equal(t, []datalog.Mismatch{tc.want}, rep.Mismatches)
			assert.Equal(t, []string{target.Trial}, rep.Diverged)
			assert.Empty(t, rep.Incomplete)
			assert.Contains(t, rep.Mismatches[0].String(), tc.want.Field)
		})
	}
}

// agentParts returns the parts of an agent's folder.
func agentParts(t *testing.T, dir, agentName string) []string {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "agent="+agentName, "*.arrow"))
	require.NoError(t, err)
	require.NotEmpty(t, parts)
	return parts
}

// dropLastBatch empties the last batch of every part of an agent, as a killed
// writer loses its open batch.
func dropLastBatch(agentName string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		for _, p := range agentParts(t, dir, agentName) {
			n := 0
			require.NoError(t, datalog.RewritePart(p, func(i int, rec arrow.RecordBatch) arrow.RecordBatch { n = i; return rec }))
			require.NoError(t, datalog.RewritePart(p, func(i int, rec arrow.RecordBatch) arrow.RecordBatch {
				if i == n {
					return rec.NewSlice(0, 0)
				}
				return rec
			}))
		}
	}
}

// editTrials rewrites the trials table: keep chooses the rows kept, config the
// environment configuration of a row kept that has the trial's info ("" for the
// defaults).
func editTrials(t *testing.T, dir string, keep func(id, state string) bool, config func(id, cfg string) string) {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "_trials", "*.arrow"))
	require.NoError(t, err)
	for _, p := range parts {
		require.NoError(t, datalog.RewritePart(p, func(_ int, rec arrow.RecordBatch) arrow.RecordBatch {
			ids := rec.Column(rec.Schema().FieldIndices("trial_id")[0]).(*array.String)
			states := rec.Column(rec.Schema().FieldIndices("state")[0]).(*array.String)
			envs := rec.Column(rec.Schema().FieldIndices("env")[0])
			ci := rec.Schema().FieldIndices("config")[0]
			configs := rec.Column(ci).(*array.String)
			var rows []arrow.RecordBatch
			for i := range int(rec.NumRows()) {
				if !keep(ids.Value(i), states.Value(i)) {
					continue
				}
				row := rec.NewSlice(int64(i), int64(i+1))
				if envs.IsValid(i) {
					b := array.NewStringBuilder(memory.DefaultAllocator)
					if cfg := config(ids.Value(i), configs.Value(i)); cfg != "" {
						b.Append(cfg)
					} else {
						b.AppendNull()
					}
					col := b.NewArray()
					b.Release()
					cols := append([]arrow.Array(nil), row.Columns()...)
					cols[ci] = col
					edited := array.NewRecordBatch(row.Schema(), cols, 1)
					col.Release()
					row.Release()
					row = edited
				}
				rows = append(rows, row)
			}
			if len(rows) == 0 {
				return rec.NewSlice(0, 0)
			}
			cols := make([]arrow.Array, rec.NumCols())
			for c := range cols {
				parts := make([]arrow.Array, len(rows))
				for i, r := range rows {
					parts[i] = r.Column(c)
				}
				a, err := array.Concatenate(parts, memory.DefaultAllocator)
				require.NoError(t, err)
				cols[c] = a
			}
			out := array.NewRecordBatch(rec.Schema(), cols, int64(len(rows)))
			for _, c := range cols {
				c.Release()
			}
			for _, r := range rows {
				r.Release()
			}
			return out
		}))
	}
}

func dropEndRecords(t *testing.T, dir string) {
	editTrials(t, dir, func(_, state string) bool { return state == event.Running.String() }, func(_, cfg string) string { return cfg })
}

// A log whose rows stop early (an agent's last batch lost, as when its writer is
// killed, though the trial's end record is there), or whose trial lacks its end
// record, is incomplete, not divergent: the replay compares the rows there are,
// stops where they stop, and reports the trial apart with no mismatch.
func TestReplayIncomplete(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name  string
		edit  []func(t *testing.T, dir string)
		state event.State
		cut   bool // the rows stop before the replay's end
	}{
		{"strategy's last batch lost", []func(*testing.T, string){dropLastBatch(maze.StrategyName)}, event.Ended, true},
		{"motion's last batch lost", []func(*testing.T, string){dropLastBatch(maze.MotionName)}, event.Ended, true},
		{"no end record", []func(*testing.T, string){dropEndRecords}, event.Running, false},
		{"killed", []func(*testing.T, string){dropLastBatch(maze.StrategyName), dropLastBatch(maze.MotionName), dropEndRecords}, event.Running, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := runCampaign(t, dir, 1, datalog.WithBatchRows(8))
			for _, e := range tc.edit {
				e(t, dir)
			}
			mem, withMem := checked(t)
			rep, err := replay.Run(t.Context(), dir, testRegistry(t), withMem)
			require.NoError(t, err)
			assert.Empty(t, rep.Mismatches)
			assert.Empty(t, rep.Diverged)
			assert.Equal(t, 1, rep.Trials)
			require.Len(t, rep.Incomplete, 1)
			in := rep.Incomplete[0]
			assert.Equal(t, "maze-0", in.Trial)
			assert.Equal(t, tc.state, in.State)
			if tc.cut {
				assert.GreaterOrEqual(t, in.Episode, 0, "%v", in)
				assert.NotEmpty(t, in.AgentID)
				assert.Less(t, rep.Steps, int64(c.steps[maze.MotionName]+c.steps[maze.StrategyName]))
			} else {
				assert.Equal(t, -1, in.Episode, "%v", in)
				assert.Equal(t, int64(c.steps[maze.MotionName]+c.steps[maze.StrategyName]), rep.Steps)
			}
			assert.Contains(t, in.String(), "maze-0")
			mem.AssertSize(t, 0)
		})
	}

	_, err := replay.Run(t.Context(), t.TempDir(), registry.New())
	assert.ErrorIs(t, err, datalog.ErrNotLog)
}

// In a log that is incomplete and also differs (a trial's configuration changed, so
// its replay's rewards differ), the trial that differs is divergent, with its
// mismatches, and the others are at most incomplete; an unknown environment fails.
func TestReplayDivergedAndIncomplete(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	runCampaign(t, dir, 6, datalog.WithBatchRows(8))
	dropLastBatch(maze.StrategyName)(t, dir)
	dropLastBatch(maze.MotionName)(t, dir)
	editTrials(t, dir, func(id, state string) bool {
		return id != "maze-5" && id != "maze-2" || state == event.Running.String()
	},
		func(id, cfg string) string {
			if id == "maze-2" {
				return `{"motion": {"reward_for_right_direction": 0.25}}`
			}
			return cfg
		})
	rep, err := replay.Run(t.Context(), dir, testRegistry(t))
	require.NoError(t, err)
	assert.Equal(t, 6, rep.Trials)
	assert.Equal(t, []string{"maze-2"}, rep.Diverged)
	require.NotEmpty(t, rep.Mismatches)
	for _, m := range rep.Mismatches {
		assert.Equal(t, "maze-2", m.Trial, "%v", m)
	}
	require.NotEmpty(t, rep.Incomplete)
	var ids []string
	for _, in := range rep.Incomplete {
		ids = append(ids, in.Trial)
	}
	assert.NotContains(t, ids, "maze-2", "divergent, though it has no end record either")
	assert.Contains(t, ids, "maze-5", "the trial without its end record")
	assert.Equal(t, "maze-5", ids[len(ids)-1], "trials without an end record come last")

	_, err = replay.Run(t.Context(), dir, registry.New())
	assert.ErrorIs(t, err, datalog.ErrReplay)
}

func fmtF(x float32) string {
	return datalogFormat(x)
}
