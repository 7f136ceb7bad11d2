package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/batonrl/baton/cli"
	"github.com/batonrl/baton/envs/catalog"
	"github.com/batonrl/baton/envs/rps"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A program's command line over its own environments, run in the process as its
// tests would: here rock-paper-scissors alone, as a module of the user's registers
// its environment.
func ExampleRun() {
	code := cli.Run(context.Background(), []string{"envs"}, nil, os.Stdout, os.Stderr, rps.Register)
	fmt.Println("exit status", code)
	// Output:
	// rps: rock-paper-scissors, two players moving at once (PettingZoo's rps_v2)
	//   --env-config  fields: max_cycles
	//   success       not defined
	//   agent player_0
	//     observation  Box(0.0, 1.0, (4,), float32)
	//     action       Discrete(3)
	//     policies     random (default)  uniform over the hands
	//                  rock              always rock
	//   agent player_1
	//     observation  Box(0.0, 1.0, (4,), float32)
	//     action       Discrete(3)
	//     policies     random (default)  uniform over the hands
	//                  rock              always rock
	// exit status 0
}

// registerMine stands for a user's register function that also names an environment
// baton ships.
func registerMine(reg *registry.Registry) error { return rps.Register(reg) }

func TestRunRegisters(t *testing.T) {
	tests := []struct {
		name     string
		register []func(*registry.Registry) error
		args     []string
		code     int
		stdout   []string // in stdout
		stderr   []string // in stderr
	}{
		{"shipped", nil, []string{"envs"}, 0, []string{"maze:", "cartpole:", "rps:"}, nil},
		{"own only", []func(*registry.Registry) error{rps.Register}, []string{"run", "maze"}, 2, nil,
			[]string{`baton: unknown environment "maze" (choices: rps)`}},
		{"own and shipped", []func(*registry.Registry) error{catalog.Register, registerMine}, []string{"envs"}, 1, nil,
			[]string{`baton: registry: environment "rps" is registered twice: first by github.com/batonrl/baton/envs/rps.Register (`,
				`from github.com/batonrl/baton/envs/catalog.Register (catalog.go:`,
				`then by github.com/batonrl/baton/envs/rps.Register (`, `from github.com/batonrl/baton/cli_test.registerMine (example_test.go:`}},
		{"bench over the shipped only", []func(*registry.Registry) error{rps.Register}, []string{"bench"}, 2, nil,
			[]string{`unknown command "bench"`}},
		{"new over the shipped only", []func(*registry.Registry) error{rps.Register}, []string{"new", "kd"}, 2, nil,
			[]string{`unknown command "new"`}},
		{"nil register", []func(*registry.Registry) error{nil}, []string{"envs"}, 1, nil, []string{"register function is nil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cli.Run(t.Context(), tt.args, nil, &stdout, &stderr, tt.register...)
			require.Equal(t, tt.code, code, stderr.String())
			for _, s := range tt.stdout {
				assert.Contains(t, stdout.String(), s)
			}
			for _, s := range tt.stderr {
				assert.Contains(t, stderr.String(), s)
			}
		})
	}
}
