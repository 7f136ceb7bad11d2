package onnx_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/models/onnx"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// until spins until cond holds (the follower loads in its own goroutine), failing
// after a generous bound.
func until(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		runtime.Gosched()
	}
}

func TestFollow(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	graph, err := os.ReadFile("testdata/maze-strategy.onnx")
	require.NoError(t, err)
	d, err := models.OpenDir(t.TempDir())
	require.NoError(t, err)
	reg := models.NewRegistry(d)
	_, err = reg.Put(ctx, models.Meta{Name: "m"}, graph)
	require.NoError(t, err)

	refuse := errors.New("refused by the check")
	f, err := onnx.Follow(ctx, reg, "m", func(m models.Meta) error {
		if m.Labels["bad"] != "" {
			return refuse
		}
		return nil
	})
	require.NoError(t, err)
	defer f.Close()
	p := f.Policy()
	assert.Equal(t, 1, p.Version().Version)

	_, err = reg.Put(ctx, models.Meta{Name: "m"}, graph)
	require.NoError(t, err)
	until(t, func() bool { return f.Latest().Version == 2 })
	obs := make([]float32, 106)
	_, err = p.Act(ctx, obs, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, p.Version().Version, "a version is taken between episodes only")
	require.NoError(t, p.Learn(ctx, &runners.Outcome{Kind: runners.OutcomeStep}))
	assert.Equal(t, 1, p.Version().Version)
	require.NoError(t, p.Learn(ctx, &runners.Outcome{Kind: runners.OutcomeEpisodeEnd}))
	assert.Equal(t, 2, p.Version().Version)

	// A version the check refuses, or that is not a graph, is skipped.
	_, err = reg.Put(ctx, models.Meta{Name: "m", Labels: map[string]string{"bad": "yes"}}, graph)
	require.NoError(t, err)
	until(t, func() bool { return errors.Is(f.Err(), refuse) })
	_, err = reg.Put(ctx, models.Meta{Name: "m"}, []byte("not a graph"))
	require.NoError(t, err)
	until(t, func() bool { return errors.Is(f.Err(), onnx.ErrModel) })
	assert.Equal(t, 2, f.Latest().Version)

	_, err = onnx.Follow(ctx, reg, "nope", nil)
	assert.ErrorIs(t, err, models.ErrNotFound)
}
