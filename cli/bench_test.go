package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	res := runArgs(t, "bench", "--run", "^Maze(Step|Baseline)/ref$", "--benchtime", "20ms", "--json")
	require.Equal(t, 0, res.code, res.stderr)
	var out struct {
		Cases []benchResult `json:"cases"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
	require.Len(t, out.Cases, 2)
	step, base := out.Cases[0], out.Cases[1]
	assert.Equal(t, "MazeStep/ref", step.Name)
	assert.Equal(t, "MazeBaseline/ref", step.Baseline)
	assert.Equal(t, "step", step.Unit)
	assert.Positive(t, step.PerSecond)
	assert.Positive(t, base.PerSecond)
	assert.InDelta(t, step.PerSecond/base.PerSecond, step.Ratio, 1e-9)
	assert.Zero(t, base.Ratio, "a baseline has no ratio")
	assert.Contains(t, res.stderr, "bench: MazeStep/ref")

	res = runArgs(t, "bench", "--run", "MazeBaseline/ref", "--benchtime", "20ms")
	require.Equal(t, 0, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Len(t, lines, 2)
	assert.Regexp(t, `case\s+unit\s+ns/op\s+allocs/op\s+per second\s+ratio\s+against`, lines[0])
	assert.Regexp(t, `MazeBaseline/ref\s+step\s+[0-9.]+\s+0\s+[0-9,]+`, lines[1])
}

func TestBenchBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad regexp", []string{"bench", "--run", "("}, `baton: --run "(": error parsing regexp`},
		{"no case", []string{"bench", "--run", "nothing"}, `baton: --run "nothing" matches no case (cases: MazeStep/ref, `},
		{"bad benchtime", []string{"bench", "--benchtime", "-1s"}, "baton: --benchtime -1s: want a positive duration"},
		{"argument", []string{"bench", "maze"}, "baton: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runArgs(t, tt.args...)
			assert.Equal(t, 2, res.code)
			assert.True(t, strings.HasPrefix(res.stderr, tt.want), res.stderr)
			assert.Equal(t, 1, strings.Count(res.stderr, "\n"), res.stderr)
		})
	}
}
