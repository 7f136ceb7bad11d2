package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
)

// The client actors' methods of TrialService, as errors name them.
const (
	methodPending   = "TrialService/Pending"
	methodClientAct = "TrialService/ClientAct"
	methodEpisodes  = "TrialService/Episodes"
)

// clientPrefix starts the policy name by which a Spec sent through a TrialClient
// names a client actor (see ClientActor).
const clientPrefix = "client://"

// ClientActor chooses, in a Spec that a TrialClient starts, a client actor for an
// agent: the trial waits for the agent's actions from a client (TrialClient.Pending
// and ClientAct, or the same calls over JSON), up to timeout each (0 waits), and then
// lets defaultPolicy (one of the agent's registered policies; "" for none) act, or
// takes defaultAction. A trial whose client has not acted for the server's idle
// timeout stops (WithClientIdleTimeout; 10 minutes by default). The actor travels as
// a policy name that starts with "client://" (with "&idle_timeout_ms=N" appended, it
// asks for a shorter idle timeout).
func ClientActor(timeout time.Duration, defaultAction int64, defaultPolicy string) runners.Actor {
	q := url.Values{}
	q.Set("timeout_ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	q.Set("default_action", strconv.FormatInt(defaultAction, 10))
	if defaultPolicy != "" {
		q.Set("default_policy", defaultPolicy)
	}
	return runners.Named(clientPrefix + "?" + q.Encode())
}

// clientActorProto reads the policy name of ClientActor.
func clientActorProto(name, policy string) (*pb.ClientActor, error) {
	rest, ok := strings.CutPrefix(policy, clientPrefix)
	if !ok {
		return nil, nil
	}
	q, err := url.ParseQuery(strings.TrimPrefix(rest, "?"))
	if err != nil {
		return nil, fmt.Errorf("%w: the client actor of agent %s: %v", ErrConfig, name, err)
	}
	c := &pb.ClientActor{DefaultPolicy: q.Get("default_policy")}
	for key, dst := range map[string]*int64{"timeout_ms": &c.TimeoutMs, "default_action": &c.DefaultAction, "idle_timeout_ms": &c.IdleTimeoutMs} {
		if v := q.Get(key); v != "" {
			if *dst, err = strconv.ParseInt(v, 10, 64); err != nil {
				return nil, fmt.Errorf("%w: the client actor of agent %s: %s=%q is not an integer", ErrConfig, name, key, v)
			}
		}
	}
	return c, nil
}

// ClientTurn is what TrialClient.Pending shows of a client actor's agent.
type ClientTurn struct {
	// State is the trial's state; Err why it failed or stopped (a *TrialError).
	State event.State
	Err   error
	// Acting says that the agent is to act: the fields below describe its turn.
	// Otherwise Episode and Tick are where the trial is.
	Acting        bool
	AgentID       string
	Episode, Tick int
	Obs           []float32
	Frame         env.Frame // Scene as a json.RawMessage
	Actions       []ActionChoice
	Remaining     time.Duration // before the default acts; 0 without a timeout
	Inbox         []event.Message
	// Receivers are the addresses ClientAct's messages may go to: the trial's agents
	// by name, and event.EnvAddress when the environment takes messages.
	Receivers []string
	// LastReward is the reward the agent received for its previous turn in this
	// episode, every source included; HasLastReward is false at its first turn of an
	// episode (PendingResponse.last_reward).
	LastReward    float64
	HasLastReward bool
}

// ActionChoice is an action of a client actor's agent, as people read it.
type ActionChoice struct {
	Raw     int64
	Name    string
	Allowed bool
}

// Pending returns the turn of agent agentName of trial, a client actor, waiting up
// to wait (at most a minute; the call's deadline is extended by it) for the agent to
// be acting.
func (t *TrialClient) Pending(ctx context.Context, trial, agentName string, wait time.Duration) (ClientTurn, error) {
	var resp *pb.PendingResponse
	err := t.c.callLong(ctx, methodPending, "trial "+trial, wait, func(ctx context.Context) error {
		var err error
		resp, err = t.api.Pending(ctx, &pb.PendingRequest{Trial: trial, Agent: agentName, WaitMs: wait.Milliseconds()})
		return err
	})
	if err != nil {
		return ClientTurn{}, err
	}
	turn := ClientTurn{
		State: statesGo[resp.GetState()], Acting: resp.GetActing(), AgentID: resp.GetAgentId(),
		Episode: int(resp.GetEpisode()), Tick: int(resp.GetTick()), Obs: resp.GetObservation(),
		Remaining: time.Duration(resp.GetRemainingMs()) * time.Millisecond, Receivers: resp.GetReceivers(),
	}
	if resp.LastReward != nil {
		turn.LastReward, turn.HasLastReward = resp.GetLastReward(), true
	}
	if resp.GetError() != "" {
		turn.Err = &TrialError{Message: resp.GetError()}
	}
	if f := resp.GetFrame(); f != nil {
		turn.Frame = env.Frame{Text: f.GetText(), SVG: f.GetSvg()}
		if s := f.GetSceneJson(); s != "" {
			turn.Frame.Scene = json.RawMessage(s)
		}
	}
	for _, a := range resp.GetActions() {
		turn.Actions = append(turn.Actions, ActionChoice{Raw: a.GetRaw(), Name: a.GetName(), Allowed: a.GetAllowed()})
	}
	for _, m := range resp.GetInbox() {
		turn.Inbox = append(turn.Inbox, event.Message{From: m.GetFrom(), To: agentName, Payload: []byte(m.GetPayload())})
	}
	return turn, nil
}

// ClientAct plays the raw action for agent agentName of trial, a client actor, at
// tick (ClientTurn.Tick), sending msgs (To and Payload) with it. An action out of the
// agent's space or masked, or a message to an address not in ClientTurn.Receivers,
// fails with ErrInvalidArgument: nothing is sent, and the trial goes on waiting.
func (t *TrialClient) ClientAct(ctx context.Context, trial, agentName string, tick int, raw int64, msgs ...event.Message) error {
	req := &pb.ClientActRequest{Trial: trial, Agent: agentName, Tick: int64(tick), Action: &pb.ClientActRequest_Raw{Raw: raw}}
	for _, m := range msgs {
		req.Messages = append(req.Messages, &pb.ClientMessage{To: m.To, Payload: string(m.Payload)})
	}
	return t.c.call(ctx, methodClientAct, "trial "+trial, func(ctx context.Context) error {
		_, err := t.api.ClientAct(ctx, req)
		return err
	})
}

// Episodes returns the complete episodes of trial from index from on, while it runs
// and after, and the index of the first returned, as Controller.Episodes does.
func (t *TrialClient) Episodes(ctx context.Context, trial string, from int) ([]runners.EpisodeResult, int, error) {
	var resp *pb.EpisodesResponse
	err := t.c.call(ctx, methodEpisodes, "trial "+trial, func(ctx context.Context) error {
		var err error
		resp, err = t.api.Episodes(ctx, &pb.EpisodesRequest{Trial: trial, From: int64(from)})
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return episodesGo(resp.GetEpisodes()), int(resp.GetFirst()), nil
}

func episodesGo(eps []*pb.EpisodeResult) []runners.EpisodeResult {
	var out []runners.EpisodeResult
	for _, e := range eps {
		out = append(out, runners.EpisodeResult{
			Seed: e.GetSeed(), Ticks: int(e.GetTicks()), Complete: e.GetComplete(), Truncated: e.GetTruncated(),
			Success: e.GetSuccess(), Returns: e.GetReturns(),
		})
	}
	return out
}
