package spaces_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/spaces"
)

func TestSpecRoundTrip(t *testing.T) {
	for _, ns := range allSpaces() {
		t.Run(ns.name, func(t *testing.T) {
			data, err := spaces.Marshal(ns.space)
			require.NoError(t, err)
			require.True(t, json.Valid(data), "%s", data)
			back, err := spaces.Unmarshal(data)
			require.NoError(t, err, "%s", data)
			assert.True(t, ns.space.Equal(back), "%v != %v", ns.space, back)
			assert.Equal(t, ns.space.String(), back.String())

			// MarshalJSON and encoding/json agree with Marshal, and marshaling is canonical.
			viaJSON, err := json.Marshal(ns.space)
			require.NoError(t, err)
			assert.Equal(t, string(data), string(viaJSON))
			again, err := spaces.Marshal(back)
			require.NoError(t, err)
			assert.Equal(t, string(data), string(again))
		})
	}
}

func TestSpecGolden(t *testing.T) {
	tests := []struct {
		name  string
		space spaces.Space
		json  string
	}{
		{"discrete", spaces.Discrete{N: 4}, `{"type":"discrete","n":4,"start":0}`},
		{"discrete_start", spaces.Discrete{N: 3, Start: -1}, `{"type":"discrete","n":3,"start":-1}`},
		{"box", spaces.Must(spaces.NewBox([]int{2, 3}, 0, 1.5)),
			`{"type":"box","shape":[2,3],"dtype":"float32","low":[0,0,0,0,0,0],"high":[1.5,1.5,1.5,1.5,1.5,1.5]}`},
		{"box_inf", spaces.Must(spaces.NewBoxBounds([]int{3}, []float32{negInf, -0.1, 1e-7}, []float32{inf, 1e20, 3})),
			`{"type":"box","shape":[3],"dtype":"float32","low":["-inf",-0.1,1e-07],"high":["inf",1e+20,3]}`},
		{"box_scalar", spaces.Must(spaces.NewBox(nil, -1, 1)), `{"type":"box","shape":[],"dtype":"float32","low":[-1],"high":[1]}`},
		{"multi_discrete", spaces.Must(spaces.NewMultiDiscrete([]int64{3, 4})), `{"type":"multi_discrete","nvec":[3,4]}`},
		{"multi_binary", spaces.Must(spaces.NewMultiBinary(5)), `{"type":"multi_binary","shape":[5]}`},
		{"text", spaces.Must(spaces.NewText(0, 8, "abc")), `{"type":"text","min_length":0,"max_length":8,"charset":"abc"}`},
		{"text_escaped", spaces.Must(spaces.NewText(1, 2, `"\<é`)), `{"type":"text","min_length":1,"max_length":2,"charset":"\"\\\u003cé"}`},
		{"dict", spaces.Must(spaces.NewDict(
			spaces.DictEntry{Key: "pos", Space: spaces.Must(spaces.NewBox([]int{2}, 0, 1))},
			spaces.DictEntry{Key: "door", Space: spaces.Discrete{N: 3}},
		)), `{"type":"dict","spaces":[{"key":"pos","space":{"type":"box","shape":[2],"dtype":"float32","low":[0,0],"high":[1,1]}},{"key":"door","space":{"type":"discrete","n":3,"start":0}}]}`},
		{"tuple", spaces.Must(spaces.NewTuple(spaces.Discrete{N: 2}, spaces.Must(spaces.NewMultiBinary(3)))),
			`{"type":"tuple","spaces":[{"type":"discrete","n":2,"start":0},{"type":"multi_binary","shape":[3]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := spaces.Marshal(tt.space)
			require.NoError(t, err)
			assert.Equal(t, tt.json, string(data))
			back, err := spaces.Unmarshal([]byte(tt.json))
			require.NoError(t, err)
			assert.True(t, tt.space.Equal(back))
		})
	}
}

func TestUnmarshalAccepts(t *testing.T) {
	tests := []struct {
		name string
		json string
		want spaces.Space
	}{
		{"discrete_no_start", `{"type":"discrete","n":2}`, spaces.Discrete{N: 2}},
		{"whitespace", " {\n\t\"n\" : 2 ,\"type\":\"discrete\" } \n", spaces.Discrete{N: 2}},
		{"box_scalar_bounds", `{"type":"box","shape":[2,3],"low":0,"high":"inf"}`, spaces.Must(spaces.NewBox([]int{2, 3}, 0, inf))},
		{"box_mixed_bounds", `{"type":"box","shape":[2],"dtype":"float32","low":"-inf","high":[1,2]}`,
			spaces.Must(spaces.NewBoxBounds([]int{2}, []float32{negInf, negInf}, []float32{1, 2}))},
		{"box_exponent", `{"type":"box","shape":[1],"low":-1.5e3,"high":2E+1}`, spaces.Must(spaces.NewBox([]int{1}, -1500, 20))},
		{"box_no_dims_zero", `{"type":"box","shape":[0,3],"low":[],"high":[]}`, spaces.Must(spaces.NewBox([]int{0, 3}, 0, 0))},
		{"text_default_charset", `{"type":"text","min_length":1,"max_length":3}`, spaces.Must(spaces.NewText(1, 3, ""))},
		{"text_empty_charset", `{"type":"text","min_length":1,"max_length":3,"charset":""}`, spaces.Must(spaces.NewText(1, 3, ""))},
		{"dict_empty", `{"type":"dict","spaces":[]}`, spaces.Must(spaces.NewDict())},
		{"tuple_empty", `{"type":"tuple","spaces":[]}`, spaces.Must(spaces.NewTuple())},
		{"deep", nestedTuple(spaces.MaxDepth), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spaces.Unmarshal([]byte(tt.json))
			require.NoError(t, err)
			if tt.want != nil {
				assert.True(t, tt.want.Equal(got), "got %v", got)
			}
		})
	}
}

// nestedTuple returns a spec of depth levels: depth-1 Tuples around a Discrete.
func nestedTuple(depth int) string {
	return strings.Repeat(`{"type":"tuple","spaces":[`, depth-1) + `{"type":"discrete","n":2}` + strings.Repeat(`]}`, depth-1)
}

func TestUnmarshalRejects(t *testing.T) {
	tests := []struct {
		name   string
		json   string
		path   string
		reason string // a piece of the Reason
	}{
		{"empty", ``, "", "unexpected end"},
		{"not_object", `[1]`, "", "want a JSON object, got an array"},
		{"null", `null`, "", "want a JSON object, got null"},
		{"truncated", `{"type":"discrete","n":2`, "", "unexpected end"},
		{"malformed", `{"type":"discrete",,"n":2}`, "", "malformed JSON"},
		{"trailing", `{"type":"discrete","n":2} {}`, "", "data after the JSON object"},
		{"trailing_garbage", `{"type":"discrete","n":2}x`, "", "data after the JSON object"},
		{"no_type", `{"n":2}`, "", `missing required field "type"`},
		{"type_not_string", `{"type":3,"n":2}`, ".type", "want a string, got a number"},
		{"unknown_type", `{"type":"graph"}`, ".type", `unknown type "graph"`},
		{"type_case", `{"type":"Discrete","n":2}`, ".type", `unknown type "Discrete"`},
		{"unknown_field", `{"type":"discrete","n":2,"size":3}`, "", `unknown field "size"`},
		{"field_case", `{"type":"discrete","N":2}`, "", `unknown field "N"`},
		{"field_of_other_kind", `{"type":"discrete","n":2,"nvec":[1]}`, "", `unknown field "nvec"`},
		{"duplicate_field", `{"type":"discrete","n":2,"n":3}`, "", `field "n" appears twice`},
		{"discrete_missing_n", `{"type":"discrete"}`, "", `missing required field "n"`},
		{"discrete_n0", `{"type":"discrete","n":0}`, ".n", "0 is out of range, want 1 to 67108864"},
		{"discrete_n_float", `{"type":"discrete","n":2.0}`, ".n", "want an integer from 1 to"},
		{"discrete_n_string", `{"type":"discrete","n":"2"}`, ".n", "want an integer, got a string"},
		{"discrete_n_null", `{"type":"discrete","n":null}`, ".n", "want an integer, got null"},
		{"discrete_n_huge", `{"type":"discrete","n":99999999999999999999}`, ".n", "want an integer from 1 to"},
		{"discrete_overflow", `{"type":"discrete","n":3,"start":9223372036854775807}`, "", "overflows"},
		{"box_missing_low", `{"type":"box","shape":[2],"high":1}`, "", `missing required field "low"`},
		{"box_dtype", `{"type":"box","shape":[2],"dtype":"float64","low":0,"high":1}`, ".dtype", `want "float32"`},
		{"box_low_above_high", `{"type":"box","shape":[2],"low":[0,2],"high":[1,1]}`, "", "Box low[1] 2 is above high[1] 1"},
		{"box_scalar_order", `{"type":"box","shape":[2],"low":"inf","high":0}`, "", "Box low inf is above high 0"},
		{"box_length", `{"type":"box","shape":[2,2],"low":[0,0,0],"high":1}`, ".low", "want 4 bounds (the product of shape), got 3"},
		{"box_nan", `{"type":"box","shape":[1],"low":"nan","high":1}`, ".low", `want a number, "inf" or "-inf", got a string`},
		{"box_bound_null", `{"type":"box","shape":[1],"low":[null],"high":1}`, ".low[0]", "got null"},
		{"box_bound_range", `{"type":"box","shape":[1],"low":-1e39,"high":1}`, ".low", "out of the float32 range"},
		{"box_infinity_word", `{"type":"box","shape":[1],"low":0,"high":Infinity}`, ".high", "malformed JSON"},
		{"box_negative_dim", `{"type":"box","shape":[-1],"low":0,"high":1}`, ".shape[0]", "-1 is out of range"},
		{"box_shape_null", `{"type":"box","shape":[null],"low":0,"high":1}`, ".shape[0]", "want an integer, got null"},
		{"box_shape_not_array", `{"type":"box","shape":3,"low":0,"high":1}`, ".shape", "want an array, got a number"},
		{"box_huge", `{"type":"box","shape":[1000000000,1000000000],"low":0,"high":1}`, ".shape[0]", "out of range"},
		{"box_overflow", `{"type":"box","shape":[65536,65536,65536,65536],"low":0,"high":1}`, ".shape", "more than 67108864 elements"},
		{"box_rank", `{"type":"box","shape":[` + strings.Repeat("1,", 32) + `1],"low":0,"high":1}`, ".shape", "33 dimensions"},
		{"multi_discrete_zero", `{"type":"multi_discrete","nvec":[2,0]}`, ".nvec[1]", "0 is out of range"},
		{"multi_discrete_sum", `{"type":"multi_discrete","nvec":[67108864,1]}`, ".nvec", "sums to more than"},
		{"multi_binary_zero", `{"type":"multi_binary","shape":[0]}`, ".shape", "shape[0] is 0, want >= 1"},
		{"multi_binary_huge", `{"type":"multi_binary","shape":[67108864,2]}`, ".shape", "more than"},
		{"dict_spaces_object", `{"type":"dict","spaces":{"a":{"type":"discrete","n":2}}}`, ".spaces", "want an array, got an object"},
		{"dict_entry_not_object", `{"type":"dict","spaces":[3]}`, ".spaces[0]", "want a JSON object"},
		{"dict_entry_unknown", `{"type":"dict","spaces":[{"key":"a","space":{"type":"discrete","n":2},"x":1}]}`, ".spaces[0]", `unknown field "x"`},
		{"dict_entry_no_space", `{"type":"dict","spaces":[{"key":"a"}]}`, ".spaces[0]", `missing required field "space"`},
		{"dict_empty_key", `{"type":"dict","spaces":[{"key":"","space":{"type":"discrete","n":2}}]}`, ".spaces[0].key", "empty key"},
		{"dict_duplicate_key", `{"type":"dict","spaces":[{"key":"a","space":{"type":"discrete","n":2}},{"key":"a","space":{"type":"discrete","n":2}}]}`,
			".spaces[1].key", `key "a" already at .spaces[0]`},
		{"dict_nested_error", `{"type":"dict","spaces":[{"key":"a","space":{"type":"discrete","n":0}}]}`, ".spaces[0].space.n", "out of range"},
		{"dict_too_big", `{"type":"dict","spaces":[{"key":"a","space":{"type":"discrete","n":67108864}},{"key":"b","space":{"type":"discrete","n":1}}]}`,
			"", "FlatDim 67108865 is above 67108864"},
		{"tuple_nested_error", `{"type":"tuple","spaces":[{"type":"discrete","n":1},{"type":"tuple","spaces":[{"type":"box"}]}]}`,
			".spaces[1].spaces[0]", `missing required field "shape"`},
		{"tuple_null", `{"type":"tuple","spaces":null}`, ".spaces", "want an array, got null"},
		{"too_deep", nestedTuple(spaces.MaxDepth + 1), strings.Repeat(".spaces[0]", spaces.MaxDepth), "deeper than 32"},
		{"text_missing_max", `{"type":"text","min_length":0}`, "", `missing required field "max_length"`},
		{"text_order", `{"type":"text","min_length":3,"max_length":2,"charset":"ab"}`, "", "max length 2 is below min length 3"},
		{"text_duplicate", `{"type":"text","min_length":0,"max_length":2,"charset":"aba"}`, "", "'a' at 0 and 2"},
		{"text_huge", `{"type":"text","min_length":0,"max_length":67108865}`, ".max_length", "out of range"},
		{"text_charset_number", `{"type":"text","min_length":0,"max_length":2,"charset":7}`, ".charset", "want a string, got a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := spaces.Unmarshal([]byte(tt.json))
			require.Error(t, err, "got %v", s)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, spaces.ErrSpec)
			var se *spaces.SpecError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, tt.path, se.Path)
			assert.Contains(t, se.Reason, tt.reason)
			assert.True(t, strings.HasPrefix(err.Error(), "spaces: invalid space spec: "), err.Error())
		})
	}
}

func TestSpecErrorText(t *testing.T) {
	_, err := spaces.Unmarshal([]byte(`{"type":"dict","spaces":[{"key":"a","space":{"type":"discrete","n":0}}]}`))
	assert.EqualError(t, err, "spaces: invalid space spec: .spaces[0].space.n: 0 is out of range, want 1 to 67108864")
	assert.EqualError(t, &spaces.SpecError{Reason: "r"}, "spaces: invalid space spec: r")
}

func TestMarshalRejectsInvalid(t *testing.T) {
	tests := []struct {
		name  string
		space spaces.Space
	}{
		{"nil", nil},
		{"discrete_zero", spaces.Discrete{}},
		{"zero_box", &spaces.Box{}},
		{"zero_text", &spaces.Text{}},
		{"zero_multi_binary", &spaces.MultiBinary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := spaces.Marshal(tt.space)
			require.ErrorIs(t, err, spaces.ErrInvalid)
		})
	}
}

func TestZeroDictAndTupleAreEmpty(t *testing.T) {
	for _, s := range []spaces.Space{&spaces.Dict{}, &spaces.Tuple{}, &spaces.MultiDiscrete{}} {
		t.Run(s.Kind().String(), func(t *testing.T) {
			data, err := spaces.Marshal(s)
			require.NoError(t, err)
			back, err := spaces.Unmarshal(data)
			require.NoError(t, err)
			assert.True(t, s.Equal(back))
			assert.Zero(t, s.FlatDim())
			assert.NoError(t, s.Check(s.Sample(newRNG())))
		})
	}
}

func TestUnmarshalBoxFloat32Exact(t *testing.T) {
	// Bounds must read back as the same float32, not via float64 with double rounding.
	rng := newRNG()
	for range 2000 {
		x := float32(rng.NormFloat64() * 1e10)
		b := spaces.Must(spaces.NewBox([]int{1}, x, x))
		data, err := spaces.Marshal(b)
		require.NoError(t, err)
		back, err := spaces.Unmarshal(data)
		require.NoError(t, err)
		require.True(t, b.Equal(back), fmt.Sprint(x))
	}
}
