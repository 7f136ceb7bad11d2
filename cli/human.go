package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/human"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
)

// playHuman plays the episode of baton play --human: a trial of the runner in which a
// person, typing into in and reading w, plays the agents f.humans and the others play
// their policies. It ends with the trial's state and returns, and the log written.
func playHuman(ctx context.Context, envs *environments, name string, f playFlags, in io.Reader, w io.Writer) error {
	var bad []string
	if f.json {
		bad = append(bad, "--json: a person plays in text; drop --json or --human")
	}
	if f.maxTicks < 0 {
		bad = append(bad, fmt.Sprintf("--max-ticks %d: want 0 (no limit beyond the environment's own) or more", f.maxTicks))
	}
	if len(bad) > 0 {
		return usagef("%s", strings.Join(bad, "; "))
	}
	config, err := readConfig(f.envConfig)
	if err != nil {
		return err
	}
	o, err := envs.open(name, config, f.maxTicks)
	if err != nil {
		return err
	}
	names := o.agentNames()
	humans := map[string]bool{}
	for _, a := range f.humans {
		if !slices.Contains(names, a) {
			return usageErr(&registry.NameError{Kind: registry.ErrUnknownAgent, Name: a, Env: name, Choices: names}, "--human "+a)
		}
		humans[a] = true
	}
	for _, p := range f.policies {
		if a, _, _ := strings.Cut(p, "="); humans[a] {
			return usagef("--policy %s: agent %s is played by a person (--human %s); give it one or the other", p, a, a)
		}
	}
	policies, err := choosePolicies(o, f.policies)
	if err != nil {
		return err
	}

	input := human.NewInput(in)
	defer input.Close()
	spec := runners.Spec{Env: name, Config: config, Actors: map[string]runners.Actor{}, Seed: f.seed, Episodes: 1, MaxTicks: f.maxTicks}
	for i, a := range o.agents {
		if !humans[a.Name] {
			spec.Actors[a.Name] = runners.Named(policies[i])
			continue
		}
		p, err := human.New(a, input, w)
		if err != nil {
			return usageErr(err, "--human "+a.Name)
		}
		spec.Actors[a.Name] = runners.Value(p)
		policies[i] = "human"
	}
	opts := []runners.CampaignOption{runners.WithTrials(1), runners.WithWorkers(1)}
	var ds *datalog.Dataset
	if f.log != "" {
		if err := newLogDir(f.log); err != nil {
			return err
		}
		if ds, err = datalog.NewDataset(f.log); err != nil {
			return fmt.Errorf("--log %s: %w", f.log, err)
		}
		defer ds.Close() // a second Close does nothing
		opts = append(opts, runners.WithWorkerSinks(ds.WorkerSinks()))
	}
	var res *runners.Result
	opts = append(opts, runners.WithProgress(func(p runners.Progress) { res = p.Result }))
	c, err := runners.NewCampaign(envs.reg, spec, opts...)
	if err != nil {
		return err
	}
	_, err = c.Run(ctx)
	if ctx.Err() != nil {
		// The end below says the trial was interrupted: the cancellation is no error
		// to report again.
		err = withoutCause(err, ctx.Err())
	}
	if ds != nil {
		if cerr := ds.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("writing the log: %w", cerr))
		}
	}
	if werr := writeHumanEnd(w, o, policies, res, ds); werr != nil && err == nil {
		err = fmt.Errorf("writing the output: %w", werr)
	}
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return &reportedError{err: fmt.Errorf("interrupted: %w", ctx.Err())}
	case res != nil && res.State == event.Failed:
		return res.Err
	}
	return nil
}

// writeHumanEnd writes how the trial of baton play --human ended: its state, the
// episode's length and success, each agent's return and its policy, and the log.
func writeHumanEnd(w io.Writer, o *opened, policies []string, res *runners.Result, ds *datalog.Dataset) error {
	var b strings.Builder
	b.WriteString("\n")
	if res == nil {
		b.WriteString("the trial did not run\n")
	} else {
		var ep runners.EpisodeResult
		if len(res.Episodes) > 0 {
			ep = res.Episodes[0]
		}
		ticks := plural(ep.Ticks, "tick", "ticks")
		switch {
		case res.State == event.Ended && res.Info != nil && res.Info.DefinesSuccess:
			outcome := "no success"
			if ep.Success {
				outcome = "success"
			}
			fmt.Fprintf(&b, "trial %s ended: episode over after %s, %s\n", res.ID, ticks, outcome)
		case res.State == event.Ended:
			fmt.Fprintf(&b, "trial %s ended: episode over after %s\n", res.ID, ticks)
		default:
			fmt.Fprintf(&b, "trial %s %s after %s: %s\n", res.ID, strings.ToLower(res.State.String()), ticks, oneLine(stopReason(res.Err)))
		}
		if ep.Returns != nil {
			b.WriteString("returns:\n")
			tw := newTable(&b, 1)
			for i, a := range o.agents {
				fmt.Fprintf(tw, "  %s\t%7.3f  (%s)\n", a.Name, ep.Returns[i], policies[i])
			}
			tw.Flush()
		}
	}
	if ds != nil {
		fmt.Fprintf(&b, "log: %s, %s\n", ds.Dir(), plural(int(ds.Stats().Rows), "row", "rows"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// stopReason says why a trial stopped or failed, without the runner's wrapping of a
// person who quit.
func stopReason(err error) string {
	switch {
	case err == nil:
		return "no reason given"
	case errors.Is(err, human.ErrQuit):
		return "the input ended"
	case errors.Is(err, context.Canceled):
		return "interrupted"
	}
	return err.Error()
}

// withoutCause returns err less the errors, among those it joins, that are cause.
func withoutCause(err, cause error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var rest []error
		for _, e := range j.Unwrap() {
			if e = withoutCause(e, cause); e != nil {
				rest = append(rest, e)
			}
		}
		return errors.Join(rest...)
	}
	if errors.Is(err, cause) {
		return nil
	}
	return err
}
