package datalog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/batonrl/baton/datalog/internal/ipcfile"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// feed sends the events of a trial of n synthetic steps of one agent to w: the
// observation of step i is [i, i+0.5, -i], its action i%3.
func feed(t testing.TB, w event.Sink, id string, n int) {
	ctx := context.Background()
	info := &event.TrialInfo{ID: id, Env: "synthetic", Seed: 1, Episodes: 1, Agents: []env.Spec{{
		Name: "a", ObservationSpace: spaces.Must(spaces.NewBox([]int{3}, -1e9, 1e9)), ActionSpace: spaces.Discrete{N: 3}, MaskLen: 3}}}
	require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindState, Trial: id, State: &event.StateChange{Trial: id, State: event.Running, Info: info}}))
	obs := make([]float32, 3)
	mask := []bool{true, false, true}
	src := []event.RewardSource{{Source: event.SourceEnv, Value: 1}}
	for i := range n {
		obs[0], obs[1], obs[2] = float32(i), float32(i)+0.5, -float32(i)
		s := event.StepEvent{Tick: i, Agent: "a", AgentID: "a_0", Start: i == 0, Acting: true, Obs: obs, Mask: mask, Reward: 1, Sources: src, SpanTicks: 1}
		if i > 0 {
			s.Action.Int = int64(i % 3)
		}
		require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindStep, Trial: id, Step: &s}))
	}
	require.NoError(t, w.Handle(ctx, &event.Event{Kind: event.KindState, Trial: id, State: &event.StateChange{Trial: id, State: event.Ended, Info: info}}))
}

// checkRow checks that row r is step i of feed.
func checkRow(t testing.TB, r *Row, i int) {
	t.Helper()
	require.Equal(t, i, r.Tick)
	require.Equal(t, []float32{float32(i), float32(i) + 0.5, -float32(i)}, r.Obs)
	if i > 0 {
		require.Equal(t, int64(i%3), r.Action.Int)
	}
	require.Equal(t, []bool{true, false, true}, r.Mask)
}

// writePart logs n steps in batches of batch rows and returns the bytes of the one
// part of agent a and its record batch blocks.
func writePart(t testing.TB, n, batch int, comp Compression) ([]byte, []ipcfile.Block) {
	dir := t.TempDir()
	ds, err := NewDataset(dir, WithBatchRows(batch), WithCompression(comp))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	feed(t, w, "c-0", n)
	require.NoError(t, ds.Close())
	files, err := filepath.Glob(filepath.Join(dir, "agent=a", "*.arrow"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	_, blocks, err := ipcfile.ReadFooter(data)
	require.NoError(t, err)
	require.Len(t, blocks, (n+batch-1)/batch)
	return data, blocks
}

// A part cut at any byte reads back exactly the batches that lie wholly before the
// cut, as the writer wrote them; cut after its last batch, it reads back whole.
func TestTruncatedPart(t *testing.T) {
	const n, batch = 40, 6
	for _, comp := range []Compression{Uncompressed, ZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			data, blocks := writePart(t, n, batch, comp)
			// Every byte near a batch's edges, at the start and in the tail, and others
			// drawn at random.
			cuts := map[int]bool{}
			for c := range 40 {
				cuts[c] = true
				cuts[len(data)-c] = true
			}
			for _, b := range blocks {
				for d := -12; d <= 12; d++ {
					cuts[int(b.Offset)+d] = true
					cuts[int(b.End())+d] = true
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 150 {
				cuts[rng.IntN(len(data)+1)] = true
			}
			for c := range cuts {
				if c < 0 || c > len(data) {
					continue
				}
				want := 0
				for _, b := range blocks {
					if b.End() <= int64(c) {
						want++
					}
				}
				r, err := readPart("cut", bytes.NewReader(data[:c]), int64(c), mem)
				require.NoError(t, err, "cut at %d", c)
				assert.Equal(t, c == len(data), r.complete)
				got, rows := 0, 0
				var d rowDecoder
				for rec, err := range r.batches() {
					require.NoError(t, err)
					require.NoError(t, d.reset("a", rec))
					for i := range int(rec.NumRows()) {
						row := d.row(i)
						checkRow(t, &row, rows)
						rows++
					}
					got++
				}
				require.NoError(t, r.Close())
				require.Equal(t, want, got, "batches of a part cut at %d of %d", c, len(data))
				require.Equal(t, min(want*batch, n), rows, "rows of a part cut at %d", c)
			}
			mem.AssertSize(t, 0)
		})
	}
}

// Recover rewrites cut parts as files with their complete batches, removes parts with
// none, and leaves finished parts alone; the log reads the same before and after.
func TestRecover(t *testing.T) {
	const n, batch = 40, 6
	data, blocks := writePart(t, n, batch, LZ4)
	for _, tc := range []struct {
		name    string
		cut     int
		batches int
		removed bool
	}{
		{"mid batch", int(blocks[3].Offset + 40), 3, false},
		{"at a batch's end", int(blocks[2].End()), 3, false},
		{"in the tail", len(data) - 20, len(blocks), false},
		{"before the footer's magic", len(data) - 1, len(blocks), false},
		{"in the first batch", int(blocks[0].Offset + 5), 0, true},
		{"in the magic", 3, 0, true},
		{"empty", 0, 0, true},
		{"whole", len(data), len(blocks), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			dir := t.TempDir()
			// A finished trials part beside the cut agent part, which Recover leaves alone.
			ds, err := NewDataset(dir)
			require.NoError(t, err)
			w, err := ds.NewWriter()
			require.NoError(t, err)
			feed(t, w, "other", 3)
			require.NoError(t, ds.Close())
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "agent=a")))
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "agent=a"), 0o755))
			path := filepath.Join(dir, "agent=a", "part-00100.arrow")
			require.NoError(t, os.WriteFile(path, data[:tc.cut], 0o644))

			l, err := Open(dir, WithAllocator(mem))
			require.NoError(t, err)
			rows := 0
			for r, err := range l.Rows("a") {
				require.NoError(t, err)
				checkRow(t, &r, rows)
				rows++
			}
			want := min(tc.batches*batch, n)
			require.Equal(t, want, rows)

			rec, err := Recover(dir, WithAllocator(mem))
			require.NoError(t, err)
			if tc.cut == len(data) {
				assert.Empty(t, rec)
			} else {
				require.Len(t, rec, 1)
				moved := ""
				if tc.removed { // moved aside, never deleted
					moved = filepath.Join(dir, DamagedDir, "agent=a", "part-00100.arrow")
				}
				assert.Equal(t, Recovered{Path: path, Batches: tc.batches, Rows: int64(want), Removed: tc.removed, Cut: rec[0].Cut, Moved: moved}, rec[0])
			}
			if tc.removed {
				assert.NoFileExists(t, path)
				got, err := os.ReadFile(filepath.Join(dir, DamagedDir, "agent=a", "part-00100.arrow"))
				require.NoError(t, err)
				assert.Equal(t, data[:tc.cut], got, "the part moved aside as it was")
			} else {
				r, err := openPart(path, mem)
				require.NoError(t, err)
				assert.True(t, r.complete)
				assert.Equal(t, tc.batches, r.numBatches())
				require.NoError(t, r.Close())
				l, err = Open(dir, WithAllocator(mem))
				require.NoError(t, err)
				rows = 0
				for r, err := range l.Rows("a") {
					require.NoError(t, err)
					checkRow(t, &r, rows)
					rows++
				}
				assert.Equal(t, want, rows)
			}
			again, err := Recover(dir)
			require.NoError(t, err)
			assert.Empty(t, again)
			mem.AssertSize(t, 0)
		})
	}
}

