package remote_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"github.com/batonrl/baton/telemetry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// episodeKey groups outcomes: within a trial's episode their order is the trial's,
// served or local.
type episodeKey struct {
	trial   string
	episode int
}

// recorder plays Policy and records what it learns, by trial and episode; safe for
// concurrent use, as a policy served to several streams is.
type recorder struct {
	agent.Policy
	failAt int64 // when > 0, the outcome of that number (from 1) fails
	n      atomic.Int64
	mu     sync.Mutex
	got    map[episodeKey][]runners.Outcome
}

var errRecorder = errors.New("recorder: failing as configured")

func (r *recorder) Learn(_ context.Context, o *runners.Outcome) error {
	if r.n.Add(1) == r.failAt {
		return errRecorder
	}
	c := *o
	c.Sources, c.Obs, c.Mask = slices.Clone(o.Sources), slices.Clone(o.Obs), slices.Clone(o.Mask)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[episodeKey][]runners.Outcome{}
	}
	k := episodeKey{o.Trial, o.Episode}
	r.got[k] = append(r.got[k], c)
	return nil
}

func (r *recorder) count(kind runners.OutcomeKind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, os := range r.got {
		for _, o := range os {
			if o.Kind == kind {
				n++
			}
		}
	}
	return n
}

// rewarder plays the oracle for the strategy and, at each decision after the first
// of an episode, rewards the motion sub-episode that just ended: a retro reward.
type rewarder struct {
	oracle    agent.Policy
	episode   int
	decisions int
}

func (r *rewarder) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	return r.oracle.Act(ctx, obs, mask)
}

func (r *rewarder) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	if x.Episode() != r.episode {
		r.episode, r.decisions = x.Episode(), 0
	}
	if r.decisions > 0 {
		if err := x.Reward(fmt.Sprintf("%s_%d", maze.MotionName, r.decisions-1), 0.25); err != nil {
			return agent.RawAction{}, err
		}
	}
	r.decisions++
	return r.oracle.Act(ctx, obs, mask)
}

// feedbackCounter counts the Feedback messages a server receives, on streams and
// unary calls.
type feedbackCounter struct{ requests, feedback atomic.Int64 }

func (c *feedbackCounter) see(m any) {
	if r, ok := m.(*pb.ActRequest); ok {
		c.requests.Add(1)
		c.feedback.Add(int64(len(r.GetFeedback())))
	}
}

type countingStream struct {
	grpc.ServerStream
	c *feedbackCounter
}

func (s countingStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.c.see(m)
	}
	return err
}

func (c *feedbackCounter) options() remote.ServerOption {
	return remote.WithGRPCServerOptions(
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			c.see(req)
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, countingStream{ss, c})
		}),
	)
}

// motionSpec is the spec of the maze's motion agent.
func motionSpec(t *testing.T) env.Spec { return mazeSpecs(t)[maze.MotionName] }

