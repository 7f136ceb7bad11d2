package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/batonrl/baton/env"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
)

// The protobuf Space mirrors the spaces JSON spec field for field, so the
// conversions go through that spec: a space is marshaled by package spaces and read
// into the message, and a message is written as the JSON spec and built by
// spaces.Unmarshal, which validates it completely (limits, nesting, paths of the
// problems) and bounds its memory.

// specNode is one space of the JSON spec, every kind's fields together.
type specNode struct {
	Type      string            `json:"type"`
	N         int64             `json:"n,omitempty"`
	Start     int64             `json:"start,omitempty"`
	Shape     []int64           `json:"shape,omitempty"`
	Dtype     string            `json:"dtype,omitempty"`
	Low       []json.RawMessage `json:"low,omitempty"`
	High      []json.RawMessage `json:"high,omitempty"`
	Nvec      []int64           `json:"nvec,omitempty"`
	Spaces    json.RawMessage   `json:"spaces,omitempty"`
	MinLength int64             `json:"min_length,omitempty"`
	MaxLength int64             `json:"max_length,omitempty"`
	Charset   string            `json:"charset,omitempty"`
}

// spaceProto returns the protobuf form of a space.
func spaceProto(s spaces.Space) (*pb.Space, error) {
	data, err := spaces.Marshal(s)
	if err != nil {
		return nil, err
	}
	return specProto(data, 1)
}

func specProto(data []byte, depth int) (*pb.Space, error) {
	if depth > spaces.MaxDepth {
		return nil, fmt.Errorf("%w: spaces nest deeper than %d levels", spaces.ErrSpec, spaces.MaxDepth)
	}
	var n specNode
	if err := json.Unmarshal(data, &n); err != nil {
		return nil, fmt.Errorf("%w: %v", spaces.ErrSpec, err)
	}
	switch n.Type {
	case "discrete":
		return &pb.Space{Kind: &pb.Space_Discrete{Discrete: &pb.DiscreteSpace{N: n.N, Start: n.Start}}}, nil
	case "box":
		low, err := bounds(n.Low)
		if err != nil {
			return nil, err
		}
		high, err := bounds(n.High)
		if err != nil {
			return nil, err
		}
		return &pb.Space{Kind: &pb.Space_Box{Box: &pb.BoxSpace{Shape: n.Shape, Dtype: "float32", Low: low, High: high}}}, nil
	case "multi_discrete":
		return &pb.Space{Kind: &pb.Space_MultiDiscrete{MultiDiscrete: &pb.MultiDiscreteSpace{Nvec: n.Nvec}}}, nil
	case "multi_binary":
		return &pb.Space{Kind: &pb.Space_MultiBinary{MultiBinary: &pb.MultiBinarySpace{Shape: n.Shape}}}, nil
	case "dict":
		var entries []struct {
			Key   string          `json:"key"`
			Space json.RawMessage `json:"space"`
		}
		if err := json.Unmarshal(n.Spaces, &entries); err != nil {
			return nil, fmt.Errorf("%w: %v", spaces.ErrSpec, err)
		}
		d := &pb.DictSpace{}
		for _, e := range entries {
			s, err := specProto(e.Space, depth+1)
			if err != nil {
				return nil, err
			}
			d.Spaces = append(d.Spaces, &pb.DictEntry{Key: e.Key, Space: s})
		}
		return &pb.Space{Kind: &pb.Space_Dict{Dict: d}}, nil
	case "tuple":
		var elems []json.RawMessage
		if err := json.Unmarshal(n.Spaces, &elems); err != nil {
			return nil, fmt.Errorf("%w: %v", spaces.ErrSpec, err)
		}
		t := &pb.TupleSpace{}
		for _, e := range elems {
			s, err := specProto(e, depth+1)
			if err != nil {
				return nil, err
			}
			t.Spaces = append(t.Spaces, s)
		}
		return &pb.Space{Kind: &pb.Space_Tuple{Tuple: t}}, nil
	case "text":
		return &pb.Space{Kind: &pb.Space_Text{Text: &pb.TextSpace{MinLength: n.MinLength, MaxLength: n.MaxLength, Charset: n.Charset}}}, nil
	}
	return nil, fmt.Errorf("%w: unknown type %q", spaces.ErrSpec, n.Type)
}

// bounds reads a Box's bounds as the JSON spec writes them: numbers, "inf", "-inf".
func bounds(raw []json.RawMessage) ([]float32, error) {
	out := make([]float32, len(raw))
	for i, r := range raw {
		switch string(r) {
		case `"inf"`:
			out[i] = float32(math.Inf(1))
		case `"-inf"`:
			out[i] = float32(math.Inf(-1))
		default:
			x, err := strconv.ParseFloat(string(r), 32)
			if err != nil {
				return nil, fmt.Errorf("%w: bound %s: %v", spaces.ErrSpec, r, err)
			}
			out[i] = float32(x)
		}
	}
	return out, nil
}

// spaceFromProto builds the space a protobuf Space describes, validated as
// spaces.Unmarshal validates a JSON spec: an error wraps spaces.ErrSpec and names
// the path of the problem.
func spaceFromProto(p *pb.Space) (spaces.Space, error) {
	var b bytes.Buffer
	if err := writeSpec(&b, p, 1); err != nil {
		return nil, err
	}
	return spaces.Unmarshal(b.Bytes())
}

