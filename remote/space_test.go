package remote_test

import (
	"math"
	"testing"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpaceProtoRoundTrip converts a space of every kind to its message and back.
func TestSpaceProtoRoundTrip(t *testing.T) {
	inf := float32(math.Inf(1))
	box := spaces.Must(spaces.NewBoxBounds([]int{2, 2}, []float32{-1, -inf, 0, 1e-7}, []float32{1, inf, 3.5, 1e7}))
	nested := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "pos", Space: box},
		spaces.DictEntry{Key: "door", Space: spaces.Discrete{N: 3, Start: -1}},
		spaces.DictEntry{Key: "t", Space: spaces.Must(spaces.NewTuple(
			spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4})),
			spaces.Must(spaces.NewMultiBinary(2, 3)),
			spaces.Must(spaces.NewText(1, 4, "abc")),
		))},
	))
	for _, s := range []spaces.Space{spaces.Discrete{N: 4}, box, nested, spaces.Must(spaces.NewText(0, 8, ""))} {
		t.Run(s.String(), func(t *testing.T) {
			p, err := remote.SpaceProto(s)
			require.NoError(t, err)
			back, err := remote.SpaceFromProto(p)
			require.NoError(t, err)
			assert.True(t, s.Equal(back), "%v != %v", s, back)
		})
	}
	p, err := remote.SpaceProto(box)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 2}, p.GetBox().GetShape())
	assert.Equal(t, "float32", p.GetBox().GetDtype())
	assert.True(t, math.IsInf(float64(p.GetBox().GetLow()[1]), -1), "infinite bounds travel as IEEE infinities")
}

// TestSpaceFromProtoErrors rejects invalid messages with the path of the problem.
func TestSpaceFromProtoErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    *pb.Space
		want string
	}{
		{"no kind", &pb.Space{}, "a space sets no kind"},
		{"n", &pb.Space{Kind: &pb.Space_Discrete{Discrete: &pb.DiscreteSpace{N: 0}}}, ".n: 0 is out of range"},
		{"bounds", &pb.Space{Kind: &pb.Space_Box{Box: &pb.BoxSpace{Shape: []int64{2}, Low: []float32{0}, High: []float32{1, 1}}}}, ".low: want 2 bounds"},
		{"nan", &pb.Space{Kind: &pb.Space_Box{Box: &pb.BoxSpace{Shape: []int64{1}, Low: []float32{float32(math.NaN())}, High: []float32{1}}}}, ".low"},
		{"dtype", &pb.Space{Kind: &pb.Space_Box{Box: &pb.BoxSpace{Shape: []int64{1}, Dtype: "float64", Low: []float32{0}, High: []float32{1}}}}, `dtype is "float64"`},
		{"nested", &pb.Space{Kind: &pb.Space_Tuple{Tuple: &pb.TupleSpace{Spaces: []*pb.Space{{Kind: &pb.Space_MultiDiscrete{MultiDiscrete: &pb.MultiDiscreteSpace{Nvec: []int64{0}}}}}}}}, ".spaces[0].nvec"},
		{"dict key", &pb.Space{Kind: &pb.Space_Dict{Dict: &pb.DictSpace{Spaces: []*pb.DictEntry{{Key: "", Space: &pb.Space{Kind: &pb.Space_Discrete{Discrete: &pb.DiscreteSpace{N: 1}}}}}}}}, "empty key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.SpaceFromProto(tt.p)
			require.ErrorIs(t, err, spaces.ErrSpec)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	deep := &pb.Space{Kind: &pb.Space_Discrete{Discrete: &pb.DiscreteSpace{N: 1}}}
	for range 40 {
		deep = &pb.Space{Kind: &pb.Space_Tuple{Tuple: &pb.TupleSpace{Spaces: []*pb.Space{deep}}}}
	}
	_, err := remote.SpaceFromProto(deep)
	require.ErrorIs(t, err, spaces.ErrSpec)
	assert.Contains(t, err.Error(), "deeper than 32")
}

// TestAgentSpecProto carries both forms of the spaces; a reader takes the JSON form
// when the structured one is left out, and names the field of a problem.
func TestAgentSpecProto(t *testing.T) {
	spec := env.Spec{Name: "a", ObservationSpace: spaces.Must(spaces.NewBox([]int{3}, 0, 1)), ActionSpace: spaces.Discrete{N: 4}, MaskLen: 4}
	p, err := remote.AgentSpecProto(spec)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"discrete","n":4,"start":0}`, p.GetActionSpaceJson())
	back, err := remote.AgentSpecFromProto(p)
	require.NoError(t, err)
	assert.Equal(t, spec.Name, back.Name)
	assert.Equal(t, spec.MaskLen, back.MaskLen)
	assert.True(t, spec.ActionSpace.Equal(back.ActionSpace))

	p.ActionSpace = nil
	back, err = remote.AgentSpecFromProto(p)
	require.NoError(t, err)
	assert.True(t, spec.ActionSpace.Equal(back.ActionSpace))

	p.ActionSpaceJson = `{"type":"discrete"}`
	_, err = remote.AgentSpecFromProto(p)
	var fe *remote.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "action_space_json", fe.Field)

	p.ActionSpaceJson, p.MaskLen = `{"type":"discrete","n":4}`, 3
	_, err = remote.AgentSpecFromProto(p)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "mask_len", fe.Field)
	p.ObservationSpace, p.ObservationSpaceJson = nil, ""
	_, err = remote.AgentSpecFromProto(p)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "observation_space", fe.Field)
}
