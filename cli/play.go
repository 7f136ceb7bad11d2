package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
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
	// humans are the agents a person plays at the terminal; log the directory of the
	// activity log of their trial ("": none).
	humans []string
	log    string
}

func newPlay(envs *environments) *cobra.Command {
	var f playFlags
	cmd := &cobra.Command{
		Use:   "play ENV",
		Short: "Play one episode of an environment and print every step",
		Long: `play runs one episode of the environment ENV, each agent playing a named policy, and
prints every agent reported in every step: one line each, or with --json one JSON object
per line. The same flags print the same episode, which is also the first episode of the
first trial of "baton run ENV" with the same flags.

With --human AGENT (repeatable), a person plays the agent at the terminal: at each of
its turns, play draws the environment and lists the agent's actions, numbered as the
page of "baton serve ui" numbers them and named, those not allowed now marked, and
reads a choice from stdin: a number or a name, in any case, an arrow key for an action
named UP, DOWN, RIGHT or LEFT, or Enter alone when one action is allowed. The episode
runs as a trial, with --log DIR writing it to an activity log; Ctrl-D or Ctrl-C (exit
status 130) stops it, the log closed and readable.

Environments:
` + envHelp(envs),
		Example:   "  baton play maze --seed 1\n  baton play maze --policy motion=forward --json\n  baton play maze --env-config '{\"procedure\": true}'\n  baton play cartpole --policy cartpole=balance\n  baton play maze --human strategy --policy motion=forward --log runs/me",
		ValidArgs: envs.names(),
		Args:      oneEnv(envs, "play"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(f.humans) > 0 {
				return playHuman(cmd.Context(), envs, args[0], f, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			if f.log != "" {
				return usagef("--log %s needs --human AGENT (baton run ENV --trials 1 --log DIR logs an episode that policies play)", f.log)
			}
			return play(cmd.Context(), envs, args[0], f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVar(&f.policies, "policy", nil, "`AGENT=POLICY`: which policy an agent plays; repeatable (the choices: baton play --help)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the environment's reset and of the random policies, an integer `N` from 0 to 18446744073709551615")
	fl.StringVar(&f.envConfig, "env-config", "", "the environment's configuration as `JSON`, or @FILE to read it from a file")
	fl.IntVar(&f.maxTicks, "max-ticks", 0, "truncate the episode after `N` environment steps; 0 keeps only the environment's own limits")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per reported agent per step instead of text")
	fl.StringArrayVar(&f.humans, "human", nil, "`AGENT`: a person plays the agent at this terminal, choosing each action by number or name; repeatable")
	fl.StringVar(&f.log, "log", "", "with --human, write the trial to an Arrow activity log in `DIR` (created; it must hold no log yet)")
	return cmd
}

// episode is an environment opened for one episode, with every agent's policy.
type episode struct {
	*opened
	// policies holds each agent's policy, in the environment's agent order.
	policies []agent.Policy
	maxTicks int
}

// setup opens the environment and builds every agent's policy: every problem with the
// flags is a usage error. The policy of the agent at index k draws from
// rand.NewPCG(seed, k), as in a trial of package runners.
func setup(envs *environments, name string, f playFlags) (*episode, error) {
	if f.maxTicks < 0 {
		return nil, usagef("--max-ticks %d: want 0 (no limit beyond the environment's own) or more", f.maxTicks)
	}
	config, err := readConfig(f.envConfig)
	if err != nil {
		return nil, err
	}
	o, err := envs.open(name, config, f.maxTicks)
	if err != nil {
		return nil, err
	}
	chosen, err := choosePolicies(o, f.policies)
	if err != nil {
		return nil, err
	}
	ep := &episode{opened: o, policies: make([]agent.Policy, len(o.agents)), maxTicks: f.maxTicks}
	for k, a := range o.agents {
		pe, err := o.entry.Policy(a.Name, chosen[k])
		if err != nil {
			return nil, usageErr(err)
		}
		p, err := pe.New(o.factory, rand.New(rand.NewPCG(f.seed, uint64(k))))
		if err == nil && p == nil {
			err = errors.New("no policy built")
		}
		if err != nil {
			return nil, fmt.Errorf("policy %s for agent %s: %w", chosen[k], a.Name, err)
		}
		ep.policies[k] = p
	}
	return ep, nil
}

// play runs one episode and prints it to w.
func play(ctx context.Context, envs *environments, name string, f playFlags, w io.Writer) error {
	ep, err := setup(envs, name, f)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var out printer = &textPrinter{w: bw, ep: ep}
	if f.json {
		out = newJSONPrinter(bw, ep)
	}
	err = episodeLoop(ctx, ep, f.seed, out)
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	return err
}

// printer writes what happened in each step.
type printer interface {
	// step prints the reports of res, the Turn after mv; mv is the zero move for the
	// reset. info is the environment's Info after the step.
	step(res env.Turn, mv move, info any) error
	// end closes the episode; cut reports that --max-ticks stopped it because the
	// environment did not.
	end(res env.Turn, cut bool) error
}

// move is the action of the acting agent in one step.
type move struct {
	// id and agent are the acting agent's id and name; "" for the reset.
	id, agent string
	raw       agent.RawAction
	// name says what the action means, as the environment's registry.Look names it on
	// the Turn the agent acted on.
	name string
}

func episodeLoop(ctx context.Context, ep *episode, seed uint64, out printer) error {
	m := ep.env
	res, err := m.Reset(seed)
	if err != nil {
		return fmt.Errorf("%s: reset: %w", ep.entry.Name, err)
	}
	if len(res.Reports) == 0 {
		return fmt.Errorf("%s: the reset reported no agent", ep.entry.Name)
	}
	if err := out.step(res, move{}, m.Info()); err != nil {
		return err
	}
	for !res.Over {
		if ep.maxTicks > 0 && res.Tick >= ep.maxTicks {
			return out.end(res, true) // an environment that ignores the limit
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("tick %d: %w", res.Tick, err)
		}
		acting := res.Acting()
		if acting == nil {
			return fmt.Errorf("tick %d: no report for the acting agent %q", res.Tick, res.Next)
		}
		id, name := acting.AgentID, acting.Agent
		k := slices.IndexFunc(ep.agents, func(a env.Spec) bool { return a.Name == name })
		if k < 0 {
			return fmt.Errorf("tick %d: the acting agent %s is not among the environment's agents", res.Tick, id)
		}
		raw, err := ep.policies[k].Act(ctx, acting.Obs, acting.Mask)
		if err != nil {
			return fmt.Errorf("tick %d: policy of %s: %w", res.Tick, id, err)
		}
		// Named before the step, while the Turn the agent acted on is valid.
		mv := move{id: id, agent: name, raw: raw, name: ep.entry.Look.ActionName(res, acting, raw)}
		tick := res.Tick
		if res, err = m.Step(id, raw); err != nil {
			return fmt.Errorf("tick %d: %w", tick, err)
		}
		if err := out.step(res, mv, m.Info()); err != nil {
			return err
		}
	}
	return out.end(res, false)
}

// returns sums the rewards of an episode by agent id and by agent name.
type returns struct {
	ids    []string // in order of first report
	byID   map[string]float64
	byName map[string]float64
}

func (r *returns) add(rep *env.Report) {
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

func (p *textPrinter) step(res env.Turn, mv move, info any) error {
	if !p.header {
		p.header = true
		if _, err := fmt.Fprintf(p.w, textRow, "tick", "acting", "action", "agent", "reward", "span", "status", "info"); err != nil {
			return err
		}
	}
	actor, action := "-", "-"
	if mv.id != "" {
		actor, action = mv.id, mv.name
	}
	desc := p.ep.entry.Look.Describe(info)
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

func status(rep *env.Report) string {
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

func (p *textPrinter) end(res env.Turn, cut bool) error {
	w := p.w
	// The returns by agent id and by agent name, aligned as one table: the rows of
	// both through one tabwriter, each heading put back before its rows.
	var rows strings.Builder
	tw := newTable(&rows, 1)
	for _, id := range p.sums.ids {
		fmt.Fprintf(tw, "  %s\t%7.3f\n", id, p.sums.byID[id])
	}
	for _, a := range p.ep.agents {
		fmt.Fprintf(tw, "  %s\t%7.3f\n", a.Name, p.sums.byName[a.Name])
	}
	tw.Flush()
	lines := strings.SplitAfter(rows.String(), "\n")
	fmt.Fprint(w, "returns by agent id:\n"+strings.Join(lines[:len(p.sums.ids)], ""))
	fmt.Fprint(w, "returns by agent:\n"+strings.Join(lines[len(p.sums.ids):], ""))
	ticks := "ticks"
	if res.Tick == 1 {
		ticks = "tick"
	}
	if cut {
		_, err := fmt.Fprintf(w, "episode cut after %d %s by --max-ticks\n", res.Tick, ticks)
		return err
	}
	// The root agent is reported last in the final step.
	last := &res.Reports[len(res.Reports)-1]
	_, err := fmt.Fprintf(w, "episode over after %d %s: %s %s\n", res.Tick, ticks, last.AgentID, status(last))
	return err
}

// jsonPrinter prints one JSON object per report.
type jsonPrinter struct {
	enc    *json.Encoder
	spaces map[string]spaces.Space // action space by agent name
	// pending holds, by agent id, the action that handed control down and waits to be
	// settled when the child's sub-episode ends.
	pending map[string]jsonAction
}

// jsonAction is an action as --json shows it: its value and its name.
type jsonAction struct {
	value any
	name  *string
}

func newJSONPrinter(w io.Writer, ep *episode) *jsonPrinter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	p := &jsonPrinter{enc: enc, spaces: map[string]spaces.Space{}, pending: map[string]jsonAction{}}
	for _, a := range ep.agents {
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
	ActionName    *string `json:"action_name"`
	Reward        float64 `json:"reward"`
	SpanTicks     int     `json:"span_ticks"`
	Terminated    bool    `json:"terminated"`
	Truncated     bool    `json:"truncated"`
	Start         bool    `json:"start"`
	Info          any     `json:"info"`
}

func (p *jsonPrinter) step(res env.Turn, mv move, info any) error {
	var action jsonAction
	actor := mv.id
	if actor != "" {
		action = jsonAction{value: actionValue(mv.raw, p.spaces[mv.agent]), name: &mv.name}
		own := slices.ContainsFunc(res.Reports, func(r env.Report) bool { return r.AgentID == actor && !r.Start })
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
		var a jsonAction
		switch {
		case rep.Start:
		case rep.AgentID == actor:
			a = action
		default:
			a = p.pending[rep.AgentID]
			delete(p.pending, rep.AgentID)
		}
		line.Action, line.ActionName = a.value, a.name
		if err := p.enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

func (p *jsonPrinter) end(env.Turn, bool) error { return nil }

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
