package models_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func fixedClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func openDir(t *testing.T, opts ...models.DirOption) *models.Dir {
	t.Helper()
	d, err := models.OpenDir(t.TempDir(), append([]models.DirOption{models.WithClock(fixedClock)}, opts...)...)
	require.NoError(t, err)
	return d
}

func TestDirPutGetList(t *testing.T) {
	ctx := context.Background()
	d := openDir(t)
	for i, body := range []string{"one", "two", "three"} {
		m, err := d.Put(ctx, models.Meta{Name: "maze-strategy", Format: "onnx", Env: "maze", Agent: "strategy",
			Figures: map[string]float64{"success_rate": float64(i) / 2}}, []byte(body))
		require.NoError(t, err)
		assert.Equal(t, i+1, m.Version)
		assert.Equal(t, int64(len(body)), m.Size)
		assert.Len(t, m.SHA256, 64)
		assert.Equal(t, fixedClock(), m.Created)
	}
	_, err := d.Put(ctx, models.Meta{Name: "other"}, []byte("x"))
	require.NoError(t, err)

	tests := []struct {
		version int
		want    string
		wantV   int
	}{{models.Latest, "three", 3}, {1, "one", 1}, {2, "two", 2}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.version), func(t *testing.T) {
			m, data, err := d.Get(ctx, "maze-strategy", tt.version)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(data))
			assert.Equal(t, tt.wantV, m.Version)
			assert.Equal(t, "maze", m.Env)
		})
	}
	all, err := d.List(ctx, "maze-strategy")
	require.NoError(t, err)
	require.Len(t, all, 3)
	assert.Equal(t, "maze-strategy@1", all[0].Ref())
	names, err := d.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, names, 2)
	assert.Equal(t, "maze-strategy@3", names[0].Ref())
	assert.Equal(t, "other@1", names[1].Ref())
}

func TestDirErrors(t *testing.T) {
	ctx := context.Background()
	d := openDir(t)
	_, err := d.Put(ctx, models.Meta{Name: "m"}, []byte("bytes"))
	require.NoError(t, err)

	tests := []struct {
		name    string
		call    func() error
		want    error
		message string
	}{
		{"unknown name", func() error { _, _, err := d.Get(ctx, "nope", models.Latest); return err }, models.ErrNotFound, `no model named "nope"`},
		{"unknown version", func() error { _, _, err := d.Get(ctx, "m", 7); return err }, models.ErrNotFound, `model "m" has no version 7`},
		{"list unknown", func() error { _, err := d.List(ctx, "nope"); return err }, models.ErrNotFound, "nope"},
		{"bad name", func() error { _, err := d.Put(ctx, models.Meta{Name: "../etc"}, nil); return err }, models.ErrInvalid, `"../etc"`},
		{"empty name", func() error { _, err := d.Put(ctx, models.Meta{}, nil); return err }, models.ErrInvalid, "empty"},
		{"negative version", func() error { _, _, err := d.Get(ctx, "m", -1); return err }, models.ErrInvalid, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.message)
		})
	}
}

func TestDirCorrupt(t *testing.T) {
	ctx := context.Background()
	d := openDir(t)
	_, err := d.Put(ctx, models.Meta{Name: "m"}, []byte("the model"))
	require.NoError(t, err)
	path := filepath.Join(d.Root(), "m", "v000001", "model")
	require.NoError(t, os.WriteFile(path, []byte("the modeL"), 0o644))
	_, _, err = d.Get(ctx, "m", 1)
	var ce *models.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, models.ErrCorrupt)
	assert.Contains(t, err.Error(), "m@1 is corrupt")
	assert.Contains(t, err.Error(), "sha256")

	require.NoError(t, os.WriteFile(filepath.Join(d.Root(), "m", "v000001", "meta.json"), []byte("{"), 0o644))
	_, err = d.Stat(ctx, "m", 1)
	assert.ErrorIs(t, err, models.ErrCorrupt)
}

func TestDirKeep(t *testing.T) {
	ctx := context.Background()
	d := openDir(t, models.WithKeep(2))
	for i := range 5 {
		_, err := d.Put(ctx, models.Meta{Name: "m"}, []byte{byte(i)})
		require.NoError(t, err)
	}
	all, err := d.List(ctx, "m")
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, []int{4, 5}, []int{all[0].Version, all[1].Version})
	_, _, err = d.Get(ctx, "m", 3)
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = models.OpenDir(t.TempDir(), models.WithKeep(-1))
	assert.ErrorIs(t, err, models.ErrInvalid)
}

