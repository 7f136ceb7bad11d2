package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/batonrl/baton/datalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A real "baton run --log" killed with SIGKILL at random moments, once its log holds a
// number of complete record batches drawn from a seeded generator: every batch that
// was on disk before the kill reads back the same (each part's bytes are taken just
// before the kill and read on their own with the Arrow IPC stream reader), the Go
// reader reads every part the kill left, "baton log recover" rewrites the parts
// without a footer with exactly their complete batches and reports their rows, and
// the log reads the same after recovery. What the test asserts does not depend on
// when the kill lands; only how much is written by then does.
func TestKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds baton and kills it")
	}
	bin := buildBaton(t)
	rng := rand.New(rand.NewPCG(20, 26))
	comps := []string{"none", "lz4", "zstd", "lz4", "none"}
	if raceDetector() {
		// The test's reading is what the race detector slows, and it reads all that
		// the killed run wrote: compressed logs only, a fraction of the bytes.
		comps = []string{"lz4", "zstd", "lz4"}
	}
	for i, comp := range comps {
		// Enough batches to be sure a run gets going; sometimes enough for the
		// compressed runs to roll parts over (every 4096 trials of a worker).
		batches := 2 + rng.IntN(12)
		if comp != "none" && i == 3 {
			batches = 100 + rng.IntN(100)
		}
		t.Run(fmt.Sprintf("%d/%s/%d batches", i, comp, batches), func(t *testing.T) {
			killedRun(t, bin, comp, batches)
		})
	}
}

// raceDetector reports whether the test runs with the race detector.
func raceDetector() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
}

// buildBaton builds the baton command into a temporary directory.
func buildBaton(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build baton with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "baton")
	out, err := exec.Command(gobin, "build", "-o", bin, "../cmd/baton").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// killedRun runs baton run maze with a log compressed with comp, kills it once its
