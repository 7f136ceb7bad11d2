package cli

import (
	"io"
	"strings"

	"github.com/batonrl/baton/env"
	"github.com/spf13/cobra"
)

// drawer is an environment that can draw its switching state machine, as *hrl.Runtime
// does.
type drawer interface {
	Mermaid() string
	DOT() string
}

func newGraph(envs *environments) *cobra.Command {
	var dot bool
	var envConfig string
	cmd := &cobra.Command{
		Use:   "graph ENV",
		Short: "Draw an environment's switching state machine (Mermaid, or Graphviz DOT)",
		Long: `graph prints the switching state machine of the environment ENV, configured by
--env-config: its agents as states, the action triggers and procedures that hand control
down, and the on-done rules that hand it back or end the episode. The output is a
Mermaid state diagram (paste it in a Markdown mermaid block) or, with --dot, a Graphviz
graph ("baton graph maze --dot | dot -Tsvg > maze.svg"). An environment without a
switching machine (a single-agent environment) is an error.`,
		Example:   "  baton graph maze\n  baton graph maze --env-config '{\"procedure\": true}'\n  baton graph maze --dot",
		ValidArgs: envs.names(),
		Args:      oneEnv(envs, "graph"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return graph(envs, args[0], envConfig, dot, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.BoolVar(&dot, "dot", false, "print Graphviz DOT instead of Mermaid")
	fl.StringVar(&envConfig, "env-config", "", "the environment's configuration as `JSON`, or @FILE to read it from a file")
	return cmd
}

func graph(envs *environments, name, envConfig string, dot bool, w io.Writer) error {
	config, err := readConfig(envConfig)
	if err != nil {
		return err
	}
	o, err := envs.open(name, config, 0)
	if err != nil {
		return err
	}
	d, ok := env.As[drawer](o.env)
	if !ok {
		return usagef("%s has no switching state machine to draw (environments with one: %s)", name, strings.Join(drawable(envs), ", "))
	}
	out := d.Mermaid()
	if dot {
		out = d.DOT()
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	_, err = io.WriteString(w, out)
	return err
}

// drawable lists the environments whose default configuration has a switching machine.
func drawable(envs *environments) []string {
	var names []string
	for _, name := range envs.names() {
		if o, err := envs.open(name, nil, 0); err == nil {
			if _, ok := env.As[drawer](o.env); ok {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}