// Writers racing for the next version each get their own number.
func TestDirConcurrentPut(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	d := openDir(t)
	const n = 8
	var wg sync.WaitGroup
	got := make([]int, n)
	for i := range n {
		wg.Go(func() {
			m, err := d.Put(ctx, models.Meta{Name: "m"}, []byte{byte(i)})
			if assert.NoError(t, err) {
				got[i] = m.Version
			}
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, v := range got {
		assert.False(t, seen[v], "version %d given twice", v)
		seen[v] = true
	}
	all, err := d.List(ctx, "m")
	require.NoError(t, err)
	assert.Len(t, all, n)
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		ref     string
		name    string
		version int
		err     bool
	}{
		{"maze", "maze", models.Latest, false},
		{"maze@latest", "maze", models.Latest, false},
		{"maze@12", "maze", 12, false},
		{"maze@0", "", 0, true},
		{"maze@x", "", 0, true},
		{"@3", "", 0, true},
		{"a/b@1", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			name, v, err := models.ParseRef(tt.ref)
			if tt.err {
				require.ErrorIs(t, err, models.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.name, name)
			assert.Equal(t, tt.version, v)
		})
	}
}

func TestCheckSpaces(t *testing.T) {
	obs := spaces.Must(spaces.NewBox([]int{4}, 0, 1))
	act := spaces.Discrete{N: 4}
	ob, _ := spaces.Marshal(obs)
	ab, _ := spaces.Marshal(act)
	m := models.Meta{Name: "m", Version: 2, ObservationSpace: ob, ActionSpace: ab}
	require.NoError(t, m.CheckSpaces("strategy", obs, act))

	err := m.CheckSpaces("strategy", obs, spaces.Discrete{N: 5})
	var se *models.SpaceError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, models.ErrSpaces)
	assert.Equal(t, "action", se.Which)
	assert.Contains(t, err.Error(), "m@2")
	assert.Contains(t, err.Error(), `agent "strategy"`)

	err = models.Meta{Name: "m", Version: 1}.CheckSpaces("strategy", obs, act)
	assert.ErrorIs(t, err, models.ErrSpaces)
}

func TestRegistryWait(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	r := models.NewRegistry(openDir(t))
	_, err := r.Put(ctx, models.Meta{Name: "m"}, []byte("1"))
	require.NoError(t, err)
	m, err := r.Wait(ctx, "m", 0)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Version)

	got := make(chan models.Meta, 1)
	go func() {
		m, err := r.Wait(ctx, "m", 1)
		assert.NoError(t, err)
		got <- m
	}()
	_, err = r.Put(ctx, models.Meta{Name: "m"}, []byte("2"))
	require.NoError(t, err)
	assert.Equal(t, 2, (<-got).Version)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.Wait(cctx, "m", 2)
	assert.ErrorIs(t, err, context.Canceled)
}

// helperEnv makes the test binary a writer that stops before committing version 2,
// tells its parent so, and waits to be killed.
const helperEnv = "BATON_MODELS_KILLED_WRITER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		d, err := models.OpenDir(dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		models.SetBeforeCommit(func(string) {
			fmt.Println("writing")
			select {} // killed here
		})
		_, err = d.Put(context.Background(), models.Meta{Name: "m"}, []byte("version two, never committed"))
		fmt.Println("error: put returned", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// A writer killed with SIGKILL in the middle of a Put leaves the previous version
// intact and readable, and the next Put works.
func TestDirKilledWriter(t *testing.T) {
	ctx := context.Background()
	d := openDir(t)
	_, err := d.Put(ctx, models.Meta{Name: "m"}, []byte("version one"))
	require.NoError(t, err)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+d.Root())
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "writing", strings.TrimSpace(line))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "helper: %v", err)

	m, data, err := d.Get(ctx, "m", models.Latest)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Version)
	assert.Equal(t, "version one", string(data))
	m, err = d.Put(ctx, models.Meta{Name: "m"}, []byte("version two"))
	require.NoError(t, err)
	assert.Equal(t, 2, m.Version)
	all, err := d.List(ctx, "")
	require.NoError(t, err)
	assert.Len(t, all, 1)
}

func TestMetaJSON(t *testing.T) {
	m := models.Meta{Name: "m", Version: 1, Curve: []models.Point{{Episode: 1, Return: 0.5, Success: true}}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	var back models.Meta
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m.Curve, back.Curve)
}
