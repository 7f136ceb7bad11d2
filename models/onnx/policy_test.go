package onnx_test

import (
	"context"
	"os"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/models/onnx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/maze-strategy.onnx is the maze strategy's untrained policy (seed 3), as
// examples/python/train_maze.py exports it: 106 observation values, 4 logits.
func load(t testing.TB) *onnx.Policy {
	t.Helper()
	p, err := onnx.New(readGraph(t))
	require.NoError(t, err)
	return p
}

func readGraph(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/maze-strategy.onnx")
	require.NoError(t, err)
	return data
}

func TestPolicy(t *testing.T) {
	for _, rt := range []onnx.Runtime{onnx.Compiled, onnx.Gonnx} {
		t.Run(string(rt), func(t *testing.T) { testPolicy(t, rt) })
	}
}

func testPolicy(t *testing.T, rt onnx.Runtime) {
	p, err := onnx.New(readGraph(t), onnx.WithRuntime(rt))
	require.NoError(t, err)
	require.Equal(t, rt, p.Runtime())
	assert.Equal(t, 106, p.ObsDim())
	assert.Equal(t, 4, p.Actions())
	obs := make([]float32, 106)
	obs[100], obs[101] = 1, 2
	logits, err := p.Logits(obs)
	require.NoError(t, err)
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	tests := []struct {
		name string
		mask []bool
		want int64
		err  error
	}{
		{"no mask", nil, int64(best), nil},
		{"only one allowed", []bool{false, false, true, false}, 2, nil},
		{"none allowed", []bool{false, false, false, false}, 0, onnx.ErrMask},
		{"short mask", []bool{true}, 0, onnx.ErrMask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := p.Act(context.Background(), obs, tt.mask)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, agent.Discrete(tt.want), a)
		})
	}
	_, err = p.Logits(make([]float32, 5))
	assert.ErrorIs(t, err, onnx.ErrModel)
}

func TestNotAGraph(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("not onnx at all")} {
		_, err := onnx.New(data)
		assert.ErrorIs(t, err, onnx.ErrModel)
	}
}
