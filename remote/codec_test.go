package remote

import (
	"math"
	"testing"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// actMessages are ActRequest and ActResponse values with every field set or left
// out, for the codec's checks against package proto.
func actMessages() []proto.Message {
	obs := &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{3}, Data: f32le(1, -2.5, 3)}
	return []proto.Message{
		&pb.ActRequest{},
		&pb.ActRequest{Agent: "strategy", Observation: obs, Seq: 7},
		&pb.ActRequest{Agent: "strategy", Observation: obs, Mask: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{4}, Data: []byte{1, 0, 0, 1}}, Seq: 1 << 40,
			Context: &pb.ActContext{Trial: "maze-1", Episode: 2, Tick: -3, AgentId: "motion_3"}},
		&pb.ActRequest{Observation: &pb.Tensor{}, Mask: &pb.Tensor{Shape: []int64{0, 1 << 33}}, Context: &pb.ActContext{}},
		&pb.ActRequest{Agent: "é", Observation: &pb.Tensor{Dtype: pb.DType(-1), Shape: []int64{-1}}},
		&pb.ActRequest{Agent: "motion", Observation: obs, Seq: 3, Context: &pb.ActContext{Trial: "maze-1", AgentId: "motion_0"},
			Feedback: []*pb.Feedback{
				{Trial: "maze-1", Episode: 1, Tick: 4, AgentId: "motion_0", Kind: &pb.Feedback_Step{Step: &pb.StepFeedback{Reward: 1.5,
					Sources: []*pb.RewardSource{{Source: "env", Value: 1}, {Source: "teacher", Value: 0.5}}, Terminated: true, Last: true, SpanTicks: 2, Observation: obs}}},
				{Trial: "maze-1", Episode: 1, Tick: 2, AgentId: "motion_0", Kind: &pb.Feedback_Retro{Retro: &pb.RetroFeedback{Reward: -1, Source: "teacher", ArrivedTick: 4}}},
			}},
		&pb.ActRequest{Agent: "motion", Feedback: []*pb.Feedback{{Trial: "maze-1", Tick: 9, Kind: &pb.Feedback_EpisodeEnd{EpisodeEnd: &pb.EpisodeEndFeedback{Truncated: true}}}}},
		&pb.ActRequest{Feedback: []*pb.Feedback{
			{Kind: &pb.Feedback_EpisodeEnd{EpisodeEnd: &pb.EpisodeEndFeedback{}}},
			{Kind: &pb.Feedback_Step{Step: &pb.StepFeedback{}}},
			{Episode: -1, Tick: -2, Kind: &pb.Feedback_Retro{Retro: &pb.RetroFeedback{Reward: math.Copysign(0, -1), RewardedEpisode: -3, ArrivedTick: 1 << 40}}},
			{Kind: &pb.Feedback_Step{Step: &pb.StepFeedback{Reward: math.Inf(-1), Sources: []*pb.RewardSource{{}, {Source: "é", Value: -2}},
				Truncated: true, Start: true, SpanTicks: -1, Mask: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2}, Data: []byte{1, 0}}}}},
			{},
		}},
		&pb.ActResponse{},
		&pb.ActResponse{Action: &pb.Tensor{Dtype: pb.DType_DTYPE_INT64, Data: []byte{3, 0, 0, 0, 0, 0, 0, 0}}, Seq: 9},
		&pb.ActResponse{Action: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{2}, Data: f32le(0.5, 1)}},
		&pb.ActBatchRequest{},
		&pb.ActBatchRequest{Agent: "strategy", Observations: &pb.Tensor{Dtype: pb.DType_DTYPE_FLOAT32, Shape: []int64{2, 2}, Data: f32le(1, 2, 3, 4)},
			Masks: &pb.Tensor{Dtype: pb.DType_DTYPE_BOOL, Shape: []int64{2, 1}, Data: []byte{1, 1}}},
	}
}

func f32le(v ...float32) []byte { return float32Bytes(v, nil) }

func materialize(t *testing.T, bs mem.BufferSlice) []byte {
	t.Helper()
	defer bs.Free()
	return bs.Materialize()
}

