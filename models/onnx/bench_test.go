package onnx_test

import (
	"context"
	"testing"
)

func BenchmarkAct(b *testing.B) {
	p := load(b)
	obs := make([]float32, 106)
	obs[100], obs[101] = 1, 2
	mask := []bool{true, true, false, true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Act(context.Background(), obs, mask); err != nil {
			b.Fatal(err)
		}
	}
}
