package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/batonrl/baton/spaces"
	"github.com/spf13/cobra"
)

func newEnvs(envs *environments) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "envs [ENV]...",
		Short: "List the environments with their agents, spaces and policies",
		Long: `envs lists the registered environments (or those named): each one's description, what
--env-config takes, and its agents in order, with their observation and action spaces
(those of the default configuration) and their policies, the default marked. With
--json it prints one JSON array on one line (pipe it to jq to read it), each agent's
spaces in the JSON spec of package spaces.`,
		Example:   "  baton envs\n  baton envs maze --json",
		ValidArgs: envs.names(),
		Args: func(_ *cobra.Command, args []string) error {
			for _, name := range args {
				if _, err := envs.lookup(name); err != nil {
					return err
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = envs.names()
			}
			list := make([]envListing, 0, len(args))
			for _, name := range args {
				l, err := listEnv(envs, name)
				if err != nil {
					return err
				}
				list = append(list, l)
			}
			if asJSON {
				return writeEnvsJSON(cmd.OutOrStdout(), list)
			}
			return writeEnvsText(cmd.OutOrStdout(), list)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array instead of text")
	return cmd
}

// envListing describes a registered environment, for baton envs --json.
type envListing struct {
	Name           string         `json:"name"`
	Description    string         `json:"description"`
	Config         string         `json:"config"`
	DefinesSuccess bool           `json:"defines_success"`
	Agents         []agentListing `json:"agents"`
}

type agentListing struct {
	Name             string          `json:"name"`
	ObservationSpace json.RawMessage `json:"observation_space"`
	ActionSpace      json.RawMessage `json:"action_space"`
	MaskLen          int             `json:"mask_len"`
	Policies         []policyListing `json:"policies"`

	observation, action string // the spaces' String, for text
}

type policyListing struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Default     bool   `json:"default"`
}

// listEnv builds the named environment with its default configuration to learn its
// agents' spaces.
func listEnv(envs *environments, name string) (envListing, error) {
	o, err := envs.open(name, nil, 0)
	if err != nil {
		return envListing{}, err
	}
	l := envListing{
		Name:           o.entry.Name,
		Description:    o.entry.Description,
		Config:         configHelp(o.entry),
		DefinesSuccess: o.entry.Success != nil,
		Agents:         []agentListing{},
	}
	for _, a := range o.agents {
		obs, err := spaces.Marshal(a.ObservationSpace)
		if err != nil {
			return envListing{}, fmt.Errorf("%s: the observation space of %s: %w", name, a.Name, err)
		}
		act, err := spaces.Marshal(a.ActionSpace)
		if err != nil {
			return envListing{}, fmt.Errorf("%s: the action space of %s: %w", name, a.Name, err)
		}
		al := agentListing{
			Name:             a.Name,
			ObservationSpace: obs,
			ActionSpace:      act,
			MaskLen:          a.MaskLen,
			Policies:         []policyListing{},
			observation:      a.ObservationSpace.String(),
			action:           a.ActionSpace.String(),
		}
		if ae, err := o.entry.Agent(a.Name); err == nil {
			for _, p := range ae.Policies {
				al.Policies = append(al.Policies, policyListing{Name: p.Name, Description: p.Description, Default: p.Name == ae.Default})
			}
		}
		l.Agents = append(l.Agents, al)
	}
	return l, nil
}

func writeEnvsJSON(w io.Writer, list []envListing) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(list)
}

// writeEnvsText prints, for each environment:
//
//	maze: the reference maze: ...
//	  config    fields: map, ...
//	  success   defined
//	  agent strategy
//	    observation  Box(...)
//	    action       Discrete(4), masked
//	    policies     oracle (default)  shortest paths to the goal
//	                 random            uniform over the walkable directions
func writeEnvsText(w io.Writer, list []envListing) error {
	var b strings.Builder
	for i, l := range list {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s\n", l.Name, l.Description)
		fmt.Fprintf(&b, "  --env-config  %s\n", l.Config)
		success := "not defined"
		if l.DefinesSuccess {
			success = "defined"
		}
		fmt.Fprintf(&b, "  success       %s\n", success)
		for _, a := range l.Agents {
			fmt.Fprintf(&b, "  agent %s\n", a.Name)
			fmt.Fprintf(&b, "    observation  %s\n", a.observation)
			action := a.action
			if a.MaskLen > 0 {
				action += ", masked"
			}
			fmt.Fprintf(&b, "    action       %s\n", action)
			if len(a.Policies) == 0 {
				b.WriteString("    policies     none registered: a trial must give one\n")
				continue
			}
			var rows strings.Builder
			tw := newTable(&rows, 2)
			for j, p := range a.Policies {
				head := "    policies     "
				if j > 0 {
					head = strings.Repeat(" ", len(head))
				}
				fmt.Fprintf(tw, "%s%s\t%s\n", head, policyLabel(p), p.Description)
			}
			tw.Flush()
			for line := range strings.Lines(rows.String()) {
				b.WriteString(strings.TrimRight(line, " \n") + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func policyLabel(p policyListing) string {
	if p.Default {
		return p.Name + " (default)"
	}
	return p.Name
}
