package onnx_test

import (
	"context"
	"testing"

	"github.com/batonrl/baton/models/onnx"
	"github.com/stretchr/testify/require"
)

// BenchmarkAct is one greedy decision of the maze strategy's graph, per runtime.
func BenchmarkAct(b *testing.B) {
	for _, rt := range []onnx.Runtime{onnx.Compiled, onnx.Gonnx} {
		b.Run("runtime="+string(rt), func(b *testing.B) {
			p, err := onnx.New(readGraph(b), onnx.WithRuntime(rt))
			require.NoError(b, err)
			obs := make([]float32, 106)
			obs[100], obs[101] = 1, 2
			mask := []bool{true, true, false, true}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Act(context.Background(), obs, mask); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
