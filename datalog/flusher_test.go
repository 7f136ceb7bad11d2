package datalog

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// readTree returns the files under dir by their paths relative to it.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[rel] = b
		return err
	}))
	return files
}

// feedTrials logs trials trials of rows synthetic steps each (feed's) into a new
// dataset in dir, written with opts, through one writer; with waitEach, the writer
// waits for each batch of steps to be written.
func feedTrials(t *testing.T, dir string, trials, rows int, waitEach bool, opts ...WriteOption) Stats {
	t.Helper()
	ds, err := NewDataset(dir, opts...)
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	w.waitEach = waitEach
	for i := range trials {
		feed(t, w, fmt.Sprintf("trial-%d", i), rows)
	}
	require.NoError(t, ds.Close())
	return ds.Stats()
}

// Where a part ends, and so every byte of the log, depends on the rows alone: a writer
// whose flusher lags behind writes the same files as one that waits for each batch.
func TestPartsDependOnRowsAlone(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tc := range []struct {
		name string
		opts []WriteOption
	}{
		{"small parts", []WriteOption{WithBatchRows(16), WithMaxPartBytes(6 << 10)}},
		{"small parts lz4", []WriteOption{WithBatchRows(16), WithMaxPartBytes(2 << 10), WithCompression(LZ4)}},
		{"parts of one batch", []WriteOption{WithBatchRows(8), WithMaxPartBytes(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waited, free, inline := t.TempDir(), t.TempDir(), t.TempDir()
			st := feedTrials(t, waited, 30, 40, true, tc.opts...)
			feedTrials(t, free, 30, 40, false, tc.opts...)
			feedTrials(t, inline, 30, 40, false, append(tc.opts, WithInlineWrites(true))...)
			want := readTree(t, waited)
			for what, dir := range map[string]string{"a lagging flusher": free, "inline writes": inline} {
				got := readTree(t, dir)
				require.Equal(t, len(want), len(got), "files, %s", what)
				for name, b := range want {
					assert.True(t, bytes.Equal(b, got[name]), "%s differs, %s", name, what)
				}
			}
			assert.Greater(t, st.Parts, int64(6), "parts")
		})
	}
}

// A part of an agent ends once a dictionary holds MaxPartDictValues values, whatever
// its size, and every row reads back.
func TestPartDictionaryLimit(t *testing.T) {
	dir := t.TempDir()
	const trials = MaxPartDictValues + MaxPartDictValues/2
	feedTrials(t, dir, trials, 2, false, WithBatchRows(64))
	l, err := Open(dir)
	require.NoError(t, err)
	parts := 0
	for _, p := range l.Parts() {
		if p.Table == TableSteps {
			parts++
		}
	}
	assert.Equal(t, 2, parts, "parts of agent a")
	n := 0
	for r, err := range l.Rows("a") {
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("trial-%d", n/2), r.Trial)
		checkRow(t, &r, n%2)
		n++
	}
	assert.Equal(t, 2*trials, n)
}

// Flush returns once the rows fed so far are written: the dataset counts them all.
func TestFlushWaitsForTheFlusher(t *testing.T) {
	defer goleak.VerifyNone(t)
	ds, err := NewDataset(t.TempDir(), WithBatchRows(7), WithCompression(ZSTD))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	total := 0
	for i, rows := range []int{1, 7, 50, 333} {
		feed(t, w, fmt.Sprintf("t-%d", i), rows)
		total += rows
		require.NoError(t, w.Flush())
		assert.Equal(t, int64(total), ds.Stats().Rows, "after flushing %d rows", total)
	}
	require.NoError(t, ds.Close())
}

// A writer keeps at most two column sets per table, however far its flusher lags,
// one when it writes inline, and gives them all back to the allocator when it is
// closed, its flusher gone.
func TestWriterBuffers(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%t", inline), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ds, err := NewDataset(t.TempDir(), WithBatchRows(4), WithAllocator(mem), WithCompression(LZ4), WithInlineWrites(inline))
			require.NoError(t, err)
			w, err := ds.NewWriter()
			require.NoError(t, err)
			for i := range 20 {
				feed(t, w, fmt.Sprintf("t-%d", i), 30)
			}
			most := 2
			if inline {
				most = 1
			}
			require.Len(t, w.order, 1)
			assert.Equal(t, most, w.order[0].sets, "column sets of the agent")
			for _, st := range w.tables {
				assert.LessOrEqual(t, st.sets, most, "column sets of %s", st.out.dir)
			}
			assert.Positive(t, mem.CurrentAlloc())
			require.NoError(t, w.Close())
			mem.AssertSize(t, 0)
		})
	}
}

// A write that fails, on the flusher or inline, fails the calls that follow; Close
// leaves the parts open at the failure without their footers, for Recover.
func TestFlusherFailure(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%t", inline), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			dir := t.TempDir()
			ds, err := NewDataset(dir, WithBatchRows(5), WithInlineWrites(inline))
			require.NoError(t, err)
			w, err := ds.NewWriter()
			require.NoError(t, err)
			feed(t, w, "ok", 12) // two batches of agent a, in a part left open
			require.NoError(t, w.Flush())
			// The trials table's part is full once it holds another batch, and its next one
			// cannot be created: its folder is a file.
			ds.cfg.maxPart = 1
			ctx := context.Background()
			info := &event.TrialInfo{ID: "x", Env: "synthetic", Episodes: 1, Agents: []env.Spec{{
				Name: "a", ObservationSpace: spaces.Must(spaces.NewBox([]int{3}, -1e9, 1e9)), ActionSpace: spaces.Discrete{N: 3}, MaskLen: 3}}}
			running := &event.Event{Kind: event.KindState, Trial: "x", State: &event.StateChange{Trial: "x", State: event.Running, Info: info}}
			require.NoError(t, w.Handle(ctx, running))
			require.NoError(t, w.Flush())
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "_trials")))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "_trials"), nil, 0o644))
			require.NoError(t, w.Handle(ctx, running))
			err = w.Flush()
			require.Error(t, err)
			assert.ErrorContains(t, err, "_trials")
			assert.Equal(t, err, w.Handle(ctx, running), "the error sticks")
			assert.Equal(t, err, w.Close())
			assert.NoError(t, w.Close())
			require.NoError(t, ds.Close(), "lets go of the directory's lock")

			rec, err := Recover(dir)
			require.NoError(t, err)
			require.Len(t, rec, 1, "the agent's part, left open")
			assert.Equal(t, Recovered{Path: rec[0].Path, Batches: 3, Rows: 12}, rec[0])
		})
	}
}
