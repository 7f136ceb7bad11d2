package datalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/examples/maze"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A logged maze campaign replays without a mismatch, with every step compared.
func TestReplay(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name string
		opts []datalog.WriteOption
	}{
		{"plain", nil},
		{"zstd small parts", []datalog.WriteOption{datalog.WithCompression(datalog.ZSTD), datalog.WithMaxPartBytes(16 << 10), datalog.WithBatchRows(16)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := runCampaign(t, dir, 6, tc.opts...)
			mem, withMem := checked(t)
			rep, err := datalog.Replay(t.Context(), dir, registry(t), withMem)
			require.NoError(t, err)
			assert.Empty(t, rep.Mismatches)
			assert.Equal(t, 6, rep.Trials)
			assert.Empty(t, rep.Skipped)
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
			rep, err := datalog.Replay(t.Context(), dir, registry(t))
			require.NoError(t, err)
			require.Equal(t, []datalog.Mismatch{tc.want}, rep.Mismatches)
			assert.Contains(t, rep.Mismatches[0].String(), tc.want.Field)
		})
	}
}

// A log that lost the strategy's last batch, though its trial ended, replays up to
// the first action it lacks and reports it, and the rows it could not reach.
func TestReplayCut(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	runCampaign(t, dir, 1, datalog.WithBatchRows(8))
	// Drop the strategy's last batch: the trial looks ended, so the replay reports the
	// rows it made that the log lacks, and no other difference.
	parts, err := filepath.Glob(filepath.Join(dir, "agent="+maze.StrategyName, "*.arrow"))
	require.NoError(t, err)
	require.Len(t, parts, 1)
	n := 0
	require.NoError(t, datalog.RewritePart(parts[0], func(i int, rec arrow.RecordBatch) arrow.RecordBatch { n = i; return rec }))
	dropped := 0
	require.NoError(t, datalog.RewritePart(parts[0], func(i int, rec arrow.RecordBatch) arrow.RecordBatch {
		if i == n {
			dropped = int(rec.NumRows())
			return rec.NewSlice(0, 0)
		}
		return rec
	}))
	rep, err := datalog.Replay(t.Context(), dir, registry(t))
	require.NoError(t, err)
	// The replay stops where the log's strategy actions end, with a FieldAction
	// mismatch there; the motion rows of the log after that point are missing from it.
	require.NotEmpty(t, rep.Mismatches)
	first := rep.Mismatches[0]
	assert.Equal(t, datalog.FieldAction, first.Field, "%v", first)
	assert.Equal(t, maze.StrategyName+"_0", first.AgentID)
	for _, m := range rep.Mismatches[1:] {
		assert.Equal(t, datalog.FieldMissing, m.Field, "%v", m)
		assert.Equal(t, maze.MotionName, m.AgentID[:len(maze.MotionName)])
	}
	assert.Positive(t, dropped)

	_, err = datalog.Replay(t.Context(), dir, runners.NewRegistry())
	assert.ErrorIs(t, err, datalog.ErrReplay)
}

func fmtF(x float32) string {
	return datalogFormat(x)
}
