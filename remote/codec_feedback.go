package remote

import (
	"math"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

// The codec's paths for Feedback, which an ActRequest to a learning agent carries
// with nearly every decision: the same wire format as package proto, without
// reflection. Decoding makes new messages (the learner is handed an Outcome built
// from them during the request).

// The field numbers of Feedback and its parts, as in baton.proto.
const (
	fFbTrial, fFbEpisode, fFbTick, fFbAgentID, fFbStep, fFbRetro, fFbEpisodeEnd = 1, 2, 3, 4, 5, 6, 7
	fStepReward, fStepSources, fStepTerminated, fStepTruncated, fStepStart      = 1, 2, 3, 4, 5
	fStepLast, fStepSpanTicks, fStepObservation, fStepMask                      = 6, 7, 8, 9
	fSrcSource, fSrcValue                                                       = 1, 2
	fRetroReward, fRetroSource, fRetroRewardedEpisode, fRetroArrivedTick        = 1, 2, 3, 4
	fEndTruncated                                                               = 1
)

func sizeDouble(num protowire.Number, v float64) int {
	if math.Float64bits(v) == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeFixed64()
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	if math.Float64bits(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

func boolVarint(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

func sizeSourceBody(s *pb.RewardSource) int {
	return sizeString(fSrcSource, s.Source) + sizeDouble(fSrcValue, s.Value)
}

func sizeStepBody(st *pb.StepFeedback) int {
	n := sizeDouble(fStepReward, st.Reward)
	for _, s := range st.Sources {
		n += sizeMessage(fStepSources, sizeSourceBody(s))
	}
	n += sizeVarint(fStepTerminated, boolVarint(st.Terminated)) + sizeVarint(fStepTruncated, boolVarint(st.Truncated)) +
		sizeVarint(fStepStart, boolVarint(st.Start)) + sizeVarint(fStepLast, boolVarint(st.Last)) +
		sizeVarint(fStepSpanTicks, uint64(st.SpanTicks))
	if st.Observation != nil {
		n += sizeMessage(fStepObservation, sizeTensorBody(st.Observation))
	}
	if st.Mask != nil {
		n += sizeMessage(fStepMask, sizeTensorBody(st.Mask))
	}
	return n
}

func sizeRetroBody(r *pb.RetroFeedback) int {
	return sizeDouble(fRetroReward, r.Reward) + sizeString(fRetroSource, r.Source) +
		sizeVarint(fRetroRewardedEpisode, uint64(r.RewardedEpisode)) + sizeVarint(fRetroArrivedTick, uint64(r.ArrivedTick))
}

func sizeFeedbackBody(fb *pb.Feedback) int {
	n := sizeString(fFbTrial, fb.Trial) + sizeVarint(fFbEpisode, uint64(fb.Episode)) +
		sizeVarint(fFbTick, uint64(fb.Tick)) + sizeString(fFbAgentID, fb.AgentId)
	switch k := fb.Kind.(type) {
	case *pb.Feedback_Step:
		n += sizeMessage(fFbStep, sizeStepBody(k.Step))
	case *pb.Feedback_Retro:
		n += sizeMessage(fFbRetro, sizeRetroBody(k.Retro))
	case *pb.Feedback_EpisodeEnd:
		n += sizeMessage(fFbEpisodeEnd, sizeVarint(fEndTruncated, boolVarint(k.EpisodeEnd.Truncated)))
	}
	return n
}

func appendFeedback(b []byte, num protowire.Number, fb *pb.Feedback) ([]byte, error) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sizeFeedbackBody(fb)))
	b, err := appendString(b, fFbTrial, fb.Trial)
	if err != nil {
		return b, err
	}
	b = appendVarint(b, fFbEpisode, uint64(fb.Episode))
	b = appendVarint(b, fFbTick, uint64(fb.Tick))
	if b, err = appendString(b, fFbAgentID, fb.AgentId); err != nil {
		return b, err
	}
	switch k := fb.Kind.(type) {
	case *pb.Feedback_Step:
		st := k.Step
		b = protowire.AppendTag(b, fFbStep, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizeStepBody(st)))
		b = appendDouble(b, fStepReward, st.Reward)
		for _, s := range st.Sources {
			b = protowire.AppendTag(b, fStepSources, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(sizeSourceBody(s)))
			if b, err = appendString(b, fSrcSource, s.Source); err != nil {
				return b, err
			}
			b = appendDouble(b, fSrcValue, s.Value)
		}
		b = appendVarint(b, fStepTerminated, boolVarint(st.Terminated))
		b = appendVarint(b, fStepTruncated, boolVarint(st.Truncated))
		b = appendVarint(b, fStepStart, boolVarint(st.Start))
		b = appendVarint(b, fStepLast, boolVarint(st.Last))
		b = appendVarint(b, fStepSpanTicks, uint64(st.SpanTicks))
		if st.Observation != nil {
			b = appendTensor(b, fStepObservation, st.Observation)
		}
		if st.Mask != nil {
			b = appendTensor(b, fStepMask, st.Mask)
		}
	case *pb.Feedback_Retro:
		r := k.Retro
		b = protowire.AppendTag(b, fFbRetro, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizeRetroBody(r)))
		b = appendDouble(b, fRetroReward, r.Reward)
		if b, err = appendString(b, fRetroSource, r.Source); err != nil {
			return b, err
		}
		b = appendVarint(b, fRetroRewardedEpisode, uint64(r.RewardedEpisode))
		b = appendVarint(b, fRetroArrivedTick, uint64(r.ArrivedTick))
	case *pb.Feedback_EpisodeEnd:
		b = protowire.AppendTag(b, fFbEpisodeEnd, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizeVarint(fEndTruncated, boolVarint(k.EpisodeEnd.Truncated))))
		b = appendVarint(b, fEndTruncated, boolVarint(k.EpisodeEnd.Truncated))
	}
	return b, nil
}

