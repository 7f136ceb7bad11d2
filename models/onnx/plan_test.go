package onnx_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	gonnxpb "github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/models/onnx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func floats(name string, dims []int64, rng *rand.Rand) *gonnxpb.TensorProto {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return &gonnxpb.TensorProto{Name: name, Dims: dims, DataType: int32(gonnxpb.TensorProto_FLOAT), FloatData: v}
}

// rawInts is an int64 tensor in raw bytes, as torch exports Slice's bounds.
func rawInts(name string, v ...int64) *gonnxpb.TensorProto {
	raw := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(x))
	}
	return &gonnxpb.TensorProto{Name: name, Dims: []int64{int64(len(v))}, DataType: int32(gonnxpb.TensorProto_INT64), RawData: raw}
}

func node(op string, ins, outs []string, at ...*gonnxpb.AttributeProto) *gonnxpb.NodeProto {
	return &gonnxpb.NodeProto{OpType: op, Input: ins, Output: outs, Attribute: at}
}

func attrI(name string, v int64) *gonnxpb.AttributeProto {
	return &gonnxpb.AttributeProto{Name: name, Type: gonnxpb.AttributeProto_INT, I: v}
}

func attrF(name string, v float32) *gonnxpb.AttributeProto {
	return &gonnxpb.AttributeProto{Name: name, Type: gonnxpb.AttributeProto_FLOAT, F: v}
}

func row(name string, dim int64) *gonnxpb.ValueInfoProto {
	return &gonnxpb.ValueInfoProto{Name: name, Type: &gonnxpb.TypeProto{Value: &gonnxpb.TypeProto_TensorType{TensorType: &gonnxpb.TypeProto_Tensor{
		ElemType: int32(gonnxpb.TensorProto_FLOAT),
		Shape: &gonnxpb.TensorShapeProto{Dim: []*gonnxpb.TensorShapeProto_Dimension{
			{Value: &gonnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}},
			{Value: &gonnxpb.TensorShapeProto_Dimension_DimValue{DimValue: dim}},
		}},
	}}}}
}

// smallGraph is a policy over 6 observation values with 4 actions that uses every
// kind of step the compiled runtime has: Slice, MatMul, Add, Relu, a row broadcast
// against a constant (Mul, Sub), Abs, Sigmoid, Concat with a constant, Gemm with
// transB, alpha and beta, Tanh, Gemm without a bias. With extra, one more operator
// (Sin) that only gonnx runs.
func smallGraph(t testing.TB, extra string) []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	scalar := &gonnxpb.TensorProto{Name: "two", DataType: int32(gonnxpb.TensorProto_FLOAT), FloatData: []float32{2}}
	g := &gonnxpb.GraphProto{
		Name: "small",
		Initializer: []*gonnxpb.TensorProto{
			rawInts("s0", 0), rawInts("s4", 4), rawInts("s5", 5), rawInts("ax", 1), rawInts("one", 1),
			floats("w1", []int64{4, 5}, rng), floats("b1", []int64{5}, rng), scalar,
			floats("tiles", []int64{1, 3}, rng), floats("pad", []int64{1, 2}, rng),
			floats("w2", []int64{3, 10}, rng), floats("b2", []int64{3}, rng), floats("w3", []int64{3, 4}, rng),
		},
		Node: []*gonnxpb.NodeProto{
			node("Slice", []string{"obs", "s0", "s4", "ax", "one"}, []string{"a"}),
			node("MatMul", []string{"a", "w1"}, []string{"h"}),
			node("Add", []string{"h", "b1"}, []string{"h1"}),
			node("Relu", []string{"h1"}, []string{"r"}),
			node("Slice", []string{"obs", "s4", "s5", "ax"}, []string{"p"}),
			node("Mul", []string{"p", "two"}, []string{"p2"}),
			node("Sub", []string{"p2", "tiles"}, []string{"d"}),
			node("Abs", []string{"d"}, []string{"da"}),
			node("Sigmoid", []string{"da"}, []string{"ds"}),
			node("Concat", []string{"r", "ds", "pad"}, []string{"c"}, attrI("axis", 1)),
			node("Gemm", []string{"c", "w2", "b2"}, []string{"g"}, attrI("transB", 1), attrF("alpha", 0.5), attrF("beta", 2)),
			node("Tanh", []string{"g"}, []string{"t"}),
			node("Gemm", []string{"t", "w3"}, []string{"logits"}),
		},
		Input:  []*gonnxpb.ValueInfoProto{row("obs", 6)},
		Output: []*gonnxpb.ValueInfoProto{row("logits", 4)},
	}
	if extra != "" {
		g.Node[len(g.Node)-1].Output = []string{"pre"}
		g.Node = append(g.Node, node(extra, []string{"pre"}, []string{"logits"}))
	}
	data, err := proto.Marshal(&gonnxpb.ModelProto{
		IrVersion: 7, OpsetImport: []*gonnxpb.OperatorSetIdProto{{Version: 13}}, Graph: g,
	})
	require.NoError(t, err)
	return data
}

