package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	gonnxpb "github.com/advancedclimatesystems/gonnx/onnx"
)

// errUnplanned: a graph the compiled plan does not cover; the Policy runs it on gonnx.
var errUnplanned = errors.New("onnx: not a graph the compiled plan covers")

// plan is an MLP policy graph compiled into plain Go: a list of steps over buffers
// allocated when it is compiled, so that a decision allocates nothing. It covers
// graphs over one observation (batch 1) in which every tensor computed from the
// observation is a row [1, n]: Gemm and MatMul by constant weights, elementwise Add,
// Sub, Mul, Div with constants or other rows (broadcast along the row), Tanh, Relu,
// Sigmoid, Abs, Neg, Exp, Slice and Concat along the row, Identity, Flatten,
// Reshape to a row, and Constant. A plan is not safe for concurrent use.
type plan struct {
	in    []float32 // the observation, copied in
	out   []float32 // the logits: a view of the last step's buffer
	steps []func()
}

// run computes the logits of obs; the result is valid until the next run.
func (p *plan) run(obs []float32) []float32 {
	copy(p.in, obs)
	for _, s := range p.steps {
		s()
	}
	return p.out
}

// value is a tensor of the graph while it is compiled: a constant (shape and data),
// or a row [1, n] computed from the observation (row set, f its buffer).
type value struct {
	row   bool
	shape []int64
	f     []float32
	i     []int64
}

func (t *value) size() int {
	n := 1
	for _, d := range t.shape {
		n *= int(d)
	}
	return n
}

// rowLen is the length of a value used along a row: a row's, or a constant's that
// is a scalar, [n] or [1, n]; -1 for another constant.
func (t *value) rowLen() int {
	if t.row {
		return len(t.f)
	}
	switch {
	case len(t.shape) <= 1, len(t.shape) == 2 && t.shape[0] == 1:
		return len(t.f)
	}
	return -1
}

// compile compiles g, whose one input named input takes obsDim values, or fails
// with errUnplanned.
func compile(g *gonnxpb.GraphProto, input string, obsDim int) (*plan, error) {
	p := &plan{in: make([]float32, obsDim)}
	vals := map[string]*value{input: {row: true, f: p.in}}
	for _, init := range g.GetInitializer() {
		t, err := constTensor(init)
		if err != nil {
			return nil, err
		}
		vals[init.GetName()] = t
	}
	for _, n := range g.GetNode() {
		var ins []*value
		for _, name := range n.GetInput() {
			if name == "" {
				ins = append(ins, nil)
				continue
			}
			t, ok := vals[name]
			if !ok {
				return nil, fmt.Errorf("%w: %s reads %q, which nothing before it computes", errUnplanned, n.GetOpType(), name)
			}
			ins = append(ins, t)
		}
		out, err := p.node(n, ins)
		if err != nil {
			return nil, err
		}
		if len(n.GetOutput()) != 1 {
			return nil, fmt.Errorf("%w: %s has %d outputs", errUnplanned, n.GetOpType(), len(n.GetOutput()))
		}
		vals[n.GetOutput()[0]] = out
	}
	if len(g.GetOutput()) < 1 {
		return nil, fmt.Errorf("%w: no output", errUnplanned)
	}
	out, ok := vals[g.GetOutput()[0].GetName()]
	if !ok || !out.row {
		return nil, fmt.Errorf("%w: the output is not computed from the observation", errUnplanned)
	}
	p.out = out.f
	return p, nil
}

func attrs(n *gonnxpb.NodeProto) map[string]*gonnxpb.AttributeProto {
	m := map[string]*gonnxpb.AttributeProto{}
	for _, a := range n.GetAttribute() {
		m[a.GetName()] = a
	}
	return m
}

