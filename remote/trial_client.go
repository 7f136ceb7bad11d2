package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
)

// The methods of TrialService, as errors name them.
const (
	methodStart  = "TrialService/Start"
	methodWatch  = "TrialService/Watch"
	methodStop   = "TrialService/Stop"
	methodList   = "TrialService/List"
	methodReward = "TrialService/Reward"
)

// TrialClient is a client of a trial server: the remote form of a
// runners.Controller. It is safe for concurrent use; Close closes the connection.
//
// A Spec crosses the wire with its actors by policy name: a runners.Named policy, or
// a remote agent written as a policy name that is a target, "grpc://host:port[/AGENT]"
// or "grpcs://...", which the server dials (if it allows remote actors), or a client
// actor (ClientActor), which a client plays through Pending and ClientAct. Policy
// values (runners.Value, runners.PerTrial) cannot cross and are refused.
type TrialClient struct {
	c   *conn
	api pb.TrialServiceClient
}

// DialTrials connects to the trial server at target and lists its trials, under
// the call deadline, so that a wrong address or key fails now.
func DialTrials(ctx context.Context, target string, opts ...DialOption) (*TrialClient, error) {
	c, _, err := dial(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	t := &TrialClient{c: c, api: pb.NewTrialServiceClient(c.cc)}
	if _, err := t.List(ctx); err != nil {
		_ = c.close()
		return nil, err
	}
	return t, nil
}

// IsRemoteTarget reports whether a policy name is a remote agent's target
// (grpc:// or grpcs://).
func IsRemoteTarget(policy string) bool {
	return strings.HasPrefix(policy, "grpc://") || strings.HasPrefix(policy, "grpcs://")
}

func trialSpecProto(s runners.Spec) (*pb.TrialSpec, error) {
	p := &pb.TrialSpec{Id: s.ID, Env: s.Env, Config: string(s.Config), Seed: s.Seed, Episodes: int64(s.Episodes), MaxTicks: int64(s.MaxTicks)}
	if len(s.Actors) > 0 {
		p.Actors = make(map[string]*pb.Actor, len(s.Actors))
	}
	for _, name := range slices.Sorted(maps.Keys(s.Actors)) {
		a := s.Actors[name]
		switch {
		case a.Value != nil || a.New != nil:
			return nil, fmt.Errorf("%w: the actor of agent %s is a policy value, which cannot cross the wire: name a registered policy or a remote agent", ErrConfig, name)
		case IsRemoteTarget(a.Policy):
			p.Actors[name] = &pb.Actor{Choice: &pb.Actor_Remote{Remote: a.Policy}}
		case strings.HasPrefix(a.Policy, clientPrefix):
			c, err := clientActorProto(name, a.Policy)
			if err != nil {
				return nil, err
			}
			p.Actors[name] = &pb.Actor{Choice: &pb.Actor_Client{Client: c}}
		default:
			p.Actors[name] = &pb.Actor{Choice: &pb.Actor_Policy{Policy: a.Policy}}
		}
	}
	return p, nil
}

// Start starts a trial of spec and returns its id, as Controller.Start does.
func (t *TrialClient) Start(ctx context.Context, spec runners.Spec) (string, error) {
	ids, err := t.start(ctx, spec, &pb.StartRequest{Trials: 1})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// StartWatched starts one trial of spec watched from its first step, as
// runners.Controller.StartWatched does: it draws its environment for people from its
// reset on, waiting pace (0 to runners.MaxFramePace, in milliseconds) after each
// step, for the server's watchers (baton serve ui's /ui/frame).
func (t *TrialClient) StartWatched(ctx context.Context, spec runners.Spec, pace time.Duration) (string, error) {
	ids, err := t.start(ctx, spec, &pb.StartRequest{Trials: 1, Watched: true, WatchPaceMs: pace.Milliseconds()})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// StartCampaign starts trials of spec and returns their ids: trial i has the id
// "ID-i" ("ENV-i" when spec.ID is "") and the seed env.DeriveSeed(spec.Seed, i),
// as a runners.Campaign's trials do.
func (t *TrialClient) StartCampaign(ctx context.Context, spec runners.Spec, trials int) ([]string, error) {
	if trials < 1 {
		return nil, fmt.Errorf("%w: StartCampaign: %d trials, want 1 or more", ErrConfig, trials)
	}
	return t.start(ctx, spec, &pb.StartRequest{Trials: int64(trials)})
}

// start sends req with spec and checks that the server started req.trials trials.
func (t *TrialClient) start(ctx context.Context, spec runners.Spec, req *pb.StartRequest) ([]string, error) {
	p, err := trialSpecProto(spec)
	if err != nil {
		return nil, err
	}
	req.Spec = p
	trials := int(req.GetTrials())
	var resp *pb.StartResponse
	err = t.c.call(ctx, methodStart, "environment "+spec.Env, func(ctx context.Context) error {
		var err error
		resp, err = t.api.Start(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(resp.GetIds()) != trials {
		return nil, fmt.Errorf("%w: trial server at %s started %d trials, asked for %d", ErrMismatch, t.c.addr, len(resp.GetIds()), trials)
	}
	return resp.GetIds(), nil
}

var statesGo = map[pb.TrialState]event.State{
	pb.TrialState_TRIAL_STATE_PENDING: event.Pending,
	pb.TrialState_TRIAL_STATE_RUNNING: event.Running,
	pb.TrialState_TRIAL_STATE_ENDED:   event.Ended,
	pb.TrialState_TRIAL_STATE_STOPPED: event.Stopped,
	pb.TrialState_TRIAL_STATE_FAILED:  event.Failed,
}

// TrialChange is a state change of a remote trial; Result is set on its final
// change.
type TrialChange struct {
	event.StateChange
	Result *runners.Result
}

// Watch iterates over the state changes of the trials of ids (every trial the key
// grants when there is none): those that happened already, then each as it happens,
// until every one has finished, ctx is done, or the loop breaks. An error (the
// connection lost, an unknown trial) is yielded last. A watch has no call deadline:
// ctx bounds it.
func (t *TrialClient) Watch(ctx context.Context, ids ...string) iter.Seq2[TrialChange, error] {
	return func(yield func(TrialChange, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := t.api.Watch(ctx, &pb.WatchRequest{Ids: ids})
		if err != nil {
			yield(TrialChange{}, t.c.fail(ctx, methodWatch, "", err, 1))
			return
		}
		for {
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(TrialChange{}, t.c.fail(ctx, methodWatch, "", err, 1))
				return
			}
			if !yield(changeGo(msg), nil) {
				return
			}
		}
	}
}

// TrialError is the failure, or the cause of the stop, of a remote trial: the
// server's message.
type TrialError struct{ Message string }

func (e *TrialError) Error() string { return e.Message }

func changeGo(m *pb.TrialStateChange) TrialChange {
	c := TrialChange{StateChange: event.StateChange{Trial: m.GetTrial(), State: statesGo[m.GetState()]}}
	if m.GetError() != "" {
		c.Err = &TrialError{Message: m.GetError()}
	}
	if r := m.GetResult(); r != nil {
		tot := r.GetTotals()
		res := &runners.Result{
			ID: c.Trial, State: c.State, Err: c.Err, Steps: r.GetSteps(), FirstEpisode: int(r.GetFirstEpisode()),
			Totals: runners.Totals{Episodes: int(tot.GetEpisodes()), Complete: int(tot.GetComplete()), Successes: int(tot.GetSuccesses()), Returns: tot.GetReturns()},
		}
		info := &event.TrialInfo{ID: c.Trial, Index: -1, DefinesSuccess: r.GetDefinesSuccess()}
		for _, name := range r.GetAgents() {
			info.Agents = append(info.Agents, env.Spec{Name: name})
		}
		res.Info = info
		res.Episodes = episodesGo(r.GetEpisodes())
		c.Result = res
	}
	return c
}

// Wait waits until the trial id finishes and returns its result. The result's Info
// names the agents without their spaces; Err is a *TrialError.
func (t *TrialClient) Wait(ctx context.Context, id string) (runners.Result, error) {
	for c, err := range t.Watch(ctx, id) {
		if err != nil {
			return runners.Result{}, err
		}
		if c.Result != nil {
			return *c.Result, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return runners.Result{}, err
	}
	return runners.Result{}, fmt.Errorf("%w: trial server at %s: the watch of %s ended before the trial did", ErrMismatch, t.c.addr, id)
}

// Stop stops trials, pending or running.
func (t *TrialClient) Stop(ctx context.Context, ids ...string) error {
	return t.c.call(ctx, methodStop, "trials "+strings.Join(ids, ", "), func(ctx context.Context) error {
		_, err := t.api.Stop(ctx, &pb.StopRequest{Ids: ids})
		return err
	})
}

// List returns the status of the trials the server holds (those the key grants),
// in the order they were started, page after page (a call each, each under the call
// deadline). Status.Err is a *TrialError; Seq, Ahead and Info are not set.
func (t *TrialClient) List(ctx context.Context) ([]runners.Status, error) {
	var out []runners.Status
	req := &pb.ListRequest{}
	for {
		var resp *pb.ListResponse
		err := t.c.call(ctx, methodList, "", func(ctx context.Context) error {
			var err error
			resp, err = t.api.List(ctx, req)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, s := range resp.GetTrials() {
			st := runners.Status{ID: s.GetId(), Env: s.GetEnv(), State: statesGo[s.GetState()], Episode: int(s.GetEpisode()), Tick: int(s.GetTick())}
			if s.GetError() != "" {
				st.Err = &TrialError{Message: s.GetError()}
			}
			out = append(out, st)
		}
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

// Reward gives a running trial a reward from outside, as Controller.Reward does
// (Tick runners.Now for the agent's next step).
func (t *TrialClient) Reward(ctx context.Context, id string, fb runners.Feedback) error {
	req := &pb.RewardRequest{Trial: id, AgentId: fb.AgentID, Value: fb.Value, Source: fb.Source}
	if fb.Tick == runners.Now {
		req.NextStep = true
	} else {
		req.Episode, req.Tick = int64(fb.Episode), int64(fb.Tick)
	}
	return t.c.call(ctx, methodReward, "trial "+id, func(ctx context.Context) error {
		_, err := t.api.Reward(ctx, req)
		return err
	})
}

// Close closes the connection.
func (t *TrialClient) Close() error { return t.c.close() }