// writeSpec writes p as the JSON spec.
func writeSpec(b *bytes.Buffer, p *pb.Space, depth int) error {
	if depth > spaces.MaxDepth {
		return fmt.Errorf("%w: spaces nest deeper than %d levels", spaces.ErrSpec, spaces.MaxDepth)
	}
	str := func(s string) { q, _ := json.Marshal(s); b.Write(q) }
	ints := func(v []int64) {
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(x, 10))
		}
		b.WriteByte(']')
	}
	floats := func(v []float32) {
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			switch {
			case math.IsInf(float64(x), 1):
				b.WriteString(`"inf"`)
			case math.IsInf(float64(x), -1):
				b.WriteString(`"-inf"`)
			case x != x:
				b.WriteString(`"nan"`) // rejected by spaces.Unmarshal, naming the bound
			default:
				b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
			}
		}
		b.WriteByte(']')
	}
	switch k := p.GetKind().(type) {
	case *pb.Space_Discrete:
		fmt.Fprintf(b, `{"type":"discrete","n":%d,"start":%d}`, k.Discrete.GetN(), k.Discrete.GetStart())
	case *pb.Space_Box:
		bx := k.Box
		b.WriteString(`{"type":"box","shape":`)
		ints(bx.GetShape())
		if bx.GetDtype() != "" {
			b.WriteString(`,"dtype":`)
			str(bx.GetDtype())
		}
		b.WriteString(`,"low":`)
		floats(bx.GetLow())
		b.WriteString(`,"high":`)
		floats(bx.GetHigh())
		b.WriteByte('}')
	case *pb.Space_MultiDiscrete:
		b.WriteString(`{"type":"multi_discrete","nvec":`)
		ints(k.MultiDiscrete.GetNvec())
		b.WriteByte('}')
	case *pb.Space_MultiBinary:
		b.WriteString(`{"type":"multi_binary","shape":`)
		ints(k.MultiBinary.GetShape())
		b.WriteByte('}')
	case *pb.Space_Dict:
		b.WriteString(`{"type":"dict","spaces":[`)
		for i, e := range k.Dict.GetSpaces() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"key":`)
			str(e.GetKey())
			b.WriteString(`,"space":`)
			if err := writeSpec(b, e.GetSpace(), depth+1); err != nil {
				return err
			}
			b.WriteByte('}')
		}
		b.WriteString("]}")
	case *pb.Space_Tuple:
		b.WriteString(`{"type":"tuple","spaces":[`)
		for i, e := range k.Tuple.GetSpaces() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeSpec(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteString("]}")
	case *pb.Space_Text:
		fmt.Fprintf(b, `{"type":"text","min_length":%d,"max_length":%d,"charset":`, k.Text.GetMinLength(), k.Text.GetMaxLength())
		str(k.Text.GetCharset())
		b.WriteByte('}')
	default:
		return fmt.Errorf("%w: a space sets no kind", spaces.ErrSpec)
	}
	return nil
}

// agentSpecProto returns the protobuf form of an agent's spec, with its spaces in
// both forms (structured and JSON).
func agentSpecProto(s env.Spec) (*pb.AgentSpec, error) {
	out := &pb.AgentSpec{Name: s.Name, MaskLen: int64(s.MaskLen)}
	var err error
	if out.ObservationSpace, err = spaceProto(s.ObservationSpace); err != nil {
		return nil, fmt.Errorf("agent %s: observation space: %w", s.Name, err)
	}
	if out.ActionSpace, err = spaceProto(s.ActionSpace); err != nil {
		return nil, fmt.Errorf("agent %s: action space: %w", s.Name, err)
	}
	obs, _ := spaces.Marshal(s.ObservationSpace)
	act, _ := spaces.Marshal(s.ActionSpace)
	out.ObservationSpaceJson, out.ActionSpaceJson = string(obs), string(act)
	return out, nil
}

// agentSpecFromProto reads an agent's spec: its spaces from the structured form, or
// from the JSON form when a space has no structured form. An error is a *FieldError
// naming the field.
func agentSpecFromProto(p *pb.AgentSpec) (env.Spec, error) {
	s := env.Spec{Name: p.GetName()}
	if s.Name == "" {
		return env.Spec{}, fieldErrorf("name", "empty")
	}
	var err error
	if s.ObservationSpace, err = specSpace("observation_space", p.GetObservationSpace(), p.GetObservationSpaceJson()); err != nil {
		return env.Spec{}, err
	}
	if s.ActionSpace, err = specSpace("action_space", p.GetActionSpace(), p.GetActionSpaceJson()); err != nil {
		return env.Spec{}, err
	}
	if m := p.GetMaskLen(); m < 0 || m > spaces.MaxFlatDim {
		return env.Spec{}, fieldErrorf("mask_len", "%d, want 0 to %d", m, spaces.MaxFlatDim)
	}
	s.MaskLen = int(p.GetMaskLen())
	if s.MaskLen > 0 && (s.ActionSpace.Kind() != spaces.KindDiscrete || s.MaskLen != s.ActionSpace.FlatDim()) {
		return env.Spec{}, fieldErrorf("mask_len", "%d, but the action space %v has no mask of that length", s.MaskLen, s.ActionSpace)
	}
	return s, nil
}

func specSpace(field string, p *pb.Space, js string) (spaces.Space, error) {
	var s spaces.Space
	var err error
	switch {
	case p.GetKind() != nil:
		s, err = spaceFromProto(p)
	case js != "":
		field += "_json"
		s, err = spaces.Unmarshal([]byte(js))
	default:
		return nil, fieldErrorf(field, "missing")
	}
	if err != nil {
		return nil, &FieldError{Field: field, Reason: err.Error()}
	}
	return s, nil
}
