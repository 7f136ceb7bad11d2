package onnx_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
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

// BenchmarkActObs is BenchmarkAct over a set of observations, one decision each in
// turn: the raw little-endian float32 rows of the file BATON_ONNX_OBS names, for the
// graph BATON_ONNX_GRAPH names (else testdata's). examples/python/onnx_runtimes.py
// writes both and times ONNX Runtime on the same rows; without BATON_ONNX_OBS it is
// skipped.
func BenchmarkActObs(b *testing.B) {
	path := os.Getenv("BATON_ONNX_OBS")
	if path == "" {
		b.Skip("BATON_ONNX_OBS names no observation file")
	}
	raw, err := os.ReadFile(path)
	require.NoError(b, err)
	data := readGraph(b)
	if g := os.Getenv("BATON_ONNX_GRAPH"); g != "" {
		data, err = os.ReadFile(g)
		require.NoError(b, err)
	}
	for _, rt := range []onnx.Runtime{onnx.Compiled, onnx.Gonnx} {
		b.Run("runtime="+string(rt), func(b *testing.B) {
			p, err := onnx.New(data, onnx.WithRuntime(rt))
			require.NoError(b, err)
			all := make([]float32, len(raw)/4)
			for i := range all {
				all[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			rows := len(all) / p.ObsDim()
			require.Positive(b, rows)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := p.Act(context.Background(), all[i*p.ObsDim():(i+1)*p.ObsDim()], nil); err != nil {
					b.Fatal(err)
				}
				if i++; i == rows {
					i = 0
				}
			}
		})
	}
}
