// Package onnx runs trained policies exported as ONNX inside Go trials, on the CPU
// and with no Python process: a graph that takes an agent's flat float32
// observation, shape [1, obs_dim] (or [batch, obs_dim]), and returns one logit per
// action of a Discrete action space, shape [1, n]. The policy acts greedily: the
// allowed action (by the mask) of the largest logit, the lowest index on a tie, as
// torch's argmax does.
//
// # Runtimes
//
// A graph runs on one of two runtimes, chosen when it is loaded (Policy.Runtime):
//
//   - Compiled: the MLP graphs baton's exporters write (train_maze.py's PolicyGraph,
//     baton.models.export_onnx of an nn.Sequential) are compiled into plain Go: a list
//     of steps over float32 buffers allocated at load, so a decision allocates nothing
//     and takes microseconds. It covers graphs over one observation in which every
//     tensor computed from it is a row: Gemm and MatMul by constant weights,
//     elementwise Add, Sub, Mul, Div, Tanh, Relu, Sigmoid, Abs, Neg, Exp, Slice and
//     Concat along the row, Identity, Flatten, Reshape to a row, Constant.
//   - Gonnx: any other graph runs on github.com/advancedclimatesystems/gonnx, a
//     pure-Go ONNX runtime (no cgo, no shared library to deploy) that implements
//     opset 13: export with torch.onnx.export(..., opset_version=13). A graph with an
//     operator it lacks is refused when it is loaded, by a trial run on a zero
//     observation. It costs ten to twenty times more per decision.
//
// WithRuntime forces one (for comparisons and tests).
package onnx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/advancedclimatesystems/gonnx"
	gonnxpb "github.com/advancedclimatesystems/gonnx/onnx"
	"github.com/batonrl/baton/agent"
	"gorgonia.org/tensor"
)

// ErrModel: the bytes are not an ONNX policy this package runs (not ONNX, an opset
// or operator it lacks, an input or output of the wrong shape).
var ErrModel = errors.New("onnx: not a policy graph")

// ErrMask: the mask allows no action, or has the wrong length.
var ErrMask = errors.New("onnx: bad action mask")

// Runtime names what runs a Policy's graph.
type Runtime string

const (
	// Compiled runs the graph as plain Go compiled from it at load.
	Compiled Runtime = "compiled"
	// Gonnx runs the graph on gonnx.
	Gonnx Runtime = "gonnx"
)

// Option configures New.
type Option func(*options)

type options struct{ runtime Runtime }

// WithRuntime makes New run the graph on r, or fail (ErrModel) when r cannot run
// it. Without it (or with ""), a graph runs compiled when it can, else on gonnx.
func WithRuntime(r Runtime) Option { return func(o *options) { o.runtime = r } }

// Policy is an ONNX policy graph. It is an agent.Policy, safe for concurrent use
// (calls are serialised: the runtime keeps per-call state).
type Policy struct {
	mu      sync.Mutex
	plan    *plan        // Compiled
	model   *gonnx.Model // Gonnx
	input   string
	output  string
	obsDim  int
	actions int
}

var _ agent.Policy = (*Policy)(nil)

// New loads a policy graph from its bytes. A graph that the compiled runtime does
// not cover runs on gonnx, once on a zero observation here, so that a graph it
// cannot run is refused here.
func New(data []byte, opts ...Option) (*Policy, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	switch o.runtime {
	case "", Compiled, Gonnx:
	default:
		return nil, fmt.Errorf("%w: no runtime %q (choose %s or %s)", ErrModel, o.runtime, Compiled, Gonnx)
	}
	mp, err := gonnx.ModelProtoFromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	if mp.GetGraph() == nil {
		return nil, fmt.Errorf("%w: no graph", ErrModel)
	}
	if o.runtime != Gonnx {
		p, err := newCompiled(mp.GetGraph())
		if err == nil || o.runtime == Compiled {
			return p, err
		}
	}
	return newGonnx(mp)
}

// newCompiled compiles g into a plan.
func newCompiled(g *gonnxpb.GraphProto) (*Policy, error) {
	inits := map[string]bool{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = true
	}
	var inputs []*gonnxpb.ValueInfoProto
	for _, in := range g.GetInput() {
		if !inits[in.GetName()] {
			inputs = append(inputs, in)
		}
	}
	if len(inputs) != 1 || len(g.GetOutput()) < 1 {
		return nil, fmt.Errorf("%w: want one input (the observation) and an output (the logits), have %d inputs and %d outputs", ErrModel, len(inputs), len(g.GetOutput()))
	}
	dims := inputs[0].GetType().GetTensorType().GetShape().GetDim()
	if len(dims) != 2 || dims[1].GetDimValue() < 1 {
		return nil, fmt.Errorf("%w: input %q has shape %v, want [batch, obs_dim]", ErrModel, inputs[0].GetName(), dims)
	}
	pl, err := compile(g, inputs[0].GetName(), int(dims[1].GetDimValue()))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	return &Policy{plan: pl, input: inputs[0].GetName(), output: g.GetOutput()[0].GetName(), obsDim: len(pl.in), actions: len(pl.out)}, nil
}

