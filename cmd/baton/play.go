package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/spaces"
	"github.com/spf13/cobra"
)

// playFlags are the flags of baton play.
type playFlags struct {
	policies  []string
	seed      uint64
	envConfig string
	maxTicks  int
	json      bool
}

func newPlay(envs table) *cobra.Command {
	var f playFlags
	var help strings.Builder
	for _, e := range envs {
		fmt.Fprintf(&help, "\n  %s: %s\n", e.name, e.summary)
		if ep, err := e.open(nil, hrl.Config{}); err == nil {
			for _, a := range ep.agents {
				fmt.Fprintf(&help, "    --policy %s=%s (default %s)\n", a.agent, strings.Join(policyNames(a), "|"), a.fallback)
			}
		}
		fmt.Fprintf(&help, "    --env-config %s\n", e.configFields)
	}
	cmd := &cobra.Command{
		Use:   "play ENV",
		Short: "Play one episode of an environment and print every step",
		Long: `play runs one episode of the environment ENV, each agent playing a named policy, and
prints every agent reported in every step: one line each, or with --json one JSON object
per line. The same flags print the same episode.

Environments:
` + help.String(),
		Example:   "  baton play maze --seed 1\n  baton play maze --policy motion=forward --json\n  baton play maze --env-config '{\"procedure\": true}'",
		ValidArgs: envs.names(),
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("play needs an environment (%s)", choices(envs.names()))
			case len(args) > 1:
				return usagef("play takes one environment, got %q (%s)", args, choices(envs.names()))
			}
			if _, ok := envs.lookup(args[0]); !ok {
				return usagef("unknown environment %q (%s)", args[0], choices(envs.names()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			e, _ := envs.lookup(args[0])
			return play(cmd.Context(), e, f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVar(&f.policies, "policy", nil, "`AGENT=POLICY`: which policy an agent plays; repeatable (the choices: baton play --help)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the environment's reset and of the random policies, an integer `N` from 0 to 18446744073709551615")
	fl.StringVar(&f.envConfig, "env-config", "", "the environment's configuration as `JSON`, or @FILE to read it from a file")
	fl.IntVar(&f.maxTicks, "max-ticks", 0, "truncate the episode after `N` environment steps; 0 keeps only the environment's own limits")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per reported agent per step instead of text")
	return cmd
}

func policyNames(a agentPolicies) []string {
	names := make([]string, 0, len(a.policies))
	for n := range a.policies {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// setup opens the environment and builds every agent's policy: every problem with the
// flags is a usage error.
func setup(e environment, f playFlags) (*episode, map[string]agent.Policy, error) {
	if f.maxTicks < 0 {
		return nil, nil, usagef("--max-ticks %d: want 0 (no limit beyond the environment's own) or more", f.maxTicks)
	}
	config := []byte(f.envConfig)
	if path, ok := strings.CutPrefix(f.envConfig, "@"); ok {
		var err error
		if config, err = os.ReadFile(path); err != nil {
			return nil, nil, usagef("--env-config: %v", err)
		}
	}
	ep, err := e.open(config, hrl.Config{MaxTicks: f.maxTicks})
	if err != nil {
		if _, ok := errors.AsType[*configError](err); ok {
			return nil, nil, usagef("bad --env-config for %s: %v (%s)", e.name, err, e.configFields)
		}
		return nil, nil, fmt.Errorf("%s: %w", e.name, err)
	}

	chosen := make(map[string]string, len(ep.agents))
	var agentNames []string
	for _, a := range ep.agents {
		agentNames = append(agentNames, a.agent)
	}
	for _, p := range f.policies {
		name, policy, ok := strings.Cut(p, "=")
		if !ok || name == "" || policy == "" {
			return nil, nil, usagef("--policy %q: want AGENT=POLICY (agents of %s: %s)", p, e.name, strings.Join(slices.Sorted(slices.Values(agentNames)), ", "))
		}
		i := slices.IndexFunc(ep.agents, func(a agentPolicies) bool { return a.agent == name })
		if i < 0 {
			return nil, nil, usagef("unknown agent %q in --policy %s for %s (%s)", name, p, e.name, choices(agentNames))
		}
		if _, ok := ep.agents[i].policies[policy]; !ok {
			return nil, nil, usagef("unknown policy %q for agent %q (%s)", policy, name, choices(policyNames(ep.agents[i])))
		}
		if prev, ok := chosen[name]; ok && prev != policy {
			return nil, nil, usagef("--policy gives agent %q two policies, %s and %s (choose one)", name, prev, policy)
		}
		chosen[name] = policy
	}

	policies := make(map[string]agent.Policy, len(ep.agents))
	for k, a := range ep.agents {
		name, ok := chosen[a.agent]
		if !ok {
			name = a.fallback
		}
		p, err := a.policies[name](rand.New(rand.NewPCG(f.seed, uint64(k))))
		if err != nil {
			return nil, nil, fmt.Errorf("policy %s for agent %s: %w", name, a.agent, err)
		}
		policies[a.agent] = p
	}
	return ep, policies, nil
}

// play runs one episode and prints it to w.
func play(ctx context.Context, e environment, f playFlags, w io.Writer) error {
	ep, policies, err := setup(e, f)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var out printer = &textPrinter{w: bw, ep: ep}
	if f.json {
		out = newJSONPrinter(bw, ep)
	}
	err = episodeLoop(ctx, ep, policies, f.seed, out)
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	return err
}

// printer writes what happened in each step.
type printer interface {
	// step prints the reports of res. actor is "" for the reset; raw is then unused.
	step(res hrl.Result, actor, actorName string, raw agent.RawAction, info any) error
	// end closes the episode.
	end(res hrl.Result) error
}

func episodeLoop(ctx context.Context, ep *episode, policies map[string]agent.Policy, seed uint64, out printer) error {
	res := ep.rt.Reset(seed)
	if err := out.step(res, "", "", agent.RawAction{}, ep.rt.Info()); err != nil {
		return err
	}
	for !res.Over {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("tick %d: %w", res.Tick, err)
		}
		acting := res.Acting()
		if acting == nil {
			return fmt.Errorf("tick %d: no report for the acting agent %q", res.Tick, res.Next)
		}
		id, name := acting.AgentID, acting.Agent
		raw, err := policies[name].Act(ctx, acting.Obs, acting.Mask)
		if err != nil {
			return fmt.Errorf("tick %d: policy of %s: %w", res.Tick, id, err)
		}
		tick := res.Tick
		if res, err = ep.rt.Step(id, raw); err != nil {
			return fmt.Errorf("tick %d: %w", tick, err)
		}
		if err := out.step(res, id, name, raw, ep.rt.Info()); err != nil {
			return err
		}
	}
	return out.end(res)
}

// returns sums the rewards of an episode by agent id and by agent name.
type returns struct {
	ids    []string // in order of first report
	byID   map[string]float64
	byName map[string]float64
}

func (r *returns) add(rep *hrl.Report) {
	if r.byID == nil {
		r.byID, r.byName = map[string]float64{}, map[string]float64{}
	}
	if _, ok := r.byID[rep.AgentID]; !ok {
		r.ids = append(r.ids, rep.AgentID)
	}
	r.byID[rep.AgentID] += rep.Reward
	r.byName[rep.Agent] += rep.Reward
}

// textPrinter prints one aligned line per report and a summary.
type textPrinter struct {
	w      io.Writer
	ep     *episode
	header bool
	sums   returns
}

const textRow = "%4v  %-11s %-8s %-11s %7s %5v  %-10s  %s\n"

func (p *textPrinter) step(res hrl.Result, actor, actorName string, raw agent.RawAction, info any) error {
	if !p.header {
		p.header = true
		if _, err := fmt.Fprintf(p.w, textRow, "tick", "acting", "action", "agent", "reward", "span", "status", "info"); err != nil {
			return err
		}
	}
	action := "-"
	if actor == "" {
		actor = "-"
	} else if p.ep.action != nil {
		action = p.ep.action(actorName, raw)
	} else {
		action = raw.String()
	}
	desc := p.ep.describe(info)
	for i := range res.Reports {
		rep := &res.Reports[i]
		p.sums.add(rep)
		if _, err := fmt.Fprintf(p.w, textRow, res.Tick, actor, action, rep.AgentID,
			fmt.Sprintf("%.3f", rep.Reward), rep.SpanTicks, status(rep), desc); err != nil {
			return err
		}
	}
	return nil
}

func status(rep *hrl.Report) string {
	var s []string
	if rep.Start {
		s = append(s, "start")
	}
	if rep.Terminated {
		s = append(s, "terminated")
	}
	if rep.Truncated {
		s = append(s, "truncated")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, "+")
}

func (p *textPrinter) end(res hrl.Result) error {
	w := p.w
	width := 0
	for _, id := range p.sums.ids {
		width = max(width, len(id))
	}
	fmt.Fprintln(w, "returns by agent id:")
	for _, id := range p.sums.ids {
		fmt.Fprintf(w, "  %-*s %7.3f\n", width, id, p.sums.byID[id])
	}
	fmt.Fprintln(w, "returns by agent:")
	for _, a := range p.ep.agents {
		fmt.Fprintf(w, "  %-*s %7.3f\n", width, a.agent, p.sums.byName[a.agent])
	}
	// The root agent is reported last in the final step.
	last := &res.Reports[len(res.Reports)-1]
	ticks := "ticks"
	if res.Tick == 1 {
		ticks = "tick"
	}
	_, err := fmt.Fprintf(w, "episode over after %d %s: %s %s\n", res.Tick, ticks, last.AgentID, status(last))
	return err
}

// jsonPrinter prints one JSON object per report.
type jsonPrinter struct {
	enc    *json.Encoder
	spaces map[string]spaces.Space // action space by agent name
	// pending holds, by agent id, the action that handed control down and waits to be
	// settled when the child's sub-episode ends.
	pending map[string]any
}

func newJSONPrinter(w io.Writer, ep *episode) *jsonPrinter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	p := &jsonPrinter{enc: enc, spaces: map[string]spaces.Space{}, pending: map[string]any{}}
	for _, a := range ep.rt.Agents() {
		p.spaces[a.Name] = a.ActionSpace
	}
	return p
}

// jsonReport is one line of --json output; see the package documentation.
type jsonReport struct {
	Tick          int     `json:"tick"`
	ActingAgentID *string `json:"acting_agent_id"`
	AgentID       string  `json:"agent_id"`
	Agent         string  `json:"agent"`
	ParentAgentID *string `json:"parent_agent_id"`
	Action        any     `json:"action"`
	Reward        float64 `json:"reward"`
	SpanTicks     int     `json:"span_ticks"`
	Terminated    bool    `json:"terminated"`
	Truncated     bool    `json:"truncated"`
	Start         bool    `json:"start"`
	Info          any     `json:"info"`
}

func (p *jsonPrinter) step(res hrl.Result, actor, actorName string, raw agent.RawAction, info any) error {
	var action any
	if actor != "" {
		action = actionValue(raw, p.spaces[actorName])
		own := slices.ContainsFunc(res.Reports, func(r hrl.Report) bool { return r.AgentID == actor && !r.Start })
		if !own {
			p.pending[actor] = action // handed control down: settled later
		}
	}
	for i := range res.Reports {
		rep := &res.Reports[i]
		line := jsonReport{
			Tick:          res.Tick,
			ActingAgentID: optional(actor),
			AgentID:       rep.AgentID,
			Agent:         rep.Agent,
			ParentAgentID: optional(rep.ParentID),
			Reward:        rep.Reward,
			SpanTicks:     rep.SpanTicks,
			Terminated:    rep.Terminated,
			Truncated:     rep.Truncated,
			Start:         rep.Start,
			Info:          info,
		}
		switch {
		case rep.Start:
		case rep.AgentID == actor:
			line.Action = action
		default:
			line.Action = p.pending[rep.AgentID]
			delete(p.pending, rep.AgentID)
		}
		if err := p.enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

func (p *jsonPrinter) end(hrl.Result) error { return nil }

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// actionValue is the raw action as JSON shows it: an integer for a Discrete space, an
// array otherwise. It copies, since the policy may reuse the action's slices.
func actionValue(raw agent.RawAction, space spaces.Space) any {
	if space == nil {
		return raw.Int
	}
	switch v := raw.Value(space).(type) {
	case []int64:
		return slices.Clone(v)
	case []float32:
		return slices.Clone(v)
	default:
		return v
	}
}