// TestFeedbackMatchesLocal runs maze campaigns whose motion agent learns, once local
// and once served (streams and unary calls, trials side by side): the served
// learner is told what the local one is, step outcomes, retro rewards and episode
// ends, in the same order within each trial's episode.
func TestFeedbackMatchesLocal(t *testing.T) {
	reg := testRegistry(t)
	m, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	strategy := runners.PerTrial(func(*rand.Rand) (agent.Policy, error) {
		return &rewarder{oracle: maze.NewOracle(m.Maze())}, nil
	})
	tests := []struct {
		name     string
		opts     []remote.DialOption
		workers  int
		maxTicks int
	}{
		{"stream", nil, 1, 0},
		{"stream, trials side by side, cut at the tick limit", nil, 3, 8},
		{"unary", []remote.DialOption{remote.WithUnary()}, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := runners.Spec{Env: "maze", Seed: 11, Episodes: 2, MaxTicks: tt.maxTicks}
			local := &recorder{Policy: maze.AlwaysForward()}
			spec.Actors = map[string]runners.Actor{maze.StrategyName: strategy, maze.MotionName: runners.Value(local)}
			want := campaign(t, reg, spec, runners.WithTrials(6), runners.WithWorkers(tt.workers))
			require.Equal(t, 6, want.Ended)

			served := &recorder{Policy: maze.AlwaysForward()}
			var counter feedbackCounter
			metrics := telemetry.New()
			srv := serveAgents(t, false, []remote.Agent{{Spec: motionSpec(t), Policy: served}}, counter.options(), remote.WithMetrics(metrics))
			client := dialAgent(t, srv, append(tt.opts, remote.WithTimeout(time.Minute))...)
			require.True(t, client.Learns())
			spec.Actors = map[string]runners.Actor{maze.StrategyName: strategy, maze.MotionName: runners.Value(client)}
			got := campaign(t, reg, spec, runners.WithTrials(6), runners.WithWorkers(tt.workers))
			assert.Equal(t, comparable(want), comparable(got))
			require.NoError(t, client.Close()) // the server has taken every message once it returns

			require.Positive(t, local.count(runners.OutcomeRetro))
			require.Equal(t, 12, local.count(runners.OutcomeEpisodeEnd))
			if tt.maxTicks > 0 {
				cut := 0
				for _, os := range local.got {
					for _, o := range os {
						if o.Truncated {
							cut++
						}
					}
				}
				require.Positive(t, cut, "no episode was cut at the tick limit")
			}
			served.mu.Lock()
			defer served.mu.Unlock()
			assert.Equal(t, local.got, served.got)
			assert.Equal(t, local.n.Load(), counter.feedback.Load())
			fams := gathered(t, metrics)
			assert.Equal(t, float64(counter.feedback.Load()), value(fams, "baton_feedback_messages_total"))
			method := "ActStream"
			if tt.name == "unary" {
				method = "Act"
			}
			assert.Positive(t, value(fams, "baton_act_duration_seconds", "method", method))
			assert.Equal(t, value(fams, "baton_act_duration_seconds", "method", method), value(fams, "baton_actions_total", "source", "agent"))
		})
	}
}

// TestFeedbackOnlyToLearners: a served agent that does not learn says so, and its
// client sends it no feedback in a campaign, and nothing but its decisions.
func TestFeedbackOnlyToLearners(t *testing.T) {
	reg := testRegistry(t)
	for _, tt := range []struct {
		name  string
		learn bool
	}{
		{"learner", true},
		{"plain policy", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p agent.Policy = maze.AlwaysForward()
			rec := &recorder{Policy: p}
			if tt.learn {
				p = rec
			}
			var counter feedbackCounter
			srv := serveAgents(t, false, []remote.Agent{{Spec: motionSpec(t), Policy: p}}, counter.options())
			client := dialAgent(t, srv, remote.WithTimeout(time.Minute))
			assert.Equal(t, tt.learn, client.Learns())
			decisions := &counting{Policy: client}
			spec := runners.Spec{Env: "maze", Seed: 3, Episodes: 2,
				Actors: map[string]runners.Actor{maze.MotionName: runners.Value(decisions)}}
			s := campaign(t, reg, spec, runners.WithTrials(4), runners.WithWorkers(2))
			require.Equal(t, 4, s.Ended)
			require.NoError(t, client.Close())
			if !tt.learn {
				assert.Zero(t, counter.feedback.Load())
				assert.Equal(t, decisions.n.Load(), counter.requests.Load())
				return
			}
			assert.Equal(t, rec.n.Load(), counter.feedback.Load())
			assert.Equal(t, 8, rec.count(runners.OutcomeEpisodeEnd))
			// One request per decision, and one per episode's end.
			assert.Equal(t, decisions.n.Load()+8, counter.requests.Load())
		})
	}
}

// counting is a policy that counts its decisions and passes feedback on.
type counting struct {
	agent.Policy
	n atomic.Int64
}

func (c *counting) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	c.n.Add(1)
	return c.Policy.(runners.Interactor).Interact(ctx, x, obs, mask)
}

func (c *counting) Learn(ctx context.Context, o *runners.Outcome) error {
	return c.Policy.(runners.Learner).Learn(ctx, o)
}