// TestActCodec checks the codec against package proto: the same bytes out, and
// the same message in, decoded fresh or into a message that held another.
func TestActCodec(t *testing.T) {
	c := newActCodec()
	msgs := actMessages()
	for i, m := range msgs {
		want, err := proto.Marshal(m)
		require.NoError(t, err)
		got, err := c.Marshal(m)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(materialize(t, got)), "message %d: %v", i, m)

		for _, into := range msgs {
			if into.ProtoReflect().Descriptor() != m.ProtoReflect().Descriptor() {
				continue
			}
			dst := proto.Clone(into)
			require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(want)}, dst))
			assert.True(t, proto.Equal(m, dst), "message %d decoded into %v: got %v", i, into, dst)
		}
	}

	t.Run("other messages go to protobuf", func(t *testing.T) {
		m := &pb.AgentSpecRequest{Agent: "strategy"}
		want, err := proto.Marshal(m)
		require.NoError(t, err)
		got, err := c.Marshal(m)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(materialize(t, got)))
		var back pb.AgentSpecRequest
		require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(want)}, &back))
		assert.Equal(t, "strategy", back.GetAgent())
	})

	t.Run("errors", func(t *testing.T) {
		_, err := c.Marshal(&pb.ActRequest{Agent: "\xff"})
		assert.ErrorIs(t, err, errInvalidUTF8)
		bad := protowire.AppendString(protowire.AppendTag(nil, fReqAgent, protowire.BytesType), "\xff")
		assert.ErrorIs(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(bad)}, &pb.ActRequest{}), errInvalidUTF8)
		for _, b := range [][]byte{{0x0a}, {0x0a, 0x05, 'a'}, {0x80}, {0x00, 0x01}, {0x12, 0x02, 0x1a, 0x09}} {
			assert.Error(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &pb.ActRequest{}), "%x", b)
		}
	})

	t.Run("a batch's observations come from the pool", func(t *testing.T) {
		b, err := proto.Marshal(msgs[len(msgs)-1])
		require.NoError(t, err)
		var first, second pb.ActBatchRequest
		require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &first))
		data := first.GetObservations().GetData()
		c.release(&first)
		assert.Nil(t, first.GetObservations().GetData(), "release takes the array out")
		require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &second))
		assert.True(t, proto.Equal(msgs[len(msgs)-1], &second))
		if !raceEnabled { // sync.Pool drops entries at random under the race detector
			assert.Same(t, &data[0], &second.GetObservations().GetData()[0], "the released array is reused")
		}
	})

	t.Run("a response's action data is new each time", func(t *testing.T) {
		b, err := proto.Marshal(msgs[len(msgs)-3])
		require.NoError(t, err)
		var resp pb.ActResponse
		require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &resp))
		first := resp.GetAction().GetData()
		require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &resp))
		assert.NotSame(t, &first[0], &resp.GetAction().GetData()[0])
	})
}

// FuzzActCodec decodes any bytes as package proto does: where proto accepts them,
// the codec gives an equal message, fresh or into a reused one; where it refuses
// them, so does the codec.
func FuzzActCodec(f *testing.F) {
	for _, m := range actMessages() {
		b, err := proto.Marshal(m)
		require.NoError(f, err)
		f.Add(b)
	}
	c := newActCodec()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []proto.Message{&pb.ActRequest{}, &pb.ActResponse{}, &pb.ActBatchRequest{}} {
			want := m.ProtoReflect().New().Interface()
			werr := proto.Unmarshal(b, want)
			for _, into := range actMessages() {
				if into.ProtoReflect().Descriptor() != m.ProtoReflect().Descriptor() {
					continue
				}
				got := proto.Clone(into)
				gerr := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%T %x: proto: %v, codec: %v", m, b, werr, gerr)
				}
				dropUnknown(want.ProtoReflect())
				if werr == nil && !proto.Equal(want, got) {
					t.Fatalf("%T %x: proto: %v, codec: %v", m, b, want, got)
				}
			}
		}
	})
}

// dropUnknown clears the unknown fields of m and its messages, which the codec
// skips.
func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Message() == nil || fd.IsMap():
		case fd.IsList():
			for i := range v.List().Len() {
				dropUnknown(v.List().Get(i).Message())
			}
		default:
			dropUnknown(v.Message())
		}
		return true
	})
}

