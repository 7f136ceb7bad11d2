package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/replay"
	"github.com/spf13/cobra"
)

func newReplay(envs *environments) *cobra.Command {
	var (
		asJSON bool
		most   int
	)
	cmd := &cobra.Command{
		Use:   "replay DIR",
		Short: "Replay the trials of an activity log and report every step that comes out differently",
		Long: `replay re-runs every trial of the activity log in DIR from its logged environment,
configuration, seed, episodes and tick limit, each agent playing the actions the log
holds for it, and compares every step with the log: observation, action mask, the
environment's reward, the end flags, the span of the decision and the order of the
reports (rewards from other sources are not replayed). It prints every difference, one
line each (trial, episode, tick, agent id, field, the logged and the replayed value),
then the trials whose log is incomplete (a killed writer lost their last rows or their
end record: each is replayed as far as its rows go, which is no difference), then the
trials and steps compared. A deterministic environment replayed from an intact or a
recovered log shows no difference; any difference makes the exit status 1, and so do
trials that have step rows but no row in the log's trials table (a truncated or lost
_trials: they cannot be replayed, and are listed), and a damaged part (named).

The log's environments must be registered in this baton (` + strings.Join(envs.names(), ", ") + `).`,
		Example: "  baton replay runs/maze\n  baton replay runs/maze --max-mismatches 5 --json",
		Args:    oneLog("replay"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if most < 0 {
				return usagef("--max-mismatches %d: want 0 (no limit) or more", most)
			}
			return replayLog(cmd.Context(), envs, args[0], most, asJSON, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.IntVar(&most, "max-mismatches", 0, "stop comparing a trial after `N` differences (a trial that diverged differs at every later step); 0 means no limit")
	fl.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return cmd
}

// replayReport is what baton replay prints; see the package documentation for its
// JSON form.
type replayReport struct {
	Trials     int                `json:"trials"`
	Steps      int64              `json:"steps"`
	Skipped    []string           `json:"skipped"`
	Diverged   []string           `json:"diverged"`
	Incomplete []replayIncomplete `json:"incomplete"`
	Mismatches []replayMismatch   `json:"mismatches"`
	// Unlisted are the trials with step rows but no row in the trials table.
	Unlisted []string `json:"unlisted"`
}

// replayIncomplete is a datalog.Incomplete in JSON.
type replayIncomplete struct {
	Trial   string `json:"trial"`
	State   string `json:"state"`
	Episode *int   `json:"episode"`
	Tick    *int   `json:"tick"`
	AgentID string `json:"agent_id"`
}

// replayMismatch is a datalog.Mismatch in JSON.
type replayMismatch struct {
	Trial    string `json:"trial"`
	Episode  int    `json:"episode"`
	Tick     int    `json:"tick"`
	Index    int    `json:"index"`
	AgentID  string `json:"agent_id"`
	Field    string `json:"field"`
	Element  *int   `json:"element"`
	Logged   string `json:"logged"`
	Replayed string `json:"replayed"`
}

func replayLog(ctx context.Context, envs *environments, dir string, most int, asJSON bool, w io.Writer) error {
	if _, err := openLog("replay", dir); err != nil {
		return err
	}
	rep, err := replay.Run(ctx, dir, envs.reg, datalog.WithMaxMismatches(most))
	var unlisted error
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case errors.Is(err, datalog.ErrUnlisted) && rep != nil:
		// The report of what was replayed, then the error.
		unlisted = fmt.Errorf("replay %s: %s", dir, strings.TrimPrefix(err.Error(), "datalog: "))
	case errors.Is(err, datalog.ErrReplay):
		if ne, ok := errors.AsType[*registry.NameError](err); ok && errors.Is(ne.Kind, registry.ErrUnknownEnv) {
			return &usageError{msg: fmt.Sprintf("replay %s: the log holds trials of environment %q, which %s does not have (%s)",
				dir, ne.Name, envs.prog, choices(ne.Choices)), err: err}
		}
		return &usageError{msg: fmt.Sprintf("replay %s: %s", dir, strings.TrimPrefix(err.Error(), "datalog: ")), err: err}
	case err != nil:
		return logError("replay", dir, err)
	}

	out := replayReport{Trials: rep.Trials, Steps: rep.Steps, Skipped: append([]string{}, rep.Skipped...),
		Diverged: append([]string{}, rep.Diverged...), Incomplete: []replayIncomplete{}, Mismatches: []replayMismatch{},
		Unlisted: append([]string{}, rep.Unlisted...)}
	for _, in := range rep.Incomplete {
		ji := replayIncomplete{Trial: in.Trial, State: in.State.String(), AgentID: in.AgentID}
		if in.Episode >= 0 {
			ji.Episode, ji.Tick = &in.Episode, &in.Tick
		}
		out.Incomplete = append(out.Incomplete, ji)
	}
	for _, m := range rep.Mismatches {
		jm := replayMismatch{Trial: m.Trial, Episode: m.Episode, Tick: m.Tick, Index: m.Index, AgentID: m.AgentID, Field: m.Field, Logged: m.Logged, Replayed: m.Replayed}
		if m.Element >= 0 {
			jm.Element = &m.Element
		}
		out.Mismatches = append(out.Mismatches, jm)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		for _, m := range rep.Mismatches {
			b.WriteString(oneLine(m.String()))
			b.WriteByte('\n')
		}
		if len(out.Skipped) > 0 {
			fmt.Fprintf(&b, "skipped %s rejected before they ran: %s\n", plural(len(out.Skipped), "trial", "trials"), strings.Join(out.Skipped, ", "))
		}
		if n := len(rep.Incomplete); n > 0 {
			ids := make([]string, n)
			for i, in := range rep.Incomplete {
				ids[i] = in.String()
			}
			fmt.Fprintf(&b, "%s incomplete (the log lost their last rows or end record; replayed as far as their rows go): %s\n",
				plural(n, "trial", "trials"), strings.Join(ids, ", "))
		}
		verdict := "no mismatch"
		if n := len(out.Mismatches); n > 0 {
			verdict = fmt.Sprintf("%s in %s", plural(n, "mismatch", "mismatches"), plural(len(out.Diverged), "trial", "trials"))
		}
		if n := len(out.Incomplete); n > 0 {
			verdict += fmt.Sprintf("; %s incomplete", plural(n, "trial", "trials"))
		}
		if n := len(out.Unlisted); n > 0 {
			verdict += fmt.Sprintf("; %s not in the trials table, not replayed", plural(n, "trial", "trials"))
		}
		fmt.Fprintf(&b, "replayed %s, %s steps: %s\n", plural(out.Trials, "trial", "trials"), group(out.Steps), verdict)
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	if n := len(out.Mismatches); n > 0 {
		return errors.Join(fmt.Errorf("replay %s: %s in %d of %s", dir, plural(n, "mismatch", "mismatches"), len(out.Diverged), plural(out.Trials, "trial", "trials")), unlisted)
	}
	return unlisted
}