func randomObs(rng *rand.Rand, dim int) []float32 {
	obs := make([]float32, dim)
	for i := range obs {
		obs[i] = float32(rng.NormFloat64())
	}
	return obs
}

// The compiled runtime and gonnx give the same logits (to float32 rounding) and
// the same actions.
func TestCompiledMatchesGonnx(t *testing.T) {
	tests := []struct {
		name  string
		graph func(testing.TB) []byte
	}{
		{"small graph", func(t testing.TB) []byte { return smallGraph(t, "") }},
		{"maze strategy", func(t testing.TB) []byte { return readGraph(t) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.graph(t)
			c, err := onnx.New(data)
			require.NoError(t, err)
			require.Equal(t, onnx.Compiled, c.Runtime())
			g, err := onnx.New(data, onnx.WithRuntime(onnx.Gonnx))
			require.NoError(t, err)
			require.Equal(t, onnx.Gonnx, g.Runtime())
			require.Equal(t, g.ObsDim(), c.ObsDim())
			require.Equal(t, g.Actions(), c.Actions())
			rng := rand.New(rand.NewPCG(1, 2))
			for range 500 {
				obs := randomObs(rng, c.ObsDim())
				want, err := g.Logits(obs)
				require.NoError(t, err)
				got, err := c.Logits(obs)
				require.NoError(t, err)
				for i := range want {
					assert.InDelta(t, want[i], got[i], 1e-5*max(1, math.Abs(float64(want[i]))))
				}
				mask := make([]bool, c.Actions())
				for i := range mask {
					mask[i] = rng.IntN(3) > 0
				}
				mask[rng.IntN(len(mask))] = true
				wa, err := g.Act(context.Background(), obs, mask)
				require.NoError(t, err)
				ca, err := c.Act(context.Background(), obs, mask)
				require.NoError(t, err)
				assert.Equal(t, wa, ca)
			}
		})
	}
}

func TestRuntimeChoice(t *testing.T) {
	sin := smallGraph(t, "Sin")
	p, err := onnx.New(sin)
	require.NoError(t, err)
	assert.Equal(t, onnx.Gonnx, p.Runtime(), "a graph the plan does not cover runs on gonnx")
	_, err = onnx.New(sin, onnx.WithRuntime(onnx.Compiled))
	assert.ErrorIs(t, err, onnx.ErrModel)
	assert.ErrorContains(t, err, "operator Sin")
	_, err = onnx.New(sin, onnx.WithRuntime("tensorrt"))
	assert.ErrorIs(t, err, onnx.ErrModel)
	// An operator neither runtime has is refused at load.
	_, err = onnx.New(smallGraph(t, "Erf"))
	assert.ErrorIs(t, err, onnx.ErrModel)
}

func TestCompiledActAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	p := load(t)
	require.Equal(t, onnx.Compiled, p.Runtime())
	obs := make([]float32, p.ObsDim())
	obs[100], obs[101] = 1, 2
	mask := []bool{true, true, false, true}
	var a agent.RawAction
	allocs := testing.AllocsPerRun(100, func() {
		a, _ = p.Act(context.Background(), obs, mask)
	})
	assert.Zero(t, allocs)
	assert.NotEqual(t, agent.RawAction{}, a)
}