func (p *plan) node(n *gonnxpb.NodeProto, ins []*value) (*value, error) {
	op, at := n.GetOpType(), attrs(n)
	if n.GetDomain() != "" && n.GetDomain() != "ai.onnx" {
		return nil, fmt.Errorf("%w: operator %s of domain %q", errUnplanned, op, n.GetDomain())
	}
	need := func(k int) error {
		if len(ins) < k {
			return fmt.Errorf("%w: %s has %d inputs, needs %d", errUnplanned, op, len(ins), k)
		}
		for _, t := range ins[:k] {
			if t == nil {
				return fmt.Errorf("%w: %s lacks an input", errUnplanned, op)
			}
		}
		return nil
	}
	switch op {
	case "Constant":
		return constAttr(at)
	case "Identity":
		if err := need(1); err != nil {
			return nil, err
		}
		return ins[0], nil
	case "Flatten", "Reshape", "Cast":
		if err := need(1); err != nil {
			return nil, err
		}
		return p.reshape(op, at, ins)
	case "Relu", "Tanh", "Sigmoid", "Abs", "Neg", "Exp":
		if err := need(1); err != nil {
			return nil, err
		}
		return p.unary(op, ins[0])
	case "Add", "Sub", "Mul", "Div":
		if err := need(2); err != nil {
			return nil, err
		}
		return p.binary(op, ins[0], ins[1])
	case "Slice":
		if err := need(3); err != nil {
			return nil, err
		}
		return slice(ins)
	case "Concat":
		if a := at["axis"]; a == nil || (a.GetI() != 1 && a.GetI() != -1) {
			return nil, fmt.Errorf("%w: Concat along an axis other than the row", errUnplanned)
		}
		return p.concat(ins)
	case "Gemm":
		if err := need(2); err != nil {
			return nil, err
		}
		if a := at["transA"]; a != nil && a.GetI() != 0 {
			return nil, fmt.Errorf("%w: Gemm with transA", errUnplanned)
		}
		alpha, beta := float32(1), float32(1)
		if a := at["alpha"]; a != nil {
			alpha = a.GetF()
		}
		if a := at["beta"]; a != nil {
			beta = a.GetF()
		}
		var c *value
		if len(ins) > 2 {
			c = ins[2]
		}
		return p.gemm(ins[0], ins[1], c, at["transB"] != nil && at["transB"].GetI() != 0, alpha, beta)
	case "MatMul":
		if err := need(2); err != nil {
			return nil, err
		}
		return p.gemm(ins[0], ins[1], nil, false, 1, 1)
	}
	return nil, fmt.Errorf("%w: operator %s", errUnplanned, op)
}

func (p *plan) reshape(op string, at map[string]*gonnxpb.AttributeProto, ins []*value) (*value, error) {
	x := ins[0]
	if !x.row {
		return nil, fmt.Errorf("%w: %s of a constant", errUnplanned, op)
	}
	switch op {
	case "Flatten":
		if a := at["axis"]; a != nil && a.GetI() != 1 && a.GetI() != -1 {
			return nil, fmt.Errorf("%w: Flatten on axis %d", errUnplanned, a.GetI())
		}
	case "Cast":
		if a := at["to"]; a == nil || a.GetI() != int64(gonnxpb.TensorProto_FLOAT) {
			return nil, fmt.Errorf("%w: Cast to another type than float", errUnplanned)
		}
	case "Reshape":
		if len(ins) < 2 || ins[1] == nil || ins[1].row || len(ins[1].i) != 2 {
			return nil, fmt.Errorf("%w: Reshape to another shape than a row", errUnplanned)
		}
		s, n := ins[1].i, int64(len(x.f))
		if !((s[0] == 1 || s[0] == -1 || s[0] == 0) && (s[1] == n || s[1] == -1) && !(s[0] == -1 && s[1] == -1)) {
			return nil, fmt.Errorf("%w: Reshape of a row to %v", errUnplanned, s)
		}
	}
	return x, nil
}