// log holds at least batches record batches of steps, and checks what it left.
func killedRun(t *testing.T, bin, comp string, batches int) {
	dir := filepath.Join(t.TempDir(), "log")
	var stderr bytes.Buffer
	// Uncompressed, one worker: it writes fast enough for the batches to pile up
	// while the test reads them on a small machine.
	workers := "2"
	if comp == "none" {
		workers = "1"
	}
	cmd := exec.Command(bin, "run", "maze", "--trials", "1000000", "--workers", workers, "--log", dir, "--log-compression", comp)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	// Wait for the log to hold the batches: poll the parts' sizes, and count the
	// complete batches of the steps' parts whenever they grew.
	before := waitForBatches(t, dir, batches, &stderr)
	require.NoError(t, cmd.Process.Signal(os.Kill))
	err := cmd.Wait()
	killed = true
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "baton run ended on its own: %v: %s", err, stderr.String())

	// Every part the kill left, read on its own with the Arrow IPC readers, begins
	// with the batches it held before the kill.
	after := readParts(t, dir)
	footless := 0
	for path, data := range before {
		snap := readPart(t, path, data)
		p := after[path]
		require.NotNil(t, p, "part %s vanished", path)
		require.GreaterOrEqual(t, len(p.batches), len(snap.batches), "batches of %s", path)
		for i, rec := range snap.batches {
			assert.True(t, sameRecords(rec, p.batches[i]), "batch %d of %s differs from before the kill", i, path)
		}
	}
	var stepRows int64
	for path, p := range after {
		if !p.footer {
			footless++
		}
		if strings.Contains(path, "agent=") {
			stepRows += p.rows
		}
	}
	assert.Positive(t, footless, "the kill left parts without their footers")

	// The Go reader reads every part as it is, the open ones up to their last
	// complete batch.
	goRows := readLog(t, dir)
	assert.Equal(t, stepRows, goRows, "rows the Go reader reads")

	// baton log recover rewrites the parts without a footer, keeping their complete
	// batches, and removes those with none.
	out, err := exec.Command(bin, "log", "recover", dir, "--json").Output()
	require.NoError(t, err, "baton log recover: %s", stderrOf(err))
	var rep struct {
		Parts []recoveredPart `json:"parts"`
		Rows  int64           `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(out, &rep), "%s", out)
	assert.Len(t, rep.Parts, footless, "the parts recovered are those without a footer")
	var kept int64
	for _, r := range rep.Parts {
		p := after[filepath.Join(dir, filepath.FromSlash(r.Path))]
		require.NotNil(t, p, "recover reports part %s, which the kill did not leave", r.Path)
		assert.False(t, p.footer, r.Path)
		assert.Equal(t, len(p.batches), r.Batches, "batches kept of %s", r.Path)
		assert.Equal(t, p.rows, r.Rows, "rows kept of %s", r.Path)
		assert.Equal(t, len(p.batches) == 0, r.Removed, "%s removed", r.Path)
		kept += r.Rows
	}
	assert.Equal(t, kept, rep.Rows)

	recovered := readParts(t, dir)
	for path, p := range after {
		q, ok := recovered[path]
		if len(p.batches) == 0 {
			assert.False(t, ok, "%s, without a complete batch, is removed", path)
			continue
		}
		require.True(t, ok, "%s is kept", path)
		assert.True(t, q.footer, "%s has its footer", path)
		require.Len(t, q.batches, len(p.batches), path)
		for i := range p.batches {
			assert.True(t, sameRecords(p.batches[i], q.batches[i]), "batch %d of %s", i, path)
		}
	}
	assert.Equal(t, goRows, readLog(t, dir), "rows after recovery")

	// The recovered log replays with no mismatch: the trials the kill cut short are
	// incomplete, not divergent, and the status is 0.
	out, err = exec.Command(bin, "replay", dir, "--json").Output()
	require.NoError(t, err, "baton replay: %s", stderrOf(err))
	var replayed struct {
		Trials     int               `json:"trials"`
		Steps      int64             `json:"steps"`
		Diverged   []string          `json:"diverged"`
		Incomplete []json.RawMessage `json:"incomplete"`
		Mismatches []json.RawMessage `json:"mismatches"`
	}
	require.NoError(t, json.Unmarshal(out, &replayed), "%s", out)
	assert.Positive(t, replayed.Trials)
	assert.Empty(t, replayed.Mismatches)
	assert.Empty(t, replayed.Diverged)
	assert.NotEmpty(t, replayed.Incomplete, "the trials running when the run was killed")
	out, err = exec.Command(bin, "log", "recover", dir, "--json").Output()
	require.NoError(t, err, "baton log recover: %s", stderrOf(err))
	assert.JSONEq(t, `{"parts": [], "rows": 0, "moved": 0}`, string(out), "nothing left to recover")
	t.Logf("killed after %d step rows in %d parts (%d without a footer)", stepRows, len(after), footless)
}

// sameRecords reports whether two record batches hold the same values. Their
// dictionaries may differ beyond the values used: a part's stream gives each batch the
// dictionaries of the batches so far, its footer the full ones.
func sameRecords(a, b arrow.RecordBatch) bool {
	if !a.Schema().Equal(b.Schema()) || a.NumRows() != b.NumRows() {
		return false
	}
	for i := range a.Columns() {
		if !sameValues(a.Column(i), b.Column(i)) {
			return false
		}
	}
	return true
}

// sameValues reports whether two arrays of one type hold the same values,
// dictionaries compared by the values their indices pick.
func sameValues(a, b arrow.Array) bool {
	if a.Len() != b.Len() || a.NullN() != b.NullN() {
		return false
	}
	switch a := a.(type) {
	case *array.Dictionary:
		b := b.(*array.Dictionary)
		for i := range a.Len() {
			if a.IsNull(i) != b.IsNull(i) {
				return false
			}
			if a.IsValid(i) && a.Dictionary().ValueStr(a.GetValueIndex(i)) != b.Dictionary().ValueStr(b.GetValueIndex(i)) {
				return false
			}
		}
		return true
	case *array.List:
		b := b.(*array.List)
		for i := range a.Len() {
			if a.IsNull(i) != b.IsNull(i) {
				return false
			}
			s0, e0 := a.ValueOffsets(i)
			s1, e1 := b.ValueOffsets(i)
			if e0-s0 != e1-s1 {
				return false
			}
		}
		return sameValues(a.ListValues(), b.ListValues())
	case *array.Struct:
		b := b.(*array.Struct)
		for i := range a.NumField() {
			if !sameValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return array.Equal(a, b)
}

// stderrOf returns what a command that failed wrote to stderr.
func stderrOf(err error) string {
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return string(ee.Stderr)
	}
	return ""
}

// pollInterval is how often waitForBatches looks at the parts' sizes.
const pollInterval = 2 * time.Millisecond

// part is one part file read with the Arrow IPC readers: through its footer when it
// has one, else as the stream after the leading magic, up to its last complete batch.
type part struct {
	footer  bool
	batches []arrow.RecordBatch
	rows    int64
}

// readPart reads a part's bytes.
func readPart(t *testing.T, path string, data []byte) *part {
	t.Helper()
	p := &part{}
	magic := []byte("ARROW1")
	if len(data) >= 2*len(magic)+8 && bytes.HasSuffix(data, magic) {
		fr, err := ipc.NewFileReader(bytes.NewReader(data))
		require.NoError(t, err, "%s has a footer", path)
		p.footer = true
		for i := range fr.NumRecords() {
			rec, err := fr.RecordBatchAt(i)
			require.NoError(t, err, "%s: batch %d", path, i)
			rec.Retain()
			p.batches = append(p.batches, rec)
		}
		require.NoError(t, fr.Close())
	} else if len(data) > 8 {
		r, err := ipc.NewReader(bytes.NewReader(data[8:]))
		if err == nil { // no complete schema: no batch
			for r.Next() {
				rec := r.RecordBatch()
				rec.Retain()
				p.batches = append(p.batches, rec)
			}
			r.Release()
		}
	}
	for _, rec := range p.batches {
		p.rows += rec.NumRows()
		t.Cleanup(rec.Release)
	}
	return p
}

// readParts reads every part of the log in dir.
func readParts(t *testing.T, dir string) map[string]*part {
	t.Helper()
	parts := map[string]*part{}
	for _, path := range partPaths(t, dir) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		parts[path] = readPart(t, path, data)
	}
	return parts
}

// partPaths lists the parts of the log in dir.
func partPaths(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".arrow") {
			paths = append(paths, path)
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	slices.Sort(paths)
	return paths
}

// waitForBatches waits until the steps' parts in dir hold at least n complete record
// batches in all, then returns the bytes of every part at that moment. It polls the
// parts' sizes, and reads the parts and counts their batches whenever the steps'
// have doubled in size since it last did; it fails after a minute.
func waitForBatches(t *testing.T, dir string, n int, stderr *bytes.Buffer) map[string][]byte {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var counted int64 // the size of the steps' parts when last counted
	for time.Now().Before(deadline) {
		paths := partPaths(t, dir)
		size := map[string]int64{}
		var steps int64
		for _, path := range paths {
			st, err := os.Stat(path)
			require.NoError(t, err) // parts are never removed while written
			size[path] = st.Size()
			if strings.Contains(path, "agent=") {
				steps += st.Size()
			}
		}
		if steps == 0 || steps < 2*counted {
			time.Sleep(pollInterval)
			continue
		}
		counted = steps
		data, total := map[string][]byte{}, 0
		for _, path := range paths {
			// The bytes there were when the sizes were taken, not those written since:
			// reading to the end could chase the writer.
			b := make([]byte, size[path])
			f, err := os.Open(path)
			require.NoError(t, err)
			_, err = io.ReadFull(f, b)
			require.NoError(t, f.Close())
			require.NoError(t, err)
			data[path] = b
			if strings.Contains(path, "agent=") {
				total += countBatches(b)
			}
		}
		if total >= n {
			return data
		}
	}
	t.Fatalf("the log in %s did not reach %d batches in a minute: %s", dir, n, stderr.String())
	return nil
}

// countBatches counts the complete record batches of a part being written, the
// stream after its leading magic, without decoding them.
func countBatches(data []byte) int {
	if len(data) <= 8 {
		return 0
	}
	mr := ipc.NewMessageReader(bytes.NewReader(data[8:]))
	defer mr.Release()
	n := 0
	for {
		m, err := mr.Message()
		if err != nil {
			return n
		}
		if m.Type() == ipc.MessageRecordBatch {
			n++
		}
	}
}

// readLog reads every agent's rows, the trials and the episodes of the log in dir
// with the Go reader and returns the number of rows.
func readLog(t *testing.T, dir string) int64 {
	t.Helper()
	l, err := datalog.Open(dir)
	require.NoError(t, err)
	var rows int64
	for _, name := range l.Agents() {
		for _, err := range l.Rows(name) {
			require.NoError(t, err)
			rows++
		}
	}
	ts, err := l.Trials()
	require.NoError(t, err)
	assert.NotEmpty(t, ts)
	_, err = l.Episodes()
	require.NoError(t, err)
	return rows
}