// TestFeedbackFails: a learner's failure fails the trial whose decision carried the
// feedback, with the server's status.
func TestFeedbackFails(t *testing.T) {
	reg := testRegistry(t)
	served := &recorder{Policy: maze.AlwaysForward(), failAt: 5}
	srv := serveAgents(t, false, []remote.Agent{{Spec: motionSpec(t), Policy: served}})
	client := dialAgent(t, srv, remote.WithTimeout(time.Minute))
	spec := runners.Spec{Env: "maze", Seed: 3, Actors: map[string]runners.Actor{maze.MotionName: runners.Value(client)}}
	s := campaign(t, reg, spec, runners.WithTrials(1))
	require.Equal(t, 1, s.Failed)
	err := s.Failures[0].Err
	ce, ok := errors.AsType[*remote.CallError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, codes.Unknown, ce.Status.Code(), "%v", err)
	assert.ErrorContains(t, err, errRecorder.Error())
}

// TestFeedbackRequests sends feedback with the plain generated client: feedback
// alone is answered with nothing on a stream and an empty response on Act;
// malformed feedback, or feedback to an agent that does not learn, is
// INVALID_ARGUMENT naming the field.
func TestFeedbackRequests(t *testing.T) {
	obsSpace := spaces.Must(spaces.NewBox([]int{3}, -1, 1))
	learner := &recorder{Policy: agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) { return agent.Discrete(1), nil })}
	srv := serveAgents(t, true, []remote.Agent{
		{Spec: env.Spec{Name: "learner", ObservationSpace: obsSpace, ActionSpace: spaces.Discrete{N: 2}}, Policy: learner},
		{Spec: env.Spec{Name: "plain", ObservationSpace: obsSpace, ActionSpace: spaces.Discrete{N: 2}}, Policy: learner.Policy},
	})
	api := rawClient(t, srv.target)
	obs := floatTensor(0.5, 0, -0.5)
	step := func(st *pb.StepFeedback) *pb.Feedback {
		return &pb.Feedback{Trial: "t", AgentId: "learner_0", Kind: &pb.Feedback_Step{Step: st}}
	}
	end := &pb.Feedback{Trial: "t", Tick: 4, Kind: &pb.Feedback_EpisodeEnd{EpisodeEnd: &pb.EpisodeEndFeedback{Truncated: true}}}

	t.Run("alone", func(t *testing.T) {
		stream, err := api.ActStream(t.Context())
		require.NoError(t, err)
		require.NoError(t, stream.Send(&pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{
			step(&pb.StepFeedback{Reward: 1, Sources: []*pb.RewardSource{{Source: "env", Value: 1}}, SpanTicks: 2, Observation: obs}),
		}}))
		require.NoError(t, stream.Send(&pb.ActRequest{Agent: "learner", Observation: obs, Seq: 7,
			Feedback: []*pb.Feedback{{Trial: "t", Tick: 3, AgentId: "learner_0", Kind: &pb.Feedback_Retro{Retro: &pb.RetroFeedback{Reward: -1, Source: "teacher", RewardedEpisode: 0, ArrivedTick: 4}}}}}))
		resp, err := stream.Recv()
		require.NoError(t, err)
		assert.Equal(t, uint64(7), resp.GetSeq(), "the first request, feedback alone, has no answer")
		require.NoError(t, stream.CloseSend())
		_, err = stream.Recv()
		require.Error(t, err)

		resp, err = api.Act(t.Context(), &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{end}})
		require.NoError(t, err)
		assert.Nil(t, resp.GetAction())

		learner.mu.Lock()
		defer learner.mu.Unlock()
		got := learner.got[episodeKey{"t", 0}]
		require.Len(t, got, 3)
		assert.Equal(t, runners.Outcome{Kind: runners.OutcomeStep, Trial: "t", Agent: "learner", AgentID: "learner_0", Reward: 1,
			Sources: []event.RewardSource{{Source: "env", Value: 1}}, SpanTicks: 2, Obs: []float32{0.5, 0, -0.5}}, got[0])
		assert.Equal(t, runners.Outcome{Kind: runners.OutcomeRetro, Trial: "t", Tick: 3, Agent: "learner", AgentID: "learner_0", Reward: -1,
			Sources: []event.RewardSource{{Source: "teacher", Value: -1}}, ArrivedTick: 4}, got[1])
		assert.Equal(t, runners.Outcome{Kind: runners.OutcomeEpisodeEnd, Trial: "t", Tick: 4, Agent: "learner", Truncated: true}, got[2])
	})

	cases := []struct {
		name  string
		req   *pb.ActRequest
		field string
	}{
		{"to an agent that does not learn", &pb.ActRequest{Agent: "plain", Feedback: []*pb.Feedback{end}}, "feedback"},
		{"no kind", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{end, {Trial: "t"}}}, "feedback[1]"},
		{"step without observation", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{step(&pb.StepFeedback{})}}, "feedback[0].step.observation"},
		{"step of a wrong shape", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{step(&pb.StepFeedback{Observation: floatTensor(0, 0)})}}, "feedback[0].step.observation.shape"},
		{"step outside the box", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{step(&pb.StepFeedback{Observation: floatTensor(0, 3, 0)})}}, "feedback[0].step.observation.data"},
		{"mask without one", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{step(&pb.StepFeedback{Observation: obs,
			Mask: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2}, Data: []byte{1, 0}}})}}, "feedback[0].step.mask"},
		{"step without agent id", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{{Kind: &pb.Feedback_Step{Step: &pb.StepFeedback{Observation: obs}}}}}, "feedback[0].agent_id"},
		{"negative tick", &pb.ActRequest{Agent: "learner", Feedback: []*pb.Feedback{{Tick: -1, Kind: end.Kind}}}, "feedback[0]"},
		{"retro without agent id", &pb.ActRequest{Agent: "learner", Observation: obs, Feedback: []*pb.Feedback{{Kind: &pb.Feedback_Retro{Retro: &pb.RetroFeedback{}}}}}, "feedback[0].agent_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := api.Act(t.Context(), c.req)
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
			assert.Equal(t, c.field, fieldOf(t, err), "%v", err)
			stream, err := api.ActStream(t.Context())
			require.NoError(t, err)
			require.NoError(t, stream.Send(c.req))
			_, err = stream.Recv()
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		})
	}
}

