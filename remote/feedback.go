package remote

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// This file carries runners.Learner's feedback over AgentService: the client turns
// each Outcome into a pb.Feedback and sends it with the trial's next request (or
// alone, at an episode's end); the server turns it back into an Outcome for a served
// policy that learns.

// feedbackProto returns o as a Feedback; its tensors hold copies of o's slices,
// which belong to the trial and change once Learn returns.
func feedbackProto(o *runners.Outcome) *pb.Feedback {
	fb := &pb.Feedback{Trial: o.Trial, Episode: int64(o.Episode), Tick: int64(o.Tick), AgentId: o.AgentID}
	switch o.Kind {
	case runners.OutcomeStep:
		st := &pb.StepFeedback{
			Reward: o.Reward, Terminated: o.Terminated, Truncated: o.Truncated,
			Start: o.Start, Last: o.Last, SpanTicks: int64(o.SpanTicks),
			Observation: setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, slices.Clone(float32Bytes(o.Obs, nil)), int64(len(o.Obs))),
		}
		if o.Mask != nil {
			st.Mask = setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, slices.Clone(boolBytes(o.Mask)), int64(len(o.Mask)))
		}
		st.Sources = make([]*pb.RewardSource, len(o.Sources))
		for i, s := range o.Sources {
			st.Sources[i] = &pb.RewardSource{Source: s.Source, Value: s.Value}
		}
		fb.Kind = &pb.Feedback_Step{Step: st}
	case runners.OutcomeRetro:
		var source string
		if len(o.Sources) > 0 {
			source = o.Sources[0].Source
		}
		fb.Kind = &pb.Feedback_Retro{Retro: &pb.RetroFeedback{
			Reward: o.Reward, Source: source, RewardedEpisode: int64(o.RetroEpisode), ArrivedTick: int64(o.ArrivedTick),
		}}
	case runners.OutcomeEpisodeEnd:
		fb.AgentId = ""
		fb.Kind = &pb.Feedback_EpisodeEnd{EpisodeEnd: &pb.EpisodeEndFeedback{Truncated: o.Truncated}}
	}
	return fb
}

// outcome decodes fb (field names it) into o, for the served agent s.
func (s *servedAgent) outcome(field string, fb *pb.Feedback, o *runners.Outcome) *FieldError {
	*o = runners.Outcome{
		Trial: fb.GetTrial(), Episode: int(fb.GetEpisode()), Tick: int(fb.GetTick()),
		Agent: s.Spec.Name, AgentID: fb.GetAgentId(),
	}
	if o.Episode < 0 || o.Tick < 0 {
		return fieldErrorf(field, "episode %d, tick %d: want >= 0", o.Episode, o.Tick)
	}
	switch k := fb.GetKind().(type) {
	case *pb.Feedback_Step:
		st := k.Step
		o.Kind = runners.OutcomeStep
		o.Reward, o.Terminated, o.Truncated = st.GetReward(), st.GetTerminated(), st.GetTruncated()
		o.Start, o.Last, o.SpanTicks = st.GetStart(), st.GetLast(), int(st.GetSpanTicks())
		if o.AgentID == "" {
			return fieldErrorf(field+".agent_id", "empty: a step is about an agent id")
		}
		if o.SpanTicks < 0 {
			return fieldErrorf(field+".step.span_ticks", "%d: want >= 0", o.SpanTicks)
		}
		if st.GetObservation() == nil {
			return fieldErrorf(field+".step.observation", "missing")
		}
		var fe *FieldError
		if o.Obs, fe = s.decodeObs(field+".step.observation", st.GetObservation(), nil, s.obsAcc...); fe != nil {
			return fe
		}
		if st.GetMask() != nil {
			if s.Spec.MaskLen == 0 {
				return fieldErrorf(field+".step.mask", "agent %s has no action mask; leave the field out", s.Spec.Name)
			}
			if o.Mask, fe = decodeBool(field+".step.mask", st.GetMask(), s.maskAcc...); fe != nil {
				return fe
			}
		}
		o.Sources = make([]runners.RewardSource, len(st.GetSources()))
		for i, src := range st.GetSources() {
			o.Sources[i] = runners.RewardSource{Source: src.GetSource(), Value: src.GetValue()}
		}
	case *pb.Feedback_Retro:
		r := k.Retro
		o.Kind = runners.OutcomeRetro
		o.Reward, o.RetroEpisode, o.ArrivedTick = r.GetReward(), int(r.GetRewardedEpisode()), int(r.GetArrivedTick())
		o.Sources = []runners.RewardSource{{Source: r.GetSource(), Value: r.GetReward()}}
		if o.AgentID == "" {
			return fieldErrorf(field+".agent_id", "empty: a retro reward is about an agent id")
		}
		if o.RetroEpisode < 0 || o.ArrivedTick < 0 {
			return fieldErrorf(field+".retro", "rewarded episode %d, arrived tick %d: want >= 0", o.RetroEpisode, o.ArrivedTick)
		}
	case *pb.Feedback_EpisodeEnd:
		o.Kind = runners.OutcomeEpisodeEnd
		o.Truncated = k.EpisodeEnd.GetTruncated()
	default:
		return fieldErrorf(field, "no kind: set one of step, retro and episode_end")
	}
	return nil
}

// feed tells the served agent's Learner the feedback of req, in order.
func (s *servedAgent) feed(ctx context.Context, req *pb.ActRequest) error {
	if len(req.GetFeedback()) == 0 {
		return nil
	}
	if s.learner == nil {
		return invalid(fieldErrorf("feedback", "agent %s does not learn (its spec says so): send none", s.Spec.Name))
	}
	var o runners.Outcome
	for i, fb := range req.GetFeedback() {
		if fe := s.outcome(fmt.Sprintf("feedback[%d]", i), fb, &o); fe != nil {
			return invalid(fe)
		}
		if err := s.learn(ctx, &o); err != nil {
			return err
		}
	}
	return nil
}

// learn calls the Learner, serialised with Act for a policy that is not concurrent,
// with a panic turned into an error.
func (s *servedAgent) learn(ctx context.Context, o *runners.Outcome) (err error) {
	if !s.Concurrent {
		s.shared.Lock()
		defer s.shared.Unlock()
	}
	defer func() {
		if v := recover(); v != nil {
			err = status.Errorf(codes.Internal, "agent %s: the policy panicked in Learn: %v\n%s", s.Spec.Name, v, debug.Stack())
		}
	}()
	if err := s.learner.Learn(ctx, o); err != nil {
		return statusOf(err, codes.Unknown, "agent %s: the policy failed to learn", s.Spec.Name)
	}
	return nil
}