func (p *plan) unary(op string, x *value) (*value, error) {
	var f func(float32) float32
	switch op {
	case "Relu":
		f = func(v float32) float32 { return max(v, 0) }
	case "Tanh":
		f = func(v float32) float32 { return float32(math.Tanh(float64(v))) }
	case "Sigmoid":
		f = func(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) }
	case "Abs":
		f = func(v float32) float32 { return float32(math.Abs(float64(v))) }
	case "Neg":
		f = func(v float32) float32 { return -v }
	case "Exp":
		f = func(v float32) float32 { return float32(math.Exp(float64(v))) }
	}
	if !x.row {
		if x.f == nil {
			return nil, fmt.Errorf("%w: %s of an integer constant", errUnplanned, op)
		}
		out := &value{shape: x.shape, f: make([]float32, len(x.f))}
		for i, v := range x.f {
			out.f[i] = f(v)
		}
		return out, nil
	}
	in, out := x.f, make([]float32, len(x.f))
	switch op {
	case "Relu": // the policies' hidden layers: without a call per value
		p.steps = append(p.steps, func() {
			for i, v := range in {
				out[i] = max(v, 0)
			}
		})
	case "Tanh":
		p.steps = append(p.steps, func() {
			for i, v := range in {
				out[i] = float32(math.Tanh(float64(v)))
			}
		})
	default:
		p.steps = append(p.steps, func() {
			for i, v := range in {
				out[i] = f(v)
			}
		})
	}
	return &value{row: true, f: out}, nil
}

func (p *plan) binary(op string, a, b *value) (*value, error) {
	la, lb := a.rowLen(), b.rowLen()
	if la < 0 || lb < 0 || a.f == nil || b.f == nil {
		return nil, fmt.Errorf("%w: %s of tensors that are not rows", errUnplanned, op)
	}
	if !a.row && !b.row {
		// Both constant: fold, when the lengths are equal or one is a scalar.
		if la != lb && la != 1 && lb != 1 {
			return nil, fmt.Errorf("%w: %s of constants of shapes %v and %v", errUnplanned, op, a.shape, b.shape)
		}
		shape := a.shape
		if lb > la || (lb == la && len(b.shape) > len(a.shape)) {
			shape = b.shape
		}
		out := &value{shape: shape, f: make([]float32, max(la, lb))}
		binaryTo(op, out.f, a.f, b.f)
		return out, nil
	}
	n := max(la, lb)
	if (la != n && la != 1) || (lb != n && lb != 1) {
		return nil, fmt.Errorf("%w: %s of rows of %d and %d values", errUnplanned, op, la, lb)
	}
	out := make([]float32, n)
	af, bf := a.f, b.f
	p.steps = append(p.steps, func() { binaryTo(op, out, af, bf) })
	return &value{row: true, f: out}, nil
}

// binaryTo writes a op b into out, broadcasting a one-value a or b.
func binaryTo(op string, out, a, b []float32) {
	switch {
	case len(a) == len(out) && len(b) == len(out):
		switch op {
		case "Add":
			for i := range out {
				out[i] = a[i] + b[i]
			}
		case "Sub":
			for i := range out {
				out[i] = a[i] - b[i]
			}
		case "Mul":
			for i := range out {
				out[i] = a[i] * b[i]
			}
		case "Div":
			for i := range out {
				out[i] = a[i] / b[i]
			}
		}
	case len(b) == 1:
		y := b[0]
		switch op {
		case "Add":
			for i := range out {
				out[i] = a[i] + y
			}
		case "Sub":
			for i := range out {
				out[i] = a[i] - y
			}
		case "Mul":
			for i := range out {
				out[i] = a[i] * y
			}
		case "Div":
			for i := range out {
				out[i] = a[i] / y
			}
		}
	default: // len(a) == 1
		x := a[0]
		switch op {
		case "Add":
			for i := range out {
				out[i] = x + b[i]
			}
		case "Sub":
			for i := range out {
				out[i] = x - b[i]
			}
		case "Mul":
			for i := range out {
				out[i] = x * b[i]
			}
		case "Div":
			for i := range out {
				out[i] = x / b[i]
			}
		}
	}
}