// unmarshalFeedback decodes b into fb, merging as package proto does.
func unmarshalFeedback(b []byte, fb *pb.Feedback) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fFbTrial && typ == protowire.BytesType:
			return setString(&fb.Trial, "", data)
		case num == fFbEpisode && typ == protowire.VarintType:
			fb.Episode = int64(v)
		case num == fFbTick && typ == protowire.VarintType:
			fb.Tick = int64(v)
		case num == fFbAgentID && typ == protowire.BytesType:
			return setString(&fb.AgentId, "", data)
		case num == fFbStep && typ == protowire.BytesType:
			k, ok := fb.Kind.(*pb.Feedback_Step)
			if !ok {
				k = &pb.Feedback_Step{Step: &pb.StepFeedback{}}
				fb.Kind = k
			}
			return unmarshalStep(data, k.Step)
		case num == fFbRetro && typ == protowire.BytesType:
			k, ok := fb.Kind.(*pb.Feedback_Retro)
			if !ok {
				k = &pb.Feedback_Retro{Retro: &pb.RetroFeedback{}}
				fb.Kind = k
			}
			return unmarshalRetro(data, k.Retro)
		case num == fFbEpisodeEnd && typ == protowire.BytesType:
			k, ok := fb.Kind.(*pb.Feedback_EpisodeEnd)
			if !ok {
				k = &pb.Feedback_EpisodeEnd{EpisodeEnd: &pb.EpisodeEndFeedback{}}
				fb.Kind = k
			}
			return fields(data, func(num protowire.Number, typ protowire.Type, v uint64, _ []byte) error {
				if num == fEndTruncated && typ == protowire.VarintType {
					k.EpisodeEnd.Truncated = v != 0
				}
				return nil
			})
		}
		return nil
	})
}

func unmarshalStep(b []byte, st *pb.StepFeedback) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fStepReward && typ == protowire.Fixed64Type:
			st.Reward = math.Float64frombits(v)
		case num == fStepSources && typ == protowire.BytesType:
			s := &pb.RewardSource{}
			st.Sources = append(st.Sources, s)
			return fields(data, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
				switch {
				case num == fSrcSource && typ == protowire.BytesType:
					return setString(&s.Source, "", data)
				case num == fSrcValue && typ == protowire.Fixed64Type:
					s.Value = math.Float64frombits(v)
				}
				return nil
			})
		case num == fStepTerminated && typ == protowire.VarintType:
			st.Terminated = v != 0
		case num == fStepTruncated && typ == protowire.VarintType:
			st.Truncated = v != 0
		case num == fStepStart && typ == protowire.VarintType:
			st.Start = v != 0
		case num == fStepLast && typ == protowire.VarintType:
			st.Last = v != 0
		case num == fStepSpanTicks && typ == protowire.VarintType:
			st.SpanTicks = int64(v)
		case num == fStepObservation && typ == protowire.BytesType:
			if st.Observation == nil {
				st.Observation = &pb.Tensor{}
			}
			return unmarshalTensor(data, st.Observation, true)
		case num == fStepMask && typ == protowire.BytesType:
			if st.Mask == nil {
				st.Mask = &pb.Tensor{}
			}
			return unmarshalTensor(data, st.Mask, true)
		}
		return nil
	})
}

func unmarshalRetro(b []byte, r *pb.RetroFeedback) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fRetroReward && typ == protowire.Fixed64Type:
			r.Reward = math.Float64frombits(v)
		case num == fRetroSource && typ == protowire.BytesType:
			return setString(&r.Source, "", data)
		case num == fRetroRewardedEpisode && typ == protowire.VarintType:
			r.RewardedEpisode = int64(v)
		case num == fRetroArrivedTick && typ == protowire.VarintType:
			r.ArrivedTick = int64(v)
		}
		return nil
	})
}
