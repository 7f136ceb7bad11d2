package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlayLook checks that baton play shows actions and states as the registry entry's
// Look says, whatever the environment: the command names none itself.
func TestPlayLook(t *testing.T) {
	tests := []struct {
		name string
		look registry.Look
		// want are the action and the info of the text line of tick 1.
		wantAction, wantInfo string
	}{
		{"zero Look: raw actions, Info as JSON", registry.Look{}, "1", `{"x":`},
		{"named", registry.Look{
			Action: func(turn env.Turn, _ *env.Report, raw agent.RawAction) string {
				return fmt.Sprintf("push%d@%d", raw.Int, turn.Tick)
			},
			Info: func(any) string { return "a cart" },
		}, "push1@0", "a cart"},
		{"only the actions named", registry.Look{
			Action: func(_ env.Turn, acting *env.Report, raw agent.RawAction) string { return acting.AgentID + "!" },
		}, "cartpole_0!", `{"x":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := shipped(t)
			reg := registry.New()
			e, err := base.reg.Lookup("cartpole")
			require.NoError(t, err)
			e.Name, e.Look = "pole", tt.look
			require.NoError(t, reg.Register(e))
			envs := &environments{reg: reg, prog: "baton"}

			r := runEnvs(t, envs, "play", "pole", "--policy", "cartpole=balance", "--max-ticks", "3")
			require.Equal(t, 0, r.code, r.stderr)
			l := lines(r.stdout)[2]
			assert.Regexp(t, `^   1  cartpole_0  `+regexp.QuoteMeta(tt.wantAction)+` +cartpole_0 +1\.000 +1  -  +`+regexp.QuoteMeta(tt.wantInfo), l)

			r = runEnvs(t, envs, "play", "pole", "--policy", "cartpole=balance", "--max-ticks", "3", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			var rep jsonReport
			require.NoError(t, json.Unmarshal([]byte(lines(r.stdout)[1]), &rep))
			require.NotNil(t, rep.ActionName)
			assert.Equal(t, tt.wantAction, *rep.ActionName)
			assert.EqualValues(t, 1, rep.Action)
			assert.IsType(t, map[string]any{}, rep.Info, "the JSON output keeps the Info as data")
		})
	}
}

// TestPlayHumanUsage checks the bad input of baton play --human, which is refused
// before anything is played or read.
func TestPlayHumanUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown agent", []string{"--human", "pilot"}, `--human pilot: unknown agent "pilot" of maze (choices: strategy, motion)`},
		{"json", []string{"--human", "strategy", "--json"}, "--json: a person plays in text"},
		{"a policy too", []string{"--human", "motion", "--policy", "motion=forward"}, "--policy motion=forward: agent motion is played by a person (--human motion)"},
		{"log without a person", []string{"--log", "somewhere"}, "--log somewhere needs --human AGENT"},
		{"negative tick limit", []string{"--human", "strategy", "--max-ticks", "-1"}, "--max-ticks -1: want 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, append([]string{"play", "maze"}, tt.args...)...)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Empty(t, r.stdout)
		})
	}
}
