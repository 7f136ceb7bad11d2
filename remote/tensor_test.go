package remote

import (
	"bytes"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestTensorRoundTrip(t *testing.T) {
	floats := []float32{0, -1.5, float32(math.Inf(1)), 3e-38, math.MaxFloat32}
	ft := setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, float32Bytes(floats, nil), 5)
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0xc0, 0xbf}, ft.GetData()[:8], "little-endian on the wire")
	got, fe := decodeFloat32("x", ft, nil, []int64{5})
	require.Nil(t, fe)
	assert.Equal(t, floats, got)

	ints := []int64{0, -1, math.MaxInt64, math.MinInt64}
	it := setTensor(&pb.Tensor{}, pb.DType_DTYPE_INT64, int64Bytes(ints, nil), 2, 2)
	scratch := make([]int64, 1)
	gotInts, fe := decodeInt64("x", it, &scratch, []int64{2, 2})
	require.Nil(t, fe)
	assert.Equal(t, ints, gotInts)

	bools := []bool{true, false, true}
	bt := setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, boolBytes(bools), 3)
	assert.Equal(t, []byte{1, 0, 1}, bt.GetData())
	gotBools, fe := decodeBool("x", bt)
	require.Nil(t, fe)
	assert.Equal(t, bools, gotBools)

	// Bytes that are not aligned for float32 are copied into the scratch buffer.
	unaligned := setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, append([]byte{0}, float32Bytes(floats, nil)...)[1:], 5)
	var fscratch []float32
	got, fe = decodeFloat32("x", unaligned, &fscratch, []int64{5})
	require.Nil(t, fe)
	assert.Equal(t, floats, got)
	assert.Equal(t, floats, fscratch, "copied into the scratch buffer")

	empty := setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, float32Bytes(nil, nil), 0)
	got, fe = decodeFloat32("x", empty, nil, []int64{0})
	require.Nil(t, fe)
	assert.Empty(t, got)
}

func TestTensorErrors(t *testing.T) {
	nan := float32Bytes([]float32{1, float32(math.NaN())}, nil)
	cases := []struct {
		name   string
		t      *pb.Tensor
		decode func(*pb.Tensor) *FieldError
		want   string
	}{
		{"missing", nil, floatsAs([]int64{2}), "obs: missing"},
		{"dtype", &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2}, Data: []byte{1, 1}}, floatsAs([]int64{2}), "obs.dtype: DTYPE_BOOL, want DTYPE_FLOAT32"},
		{"shape", &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{1, 2}, Data: make([]byte, 8)}, floatsAs([]int64{2}, []int64{2, 1}), "obs.shape: [1 2], want [2] or [2 1]"},
		{"rank", &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: make([]int64, 40)}, floatsAs(), "obs.shape: 40 dimensions, want at most 33"},
		{"negative", &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Shape: []int64{2, -1}}, intsAs(), "obs.shape: dimension 1 is -1, want >= 0"},
		{"overflow", &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Shape: []int64{math.MaxInt64, math.MaxInt64, 2}}, intsAs(), "obs.shape: [9223372036854775807 9223372036854775807 2] holds more than 67108864 elements"},
		{"length", &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Shape: []int64{2}, Data: make([]byte, 15)}, intsAs(), "obs.data: 15 bytes, want 16 (2 int64 of 8 bytes, shape [2])"},
		{"scalar", &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Data: make([]byte, 8)}, floatsAs(), "obs.data: 8 bytes, want 4 (1 float32 of 4 bytes, shape [])"},
		{"NaN", &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{2}, Data: nan}, floatsAs(), "obs.data: element 1 is NaN"},
		{"bool byte", &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{3}, Data: []byte{0, 1, 2}}, boolsAs(), "obs.data: element 2 is 2, want 0 or 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fe := c.decode(c.t)
			require.NotNil(t, fe)
			assert.Equal(t, c.want, fe.Error())
		})
	}
}

func floatsAs(accept ...[]int64) func(*pb.Tensor) *FieldError {
	return func(t *pb.Tensor) *FieldError { _, fe := decodeFloat32("obs", t, nil, accept...); return fe }
}

func intsAs(accept ...[]int64) func(*pb.Tensor) *FieldError {
	return func(t *pb.Tensor) *FieldError { _, fe := decodeInt64("obs", t, nil, accept...); return fe }
}

func boolsAs(accept ...[]int64) func(*pb.Tensor) *FieldError {
	return func(t *pb.Tensor) *FieldError { _, fe := decodeBool("obs", t, accept...); return fe }
}

// FuzzDecodeTensor decodes arbitrary wire bytes as a Tensor with every decoder: none
// panics, and what decodes has prod(shape) elements and encodes back to its bytes.
// The seeds are in testdata/fuzz/FuzzDecodeTensor.
func FuzzDecodeTensor(f *testing.F) {
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, wire []byte) {
		var tensor pb.Tensor
		if err := proto.Unmarshal(wire, &tensor); err != nil {
			return
		}
		n := -1
		if m, fe := elements("t", tensor.GetShape()); fe == nil {
			n = m
		}
		if v, fe := decodeFloat32("t", &tensor, nil); fe == nil {
			require.Len(t, v, n)
			require.True(t, bytes.Equal(float32Bytes(v, nil), tensor.GetData()))
			require.False(t, slices.ContainsFunc(v, func(x float32) bool { return x != x }))
		}
		scratch := []int64{7}
		if v, fe := decodeInt64("t", &tensor, &scratch); fe == nil {
			require.Len(t, v, n)
			require.True(t, bytes.Equal(int64Bytes(v, nil), tensor.GetData()))
		}
		if v, fe := decodeBool("t", &tensor, []int64{3}, []int64{2, 2}); fe == nil {
			require.Len(t, v, n)
			require.True(t, bytes.Equal(boolBytes(v), tensor.GetData()))
		}
	})
}

// FuzzActRequest answers arbitrary wire bytes as an ActRequest to a served agent
// with a masked Discrete action space and a bounded Box observation: it never
// panics, and a request that passes gets an action inside the space.
func FuzzActRequest(f *testing.F) {
	valid, err := proto.Marshal(&pb.ActRequest{
		Observation: setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, float32Bytes([]float32{0.5, -1}, nil), 2),
		Mask:        setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, []byte{0, 1, 1}, 3),
	})
	require.NoError(f, err)
	f.Add(valid)
	sa, err := newServedAgent(Agent{
		Spec: env.Spec{Name: "a", ObservationSpace: spaces.Must(spaces.NewBox([]int{2}, -1, 1)), ActionSpace: spaces.Discrete{N: 3}, MaskLen: 3},
		Policy: agent.PolicyFunc(func(_ context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
			for i := len(mask) - 1; i >= 0; i-- {
				if mask[i] {
					return agent.Discrete(int64(i)), nil
				}
			}
			return agent.Discrete(int64(obs[0]+1) % 3), nil
		}),
	})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, wire []byte) {
		var req pb.ActRequest
		if err := proto.Unmarshal(wire, &req); err != nil {
			return
		}
		w, err := sa.get()
		require.NoError(t, err)
		defer sa.put(w)
		var resp pb.ActResponse
		if answered, err := sa.act(t.Context(), w, &req, &resp, false); err != nil || !answered {
			return
		}
		raw, fe := sa.action.decode("action", resp.GetAction(), nil, nil)
		require.Nil(t, fe)
		require.NoError(t, raw.Check(sa.Spec.ActionSpace))
	})
}