// The crash child: a process that logs steps until it is killed, telling its parent
// how many rows its batches hold after each batch it writes.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("BATON_DATALOG_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestKilledWriter")
	}
	inline := os.Getenv("BATON_DATALOG_CRASH_INLINE") == "true"
	ds, err := NewDataset(dir, WithBatchRows(50), WithMaxPartBytes(16<<10), WithCompression(LZ4), WithInlineWrites(inline))
	require.NoError(t, err)
	w, err := ds.NewWriter()
	require.NoError(t, err)
	out := bufio.NewWriter(os.Stdout)
	var last int64
	sink := event.SinkFunc(func(ctx context.Context, e *event.Event) error {
		if err := w.Handle(ctx, e); err != nil {
			return err
		}
		if rows := ds.Stats().Rows; rows != last {
			last = rows
			fmt.Fprintf(out, "rows %d\n", rows)
			return out.Flush()
		}
		return nil
	})
	feed(t, sink, "k-0", 1<<30)
}

// A writer killed at a random moment (SIGKILL) leaves every batch it wrote readable,
// and Recover turns its parts into files; so does one that writes inline.
func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for run := range 4 {
		inline := run%2 == 1
		t.Run(fmt.Sprintf("%d/inline=%t", run, inline), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "BATON_DATALOG_CRASH_DIR="+dir, "BATON_DATALOG_CRASH_INLINE="+fmt.Sprint(inline))
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(stdout)
			reports := 5 + rng.IntN(40)
			var written int64
			for range reports {
				require.True(t, lines.Scan(), "the child stopped: %v", lines.Err())
				_, err := fmt.Sscanf(lines.Text(), "rows %d", &written)
				require.NoError(t, err)
			}
			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()

			l, err := Open(dir)
			require.NoError(t, err)
			rows := 0
			for r, err := range l.Rows("a") {
				require.NoError(t, err)
				checkRow(t, &r, rows)
				rows++
			}
			assert.GreaterOrEqual(t, int64(rows), written, "every batch reported written reads back")
			rec, err := Recover(dir)
			require.NoError(t, err)
			assert.NotEmpty(t, rec, "the open parts had no footer")
			l, err = Open(dir)
			require.NoError(t, err)
			after := 0
			for r, err := range l.Rows("a") {
				require.NoError(t, err)
				checkRow(t, &r, after)
				after++
			}
			assert.Equal(t, rows, after)
			for _, p := range l.Parts() {
				r, err := openPart(p.Path, memory.DefaultAllocator)
				require.NoError(t, err)
				assert.True(t, r.complete, p.Path)
				require.NoError(t, r.Close())
			}
			ts, err := l.Trials()
			require.NoError(t, err)
			require.Len(t, ts, 1)
			assert.Equal(t, event.Running, ts[0].State, "the trial never ended")
			assert.True(t, slices.ContainsFunc(ts, func(t Trial) bool { return t.HasInfo }))
		})
	}
}