// noLearning is a policy whose Learn does nothing: what feedback costs on the wire.
type noLearning struct{ agent.Policy }

func (noLearning) Learn(context.Context, *runners.Outcome) error { return nil }

// BenchmarkFeedbackCampaign runs a maze campaign of 20 trials whose motion agent is
// served over loopback TCP, as a plain policy and as a learner told every outcome:
// the ratio of the two is what feedback costs a campaign.
func BenchmarkFeedbackCampaign(b *testing.B) {
	reg := testRegistry(b)
	for _, bb := range []struct {
		name   string
		policy agent.Policy
	}{
		{"plain", maze.AlwaysForward()},
		{"learner", noLearning{maze.AlwaysForward()}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			srv := serveAgents(b, true, []remote.Agent{{Spec: mazeSpecs(b)[maze.MotionName], Policy: bb.policy}})
			client := dialAgent(b, srv)
			spec := runners.Spec{Env: "maze", Seed: 1, Actors: map[string]runners.Actor{maze.MotionName: runners.Value(client)}}
			b.ReportAllocs()
			for b.Loop() {
				c, err := runners.NewCampaign(reg, spec, runners.WithTrials(20), runners.WithWorkers(2))
				require.NoError(b, err)
				s, err := c.Run(b.Context())
				require.NoError(b, err)
				require.Equal(b, 20, s.Ended)
			}
		})
	}
}

// stallAtEnd plays Policy and, told an episode's end, blocks until its context ends.
type stallAtEnd struct{ agent.Policy }

func (stallAtEnd) Learn(ctx context.Context, o *runners.Outcome) error {
	if o.Kind == runners.OutcomeEpisodeEnd {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// TestFeedbackCloseWaitsWithinTheDeadline: Close waits for the server to take the
// feedback sent alone, and no longer than the call deadline when it does not.
func TestFeedbackCloseWaitsWithinTheDeadline(t *testing.T) {
	reg := testRegistry(t)
	srv := serveAgents(t, false, []remote.Agent{{Spec: motionSpec(t), Policy: stallAtEnd{maze.AlwaysForward()}}})
	client := dialAgent(t, srv, remote.WithTimeout(300*time.Millisecond))
	spec := runners.Spec{Env: "maze", Seed: 3, Actors: map[string]runners.Actor{maze.MotionName: runners.Value(client)}}
	s := campaign(t, reg, spec, runners.WithTrials(1))
	require.Equal(t, 1, s.Ended, "the episode's end is sent, not waited for")
	err := client.Close()
	require.ErrorIs(t, err, remote.ErrDeadline)
	assert.ErrorContains(t, err, "no answer within 300ms")
	require.NoError(t, client.Close())
}
