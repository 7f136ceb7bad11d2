package remote

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/batonrl/baton/event"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// This file carries runners.Learner's feedback over AgentService: the client turns
// each Outcome into a pb.Feedback and sends it with the trial's next request (or
// alone, at an episode's end); the server turns it back into an Outcome for a served
// policy that learns.

// stepMessage is the messages of a step's Feedback, allocated together.
type stepMessage struct {
	fb        pb.Feedback
	kind      pb.Feedback_Step
	step      pb.StepFeedback
	obs, mask pb.Tensor
}

// feedbackProto returns o as a Feedback; its tensors hold copies of o's slices,
// which belong to the trial and change once Learn returns.
func feedbackProto(o *runners.Outcome) *pb.Feedback {
	switch o.Kind {
	case runners.OutcomeStep:
		m := &stepMessage{}
		m.fb = pb.Feedback{Trial: o.Trial, Episode: int64(o.Episode), Tick: int64(o.Tick), AgentId: o.AgentID, Kind: &m.kind}
		m.kind.Step = &m.step
		m.step = pb.StepFeedback{
			Reward: o.Reward, Terminated: o.Terminated, Truncated: o.Truncated,
			Start: o.Start, Last: o.Last, SpanTicks: int64(o.SpanTicks),
		}
		obs := float32Bytes(o.Obs, nil)
		data := make([]byte, len(obs)+len(o.Mask))
		copy(data, obs)
		m.step.Observation = setTensor(&m.obs, pb.DType_DTYPE_FLOAT32, data[:len(obs):len(obs)], int64(len(o.Obs)))
		if o.Mask != nil {
			copy(data[len(obs):], boolBytes(o.Mask))
			m.step.Mask = setTensor(&m.mask, pb.DType_DTYPE_BOOL, data[len(obs):], int64(len(o.Mask)))
		}
		if len(o.Sources) > 0 {
			sources := make([]pb.RewardSource, len(o.Sources))
			m.step.Sources = make([]*pb.RewardSource, len(o.Sources))
			for i, s := range o.Sources {
				sources[i].Source, sources[i].Value = s.Source, s.Value
				m.step.Sources[i] = &sources[i]
			}
		}
		return &m.fb
	case runners.OutcomeRetro:
		var source string
		if len(o.Sources) > 0 {
			source = o.Sources[0].Source
		}
		return &pb.Feedback{Trial: o.Trial, Episode: int64(o.Episode), Tick: int64(o.Tick), AgentId: o.AgentID,
			Kind: &pb.Feedback_Retro{Retro: &pb.RetroFeedback{
				Reward: o.Reward, Source: source, RewardedEpisode: int64(o.RetroEpisode), ArrivedTick: int64(o.ArrivedTick),
			}}}
	default:
		return &pb.Feedback{Trial: o.Trial, Episode: int64(o.Episode), Tick: int64(o.Tick),
			Kind: &pb.Feedback_EpisodeEnd{EpisodeEnd: &pb.EpisodeEndFeedback{Truncated: o.Truncated}}}
	}
}

// outcome decodes fb into o, for the served agent s; the fields an error names are
// fb's ("step.observation", "" for fb itself). o's Sources are in *sources.
func (s *servedAgent) outcome(fb *pb.Feedback, o *runners.Outcome, sources *[]event.RewardSource) *FieldError {
	*o = runners.Outcome{
		Trial: fb.GetTrial(), Episode: int(fb.GetEpisode()), Tick: int(fb.GetTick()),
		Agent: s.Spec.Name, AgentID: fb.GetAgentId(),
	}
	if o.Episode < 0 || o.Tick < 0 {
		return fieldErrorf("", "episode %d, tick %d: want >= 0", o.Episode, o.Tick)
	}
	switch k := fb.GetKind().(type) {
	case *pb.Feedback_Step:
		st := k.Step
		o.Kind = runners.OutcomeStep
		o.Reward, o.Terminated, o.Truncated = st.GetReward(), st.GetTerminated(), st.GetTruncated()
		o.Start, o.Last, o.SpanTicks = st.GetStart(), st.GetLast(), int(st.GetSpanTicks())
		if o.AgentID == "" {
			return fieldErrorf("agent_id", "empty: a step is about an agent id")
		}
		if o.SpanTicks < 0 {
			return fieldErrorf("step.span_ticks", "%d: want >= 0", o.SpanTicks)
		}
		if st.GetObservation() == nil {
			return fieldErrorf("step.observation", "missing")
		}
		var fe *FieldError
		if o.Obs, fe = s.decodeObs("step.observation", st.GetObservation(), nil, s.obsAcc...); fe != nil {
			return fe
		}
		if st.GetMask() != nil {
			if s.Spec.MaskLen == 0 {
				return fieldErrorf("step.mask", "agent %s has no action mask; leave the field out", s.Spec.Name)
			}
			if o.Mask, fe = decodeBool("step.mask", st.GetMask(), s.maskAcc...); fe != nil {
				return fe
			}
		}
		*sources = (*sources)[:0]
		for _, src := range st.GetSources() {
			*sources = append(*sources, event.RewardSource{Source: src.GetSource(), Value: src.GetValue()})
		}
		o.Sources = *sources
	case *pb.Feedback_Retro:
		r := k.Retro
		o.Kind = runners.OutcomeRetro
		o.Reward, o.RetroEpisode, o.ArrivedTick = r.GetReward(), int(r.GetRewardedEpisode()), int(r.GetArrivedTick())
		*sources = append((*sources)[:0], event.RewardSource{Source: r.GetSource(), Value: r.GetReward()})
		o.Sources = *sources
		if o.AgentID == "" {
			return fieldErrorf("agent_id", "empty: a retro reward is about an agent id")
		}
		if o.RetroEpisode < 0 || o.ArrivedTick < 0 {
			return fieldErrorf("retro", "rewarded episode %d, arrived tick %d: want >= 0", o.RetroEpisode, o.ArrivedTick)
		}
	case *pb.Feedback_EpisodeEnd:
		o.Kind = runners.OutcomeEpisodeEnd
		o.Truncated = k.EpisodeEnd.GetTruncated()
	default:
		return fieldErrorf("", "no kind: set one of step, retro and episode_end")
	}
	return nil
}

// feed tells the served agent's Learner the feedback of req, in order, with w's
// buffers.
func (s *servedAgent) feed(ctx context.Context, w *worker, req *pb.ActRequest) error {
	if len(req.GetFeedback()) == 0 {
		return nil
	}
	if s.learner == nil {
		return invalid(fieldErrorf("feedback", "agent %s does not learn (its spec says so): send none", s.Spec.Name))
	}
	var o runners.Outcome
	for i, fb := range req.GetFeedback() {
		if fe := s.outcome(fb, &o, &w.sources); fe != nil {
			where := fmt.Sprintf("feedback[%d]", i)
			if fe.Field != "" {
				where += "." + fe.Field
			}
			return invalid(&FieldError{Field: where, Reason: fe.Reason})
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
