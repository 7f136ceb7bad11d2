// Command gen writes spaces_golden.json, the fixture of python/tests/test_spaces.py:
// spaces of every kind as the Go spaces package marshals them (the spaces JSON
// spec), their flat dimensions, and sampled values with their flat encodings, so that
// the Python side's spec parser and unflatten are checked against the Go side.
// Regenerate it from the repository root with
//
//	go run ./python/tests/testdata/gen > python/tests/testdata/spaces_golden.json
//
// (test_spaces.py runs it and fails when the file is not what it writes, so the Go and
// Python sides cannot drift apart)
// With -rejects FILE it reads the specs of FILE (spaces_rejects.json: [{"spec": S,
// "path": P}, ...]) and prints each with the Path of the *SpecError that
// spaces.Unmarshal returns for it (null where it accepts the spec), so that
// test_spaces.py checks that the Go side rejects what the Python side rejects, at the
// same place:
//
//	go run ./python/tests/testdata/gen -rejects python/tests/testdata/spaces_rejects.json
//
// (it lives under testdata, which go vet ./... and go test ./... skip).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/batonrl/baton/spaces"
)

type sample struct {
	Value any       `json:"value"`
	Flat  []float32 `json:"flat"`
}

type golden struct {
	Name    string          `json:"name"`
	Spec    json.RawMessage `json:"spec"`
	FlatDim int             `json:"flat_dim"`
	Samples []sample        `json:"samples"`
}

type reject struct {
	Spec  string  `json:"spec"`
	Path  *string `json:"path"`
	Error string  `json:"error,omitempty"`
}

func main() {
	rejects := flag.String("rejects", "", "print the SpecError path of each spec of `FILE`")
	flag.Parse()
	if *rejects != "" {
		if err := printRejects(*rejects); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	writeGolden()
}

func printRejects(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var cases []reject
	if err := json.Unmarshal(data, &cases); err != nil {
		return err
	}
	for i := range cases {
		c := &cases[i]
		c.Path = nil
		_, err := spaces.Unmarshal([]byte(c.Spec))
		var se *spaces.SpecError
		switch {
		case err == nil:
		case errors.As(err, &se):
			c.Path, c.Error = &se.Path, err.Error()
		default:
			return fmt.Errorf("spec %d: %w is not a *spaces.SpecError", i, err)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	return enc.Encode(cases)
}

func writeGolden() {
	inf := float32(math.Inf(1))
	box := spaces.Must(spaces.NewBoxBounds([]int{2, 3}, []float32{-1, 0, float32(math.Inf(-1)), -2.5, 0, 0}, []float32{1, 1, 0, inf, 0.5, 1e-3}))
	disc := spaces.Discrete{N: 4, Start: 1}
	discNeg := spaces.Discrete{N: 3, Start: -2}
	discZero := spaces.Discrete{N: 5}
	md := spaces.Must(spaces.NewMultiDiscrete([]int64{3, 2, 4}))
	mb := spaces.Must(spaces.NewMultiBinary(2, 2))
	mb1 := spaces.Must(spaces.NewMultiBinary(5))
	textUnsorted := spaces.Must(spaces.NewText(2, 6, "zy.x?"))
	text := spaces.Must(spaces.NewText(1, 5, "abc"))
	textDefault := spaces.Must(spaces.NewText(0, 3, ""))
	tuple := spaces.Must(spaces.NewTuple(spaces.Discrete{N: 2}, mb))
	dict := spaces.Must(spaces.NewDict(
		spaces.DictEntry{Key: "pos", Space: spaces.Must(spaces.NewBox([]int{2}, 0, 1))},
		spaces.DictEntry{Key: "door", Space: spaces.Discrete{N: 3}},
		spaces.DictEntry{Key: "inner", Space: spaces.Must(spaces.NewDict(
			spaces.DictEntry{Key: "z", Space: tuple},
			spaces.DictEntry{Key: "a", Space: md},
		))},
	))
	unbounded := spaces.Must(spaces.NewBox([]int{3}, float32(math.Inf(-1)), inf))
	scalar := spaces.Must(spaces.NewBox([]int{}, -1, 1))
	cases := []struct {
		name string
		s    spaces.Space
	}{
		{"discrete", disc}, {"discrete_negative_start", discNeg}, {"discrete_zero_start", discZero},
		{"box", box}, {"box_unbounded", unbounded}, {"box_scalar", scalar},
		{"multi_discrete", md}, {"multi_binary", mb}, {"multi_binary_1d", mb1},
		{"text", text}, {"text_default_charset", textDefault}, {"text_unsorted_charset", textUnsorted},
		{"tuple", tuple}, {"dict", dict},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var out []golden
	for _, c := range cases {
		spec, err := spaces.Marshal(c.s)
		if err != nil {
			panic(err)
		}
		g := golden{Name: c.name, Spec: spec, FlatDim: c.s.FlatDim()}
		for range 5 {
			v := c.s.Sample(rng)
			flat, err := spaces.Flatten(c.s, v)
			if err != nil {
				panic(err)
			}
			g.Samples = append(g.Samples, sample{Value: jsonable(v), Flat: flat})
		}
		out = append(out, g)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

// jsonable makes v encodable: infinite floats as "inf"/"-inf", []int8 as numbers.
func jsonable(v any) any {
	switch x := v.(type) {
	case []float32:
		out := make([]any, len(x))
		for i, f := range x {
			switch {
			case math.IsInf(float64(f), 1):
				out[i] = "inf"
			case math.IsInf(float64(f), -1):
				out[i] = "-inf"
			default:
				out[i] = f
			}
		}
		return out
	case []int8:
		out := make([]int, len(x))
		for i, b := range x {
			out[i] = int(b)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	}
	return v
}