// newGonnx loads mp on gonnx.
func newGonnx(mp *gonnxpb.ModelProto) (*Policy, error) {
	pretranspose(mp.GetGraph())
	m, err := gonnx.NewModel(mp)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	var inputs []string
	params := map[string]bool{}
	for _, n := range m.ParamNames() {
		params[n] = true
	}
	for _, n := range m.InputNames() {
		if !params[n] {
			inputs = append(inputs, n)
		}
	}
	outs := m.OutputNames()
	if len(inputs) != 1 || len(outs) < 1 {
		return nil, fmt.Errorf("%w: want one input (the observation) and an output (the logits), have inputs %v and outputs %v", ErrModel, inputs, outs)
	}
	shape := m.InputShapes()[inputs[0]]
	if len(shape) != 2 || shape[1].IsDynamic || shape[1].Size < 1 {
		return nil, fmt.Errorf("%w: input %q has shape %v, want [batch, obs_dim]", ErrModel, inputs[0], shape)
	}
	p := &Policy{model: m, input: inputs[0], output: outs[0], obsDim: int(shape[1].Size)}
	p.mu.Lock()
	logits, err := p.run(make([]float32, p.obsDim))
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	p.actions = len(logits)
	return p, nil
}

// ObsDim returns the length of the observations the graph takes.
func (p *Policy) ObsDim() int { return p.obsDim }

// Actions returns the number of logits, the Discrete action space's n.
func (p *Policy) Actions() int { return p.actions }

// Runtime returns what runs the graph.
func (p *Policy) Runtime() Runtime {
	if p.plan != nil {
		return Compiled
	}
	return Gonnx
}

// run computes the logits of obs, with p.mu held; the compiled runtime's are valid
// until the next run.
func (p *Policy) run(obs []float32) (out []float32, err error) {
	if p.plan != nil {
		return p.plan.run(obs), nil
	}
	defer func() {
		// The runtime panics on some malformed graphs: refuse the graph instead.
		if v := recover(); v != nil {
			out, err = nil, fmt.Errorf("%w: the runtime failed: %v", ErrModel, v)
		}
	}()
	in := tensor.New(tensor.WithShape(1, p.obsDim), tensor.WithBacking(append([]float32(nil), obs...)))
	res, err := p.model.Run(gonnx.Tensors{p.input: in})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	t, ok := res[p.output]
	if !ok || t == nil {
		return nil, fmt.Errorf("%w: no output %q", ErrModel, p.output)
	}
	data, ok := t.Data().([]float32)
	if !ok {
		return nil, fmt.Errorf("%w: output %q holds %T, want float32 logits", ErrModel, p.output, t.Data())
	}
	if s := t.Shape(); len(data) == 0 || (len(s) == 2 && s[0] != 1) {
		return nil, fmt.Errorf("%w: output %q has shape %v, want [1, actions]", ErrModel, p.output, s)
	}
	return data, nil
}

// Logits returns the graph's logits for one observation, in a new slice.
func (p *Policy) Logits(obs []float32) ([]float32, error) {
	if len(obs) != p.obsDim {
		return nil, fmt.Errorf("%w: observation of %d values, the graph takes %d", ErrModel, len(obs), p.obsDim)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out, err := p.run(obs)
	if err != nil {
		return nil, err
	}
	return append([]float32(nil), out...), nil
}

// Act implements agent.Policy: the allowed action of the largest logit. On the
// compiled runtime it allocates nothing.
func (p *Policy) Act(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	if mask != nil && len(mask) != p.actions {
		return agent.RawAction{}, fmt.Errorf("%w: %d entries for %d actions", ErrMask, len(mask), p.actions)
	}
	if len(obs) != p.obsDim {
		return agent.RawAction{}, fmt.Errorf("%w: observation of %d values, the graph takes %d", ErrModel, len(obs), p.obsDim)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	logits, err := p.run(obs)
	if err != nil {
		return agent.RawAction{}, err
	}
	if len(logits) != p.actions {
		return agent.RawAction{}, fmt.Errorf("%w: %d logits, the graph gave %d on load", ErrModel, len(logits), p.actions)
	}
	best, bestV := -1, float32(math.Inf(-1))
	for i, v := range logits {
		if mask != nil && !mask[i] {
			continue
		}
		if best < 0 || v > bestV {
			best, bestV = i, v
		}
	}
	if best < 0 {
		return agent.RawAction{}, fmt.Errorf("%w: it allows none of %d actions", ErrMask, p.actions)
	}
	return agent.Discrete(int64(best)), nil
}

// pretranspose rewrites each Gemm whose B is a float32 weight matrix stored
// transposed (transB=1, as torch exports nn.Linear) into one whose B is stored as
// used (transB=0), so that the runtime does not transpose the weights on every run
// (half of a decision's time). The graph computes the same values.
func pretranspose(g *gonnxpb.GraphProto) {
	inits := map[string]*gonnxpb.TensorProto{}
	uses := map[string]int{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = t
	}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			uses[in]++
		}
	}
	for _, n := range g.GetNode() {
		if n.GetOpType() != "Gemm" || len(n.GetInput()) < 2 {
			continue
		}
		var trans *gonnxpb.AttributeProto
		for _, a := range n.GetAttribute() {
			if a.GetName() == "transB" && a.GetI() == 1 {
				trans = a
			}
		}
		w := inits[n.GetInput()[1]]
		if trans == nil || w == nil || uses[w.GetName()] != 1 || len(w.GetDims()) != 2 ||
			w.GetDataType() != int32(gonnxpb.TensorProto_FLOAT) {
			continue
		}
		vals := w.GetFloatData()
		if len(vals) == 0 {
			raw := w.GetRawData()
			vals = make([]float32, len(raw)/4)
			for i := range vals {
				vals[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
			}
		}
		rows, cols := int(w.GetDims()[0]), int(w.GetDims()[1])
		if rows*cols != len(vals) {
			continue
		}
		t := make([]float32, len(vals))
		for r := range rows {
			for c := range cols {
				t[c*rows+r] = vals[r*cols+c]
			}
		}
		w.FloatData, w.RawData = t, nil
		w.Dims = []int64{int64(cols), int64(rows)}
		trans.I = 0
	}
}