// slice is a Slice of a row along the row: a view of its buffer, no step.
func slice(ins []*value) (*value, error) {
	x := ins[0]
	get := func(k int) []int64 {
		if k < len(ins) && ins[k] != nil && !ins[k].row {
			return ins[k].i
		}
		return nil
	}
	starts, ends, axes, steps := get(1), get(2), get(3), get(4)
	if !x.row || starts == nil || ends == nil || len(starts) != len(ends) ||
		(len(ins) > 3 && ins[3] != nil && axes == nil) || (len(ins) > 4 && ins[4] != nil && steps == nil) {
		return nil, fmt.Errorf("%w: Slice of a constant, or by values computed from the observation", errUnplanned)
	}
	dims := []int64{1, int64(len(x.f))}
	lo, hi := []int64{0, 0}, []int64{1, dims[1]}
	for k := range starts {
		axis := int64(k)
		if axes != nil {
			if len(axes) != len(starts) {
				return nil, fmt.Errorf("%w: Slice with %d axes for %d starts", errUnplanned, len(axes), len(starts))
			}
			axis = axes[k]
		}
		if axis < 0 {
			axis += 2
		}
		if axis < 0 || axis > 1 || (steps != nil && (len(steps) != len(starts) || steps[k] != 1)) {
			return nil, fmt.Errorf("%w: Slice along axis %d or by steps %v", errUnplanned, axis, steps)
		}
		d := dims[axis]
		clamp := func(v int64) int64 {
			if v < 0 {
				v += d
			}
			return min(max(v, 0), d)
		}
		lo[axis], hi[axis] = clamp(starts[k]), clamp(ends[k])
	}
	if lo[0] != 0 || hi[0] != 1 || hi[1] <= lo[1] {
		return nil, fmt.Errorf("%w: Slice of no values", errUnplanned)
	}
	return &value{row: true, f: x.f[lo[1]:hi[1]:hi[1]]}, nil
}

func (p *plan) concat(ins []*value) (*value, error) {
	n := 0
	for _, t := range ins {
		if t == nil || t.f == nil || (!t.row && !(len(t.shape) == 2 && t.shape[0] == 1)) {
			return nil, fmt.Errorf("%w: Concat of tensors that are not rows", errUnplanned)
		}
		n += len(t.f)
	}
	out := make([]float32, n)
	at := 0
	for _, t := range ins {
		if !t.row {
			copy(out[at:], t.f) // written once: no step writes there
		} else {
			src, dst := t.f, out[at:at+len(t.f)]
			p.steps = append(p.steps, func() { copy(dst, src) })
		}
		at += len(t.f)
	}
	return &value{row: true, f: out}, nil
}

// gemm is a row times constant weights, plus an optional constant bias: the
// weights are stored one output's weights after another (as torch's nn.Linear
// keeps them), scaled by alpha, and the bias by beta.
func (p *plan) gemm(a, b, c *value, transB bool, alpha, beta float32) (*value, error) {
	if !a.row || b.row || b.f == nil || len(b.shape) != 2 {
		return nil, fmt.Errorf("%w: Gemm or MatMul of a row by anything but a constant matrix", errUnplanned)
	}
	k, m := int(b.shape[0]), int(b.shape[1])
	if transB {
		k, m = m, k
	}
	if k != len(a.f) {
		return nil, fmt.Errorf("%w: Gemm of a row of %d values by a matrix of %d rows", errUnplanned, len(a.f), k)
	}
	w := make([]float32, k*m)
	for j := range m {
		for i := range k {
			v := b.f[i*m+j]
			if transB {
				v = b.f[j*k+i]
			}
			w[j*k+i] = alpha * v
		}
	}
	bias := make([]float32, m)
	if c != nil {
		switch l := c.rowLen(); {
		case c.row || c.f == nil || (l != 1 && l != m):
			return nil, fmt.Errorf("%w: Gemm with a bias that is not a constant row of %d values", errUnplanned, m)
		case l == 1:
			for j := range bias {
				bias[j] = beta * c.f[0]
			}
		default:
			for j := range bias {
				bias[j] = beta * c.f[j]
			}
		}
	}
	in, out := a.f, make([]float32, m)
	p.steps = append(p.steps, func() {
		for j := range out {
			out[j] = bias[j] + dot(in, w[j*k:j*k+k])
		}
	})
	return &value{row: true, f: out}, nil
}

