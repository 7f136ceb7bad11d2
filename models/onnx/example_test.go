package onnx_test

import (
	"context"
	"fmt"
	"os"

	"github.com/batonrl/baton/models/onnx"
)

// A policy graph as baton's exporters write it runs compiled into plain Go;
// WithRuntime makes gonnx run it instead. Both choose the same actions.
func ExampleWithRuntime() {
	data, err := os.ReadFile("testdata/maze-strategy.onnx")
	if err != nil {
		panic(err)
	}
	obs := make([]float32, 106)
	obs[100], obs[101] = 1, 2
	mask := []bool{false, true, true, false}
	for _, opts := range [][]onnx.Option{nil, {onnx.WithRuntime(onnx.Gonnx)}} {
		p, err := onnx.New(data, opts...)
		if err != nil {
			panic(err)
		}
		a, err := p.Act(context.Background(), obs, mask)
		if err != nil {
			panic(err)
		}
		fmt.Println(p.Runtime(), p.ObsDim(), p.Actions(), a.Int)
	}
	// Output:
	// compiled 106 4 1
	// gonnx 106 4 1
}