// TestActCodecKnowsEveryField fails when a field is added to a message the codec
// writes by hand: the codec must then learn it, or it would drop it on the wire.
func TestActCodecKnowsEveryField(t *testing.T) {
	for _, tc := range []struct {
		msg  proto.Message
		want map[string]protowire.Number
	}{
		{&pb.Tensor{}, map[string]protowire.Number{"dtype": fTensorDType, "shape": fTensorShape, "data": fTensorData}},
		{&pb.ActRequest{}, map[string]protowire.Number{"agent": fReqAgent, "observation": fReqObservation, "mask": fReqMask, "context": fReqContext, "seq": fReqSeq, "feedback": fReqFeedback}},
		{&pb.ActContext{}, map[string]protowire.Number{"trial": fCtxTrial, "episode": fCtxEpisode, "tick": fCtxTick, "agent_id": fCtxAgentID}},
		{&pb.Feedback{}, map[string]protowire.Number{"trial": fFbTrial, "episode": fFbEpisode, "tick": fFbTick, "agent_id": fFbAgentID,
			"step": fFbStep, "retro": fFbRetro, "episode_end": fFbEpisodeEnd}},
		{&pb.StepFeedback{}, map[string]protowire.Number{"reward": fStepReward, "sources": fStepSources, "terminated": fStepTerminated,
			"truncated": fStepTruncated, "start": fStepStart, "last": fStepLast, "span_ticks": fStepSpanTicks,
			"observation": fStepObservation, "mask": fStepMask}},
		{&pb.RewardSource{}, map[string]protowire.Number{"source": fSrcSource, "value": fSrcValue}},
		{&pb.RetroFeedback{}, map[string]protowire.Number{"reward": fRetroReward, "source": fRetroSource,
			"rewarded_episode": fRetroRewardedEpisode, "arrived_tick": fRetroArrivedTick}},
		{&pb.EpisodeEndFeedback{}, map[string]protowire.Number{"truncated": fEndTruncated}},
		{&pb.ActResponse{}, map[string]protowire.Number{"action": fRespAction, "seq": fRespSeq}},
		{&pb.ActBatchRequest{}, map[string]protowire.Number{"agent": fBatchAgent, "observations": fBatchObservations, "masks": fBatchMasks}},
	} {
		d := tc.msg.ProtoReflect().Descriptor()
		t.Run(string(d.Name()), func(t *testing.T) {
			got := map[string]protowire.Number{}
			fields := d.Fields()
			for i := range fields.Len() {
				got[string(fields.Get(i).Name())] = fields.Get(i).Number()
			}
			assert.Equal(t, tc.want, got, "the fields of %s and the numbers the codec writes", d.FullName())
		})
	}
}

// TestServerCodecKeepsMalformedRequests decodes bytes that are no message with a
// server's codec: a request of baton.v1 is kept for its handler, which answers
// INVALID_ARGUMENT, and is forgotten once taken; another package's message, and
// every message on a client's codec, is an error of Unmarshal.
func TestServerCodecKeepsMalformedRequests(t *testing.T) {
	srv, cli := newServerCodec(), newActCodec()
	bad := mem.BufferSlice{mem.SliceBuffer([]byte{0x0a, 0x05, 'a'})}
	for _, req := range []proto.Message{&pb.ActRequest{}, &pb.ActBatchRequest{}, &pb.ResetRequest{}} {
		require.NoError(t, srv.Unmarshal(bad, req), "%T", req)
		assert.Equal(t, int64(1), srv.malformed.n.Load())
		err := srv.takeMalformed(req)
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "%T: %v", req, err)
		assert.Contains(t, status.Convert(err).Message(), "malformed request: ")
		assert.NoError(t, srv.takeMalformed(req), "taken once")
		assert.Zero(t, srv.malformed.n.Load(), "nothing is left")

		err = cli.Unmarshal(bad, req)
		require.Error(t, err, "%T", req)
		assert.Contains(t, err.Error(), "remote: malformed message: ")
	}
	require.Error(t, srv.Unmarshal(bad, &healthpb.HealthCheckRequest{}), "a message of another package")
	assert.Zero(t, srv.malformed.n.Load())
	assert.NoError(t, srv.takeMalformed(&pb.ActRequest{}), "a request that decoded")
}