// dot is the dot product of x and y (of the same length), in four running sums.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// constTensor reads an initializer or a Constant's value: float32 (or float64) data
// as f, integer data as i.
func constTensor(t *gonnxpb.TensorProto) (*value, error) {
	out := &value{shape: append([]int64(nil), t.GetDims()...)}
	n, raw := out.size(), t.GetRawData()
	switch gonnxpb.TensorProto_DataType(t.GetDataType()) {
	case gonnxpb.TensorProto_FLOAT:
		out.f = t.GetFloatData()
		if len(out.f) == 0 && len(raw) == 4*n {
			out.f = make([]float32, n)
			for i := range out.f {
				out.f[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		if len(out.f) != n {
			return nil, fmt.Errorf("%w: tensor %q has %d values for shape %v", errUnplanned, t.GetName(), len(out.f), out.shape)
		}
	case gonnxpb.TensorProto_DOUBLE:
		d := t.GetDoubleData()
		if len(d) == 0 && len(raw) == 8*n {
			d = make([]float64, n)
			for i := range d {
				d[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		if len(d) != n {
			return nil, fmt.Errorf("%w: tensor %q has %d values for shape %v", errUnplanned, t.GetName(), len(d), out.shape)
		}
		out.f = make([]float32, n)
		for i, v := range d {
			out.f[i] = float32(v)
		}
	case gonnxpb.TensorProto_INT64:
		out.i = t.GetInt64Data()
		if len(out.i) == 0 && len(raw) == 8*n {
			out.i = make([]int64, n)
			for i := range out.i {
				out.i[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		if len(out.i) != n {
			return nil, fmt.Errorf("%w: tensor %q has %d values for shape %v", errUnplanned, t.GetName(), len(out.i), out.shape)
		}
	case gonnxpb.TensorProto_INT32:
		d := t.GetInt32Data()
		if len(d) == 0 && len(raw) == 4*n {
			d = make([]int32, n)
			for i := range d {
				d[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		if len(d) != n {
			return nil, fmt.Errorf("%w: tensor %q has %d values for shape %v", errUnplanned, t.GetName(), len(d), out.shape)
		}
		out.i = make([]int64, n)
		for i, v := range d {
			out.i[i] = int64(v)
		}
	default:
		return nil, fmt.Errorf("%w: tensor %q of data type %d", errUnplanned, t.GetName(), t.GetDataType())
	}
	return out, nil
}

// constAttr is a Constant node's value.
func constAttr(at map[string]*gonnxpb.AttributeProto) (*value, error) {
	switch {
	case at["value"] != nil && at["value"].GetT() != nil:
		return constTensor(at["value"].GetT())
	case at["value_float"] != nil:
		return &value{f: []float32{at["value_float"].GetF()}}, nil
	case at["value_floats"] != nil:
		f := at["value_floats"].GetFloats()
		return &value{shape: []int64{int64(len(f))}, f: f}, nil
	case at["value_int"] != nil:
		return &value{i: []int64{at["value_int"].GetI()}}, nil
	case at["value_ints"] != nil:
		i := at["value_ints"].GetInts()
		return &value{shape: []int64{int64(len(i))}, i: i}, nil
	}
	return nil, fmt.Errorf("%w: a Constant of another kind", errUnplanned)
}
