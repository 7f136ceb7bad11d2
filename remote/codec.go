package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// actCodec is gRPC's protobuf codec with paths of its own for the messages of an
// action (ActRequest, ActResponse): the hot path of a served agent, a round trip per
// decision. It writes and reads the same wire format as package proto, without
// reflection, and decodes into the message given, reusing its tensors' buffers and
// its strings when they are equal, so that a stream's requests allocate nothing in
// steady state. The data of an ActResponse's action is new for every message, as
// the agent client hands out actions that alias it. Every other message goes to
// gRPC's own codec.
//
// An ActRequest's feedback (for an agent that learns) is written and read the same
// way (codec_feedback.go), into new messages for each request.
//
// Unknown fields are skipped, as proto3 allows a reader to; invalid UTF-8 in a
// string field and malformed wire data are errors, as with package proto, and a
// server answers them INVALID_ARGUMENT, for every message (newServerCodec).
//
// An ActBatchRequest's observations (a batch of 256 maze observations is 108 KB)
// are decoded into an array of the codec's pool, which the handler gives back with
// release once done with the request.
type actCodec struct {
	base encoding.CodecV2
	bufs *sync.Pool // of *[]byte, for ActBatchRequest's observations
	// malformed holds, on a server, the errors of the requests that did not
	// decode, until the handler takes them (takeMalformed).
	malformed *malformedSet
}

// malformedSet holds the errors of requests that did not decode, by message.
type malformedSet struct {
	n    atomic.Int64 // how many it holds, so that a lookup costs a load when none
	errs sync.Map     // request message -> error
}

// newActCodec returns the codec of a client, with gRPC's registered protobuf codec
// as its base.
func newActCodec() actCodec {
	return actCodec{base: encoding.GetCodecV2("proto"), bufs: &sync.Pool{}}
}

// newServerCodec returns the codec of a server. A request of baton.v1's services
// that does not decode is not an error of Unmarshal, which gRPC would answer
// INTERNAL (and at once, before any handler or interceptor runs): the codec keeps
// its error, and the handler, wrapped by decodingDesc or decodingStream, answers
// INVALID_ARGUMENT, since a message that does not decode is its sender's fault.
func newServerCodec() actCodec {
	c := newActCodec()
	c.malformed = &malformedSet{}
	return c
}

// release gives the observations' array of req back to the pool, and takes it out
// of req. It is for requests this codec decoded, once nothing uses their
// observations.
func (c actCodec) release(req *pb.ActBatchRequest) {
	t := req.GetObservations()
	if t == nil || cap(t.Data) == 0 || cap(t.Data) > maxPooled {
		return
	}
	b := t.Data[:0]
	t.Data = nil
	c.bufs.Put(&b)
}

// maxPooled bounds the arrays the pool keeps.
const maxPooled = 64 << 20

// Name is the codec's content-subtype: none, so that calls go as
// "application/grpc", which means protobuf, as they do with gRPC's default codec
// (and without building a content type for every call).
func (actCodec) Name() string { return "" }

func (c actCodec) Marshal(v any) (mem.BufferSlice, error) {
	var size int
	switch m := v.(type) {
	case *pb.ActRequest:
		size = sizeActRequest(m)
	case *pb.ActResponse:
		size = sizeActResponse(m)
	default:
		return c.base.Marshal(v)
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	b, err := (*buf)[:0], error(nil)
	switch m := v.(type) {
	case *pb.ActRequest:
		b, err = appendActRequest(b, m)
	case *pb.ActResponse:
		b = appendActResponse(b, m)
	}
	if err == nil && len(b) != size {
		err = fmt.Errorf("remote: codec: wrote %d bytes, sized %d", len(b), size)
	}
	if err != nil {
		pool.Put(buf)
		return nil, err
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// Unmarshal decodes data into v. A server's codec keeps the error of a request of
// baton.v1 (see newServerCodec) and returns nil.
func (c actCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.unmarshal(data, v)
	if err == nil {
		return nil
	}
	if m, ok := v.(proto.Message); ok && c.malformed != nil && m.ProtoReflect().Descriptor().ParentFile().Package() == "baton.v1" {
		c.malformed.errs.Store(v, err)
		c.malformed.n.Add(1)
		return nil
	}
	return &malformedError{err: err}
}

func (c actCodec) unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *pb.ActRequest:
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		return unmarshalActRequest(buf.ReadOnlyData(), m)
	case *pb.ActResponse:
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		return unmarshalActResponse(buf.ReadOnlyData(), m)
	case *pb.ActBatchRequest:
		buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buf.Free()
		return c.unmarshalActBatchRequest(buf.ReadOnlyData(), m)
	}
	return c.base.Unmarshal(data, v)
}

// The field numbers of baton.v1's messages, as in baton.proto.
const (
	fTensorDType, fTensorShape, fTensorData                    = 1, 2, 3
	fReqAgent, fReqObservation, fReqMask, fReqContext, fReqSeq = 1, 2, 3, 4, 5
	fReqFeedback                                               = 6
	fCtxTrial, fCtxEpisode, fCtxTick, fCtxAgentID              = 1, 2, 3, 4
	fRespAction, fRespSeq                                      = 1, 2
	fBatchAgent, fBatchObservations, fBatchMasks               = 1, 2, 3
)

var errInvalidUTF8 = errors.New("remote: codec: string field contains invalid UTF-8")

func sizeString(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func sizeVarint(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func sizeMessage(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func appendString(b []byte, num protowire.Number, s string) ([]byte, error) {
	if s == "" {
		return b, nil
	}
	if !utf8.ValidString(s) {
		return b, errInvalidUTF8
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s), nil
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func shapeLen(t *pb.Tensor) int {
	n := 0
	for _, d := range t.Shape {
		n += protowire.SizeVarint(uint64(d))
	}
	return n
}

func sizeTensorBody(t *pb.Tensor) int {
	n := sizeVarint(fTensorDType, uint64(int64(t.Dtype)))
	if len(t.Shape) > 0 {
		n += sizeMessage(fTensorShape, shapeLen(t))
	}
	if len(t.Data) > 0 {
		n += protowire.SizeTag(fTensorData) + protowire.SizeBytes(len(t.Data))
	}
	return n
}

func appendTensor(b []byte, num protowire.Number, t *pb.Tensor) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(sizeTensorBody(t)))
	b = appendVarint(b, fTensorDType, uint64(int64(t.Dtype)))
	if len(t.Shape) > 0 {
		b = protowire.AppendTag(b, fTensorShape, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(shapeLen(t)))
		for _, d := range t.Shape {
			b = protowire.AppendVarint(b, uint64(d))
		}
	}
	if len(t.Data) > 0 {
		b = protowire.AppendTag(b, fTensorData, protowire.BytesType)
		b = protowire.AppendBytes(b, t.Data)
	}
	return b
}

func sizeContextBody(c *pb.ActContext) int {
	return sizeString(fCtxTrial, c.Trial) + sizeVarint(fCtxEpisode, uint64(c.Episode)) +
		sizeVarint(fCtxTick, uint64(c.Tick)) + sizeString(fCtxAgentID, c.AgentId)
}

func sizeActRequest(m *pb.ActRequest) int {
	n := sizeString(fReqAgent, m.Agent) + sizeVarint(fReqSeq, m.Seq)
	if m.Observation != nil {
		n += sizeMessage(fReqObservation, sizeTensorBody(m.Observation))
	}
	if m.Mask != nil {
		n += sizeMessage(fReqMask, sizeTensorBody(m.Mask))
	}
	if m.Context != nil {
		n += sizeMessage(fReqContext, sizeContextBody(m.Context))
	}
	for _, fb := range m.Feedback {
		n += sizeMessage(fReqFeedback, sizeFeedbackBody(fb))
	}
	return n
}

func appendActRequest(b []byte, m *pb.ActRequest) ([]byte, error) {
	b, err := appendString(b, fReqAgent, m.Agent)
	if err != nil {
		return b, err
	}
	if m.Observation != nil {
		b = appendTensor(b, fReqObservation, m.Observation)
	}
	if m.Mask != nil {
		b = appendTensor(b, fReqMask, m.Mask)
	}
	if c := m.Context; c != nil {
		b = protowire.AppendTag(b, fReqContext, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sizeContextBody(c)))
		if b, err = appendString(b, fCtxTrial, c.Trial); err != nil {
			return b, err
		}
		b = appendVarint(b, fCtxEpisode, uint64(c.Episode))
		b = appendVarint(b, fCtxTick, uint64(c.Tick))
		if b, err = appendString(b, fCtxAgentID, c.AgentId); err != nil {
			return b, err
		}
	}
	b = appendVarint(b, fReqSeq, m.Seq)
	for _, fb := range m.Feedback {
		if b, err = appendFeedback(b, fReqFeedback, fb); err != nil {
			return b, err
		}
	}
	return b, nil
}

func sizeActResponse(m *pb.ActResponse) int {
	n := sizeVarint(fRespSeq, m.Seq)
	if m.Action != nil {
		n += sizeMessage(fRespAction, sizeTensorBody(m.Action))
	}
	return n
}

func appendActResponse(b []byte, m *pb.ActResponse) []byte {
	if m.Action != nil {
		b = appendTensor(b, fRespAction, m.Action)
	}
	return appendVarint(b, fRespSeq, m.Seq)
}

// wireError is the error of malformed wire data.
func wireError(n int) error {
	return fmt.Errorf("remote: codec: invalid wire-format data: %w", protowire.ParseError(n))
}

// malformedError is an error of the codec's Unmarshal.
type malformedError struct{ err error }

func (e *malformedError) Error() string {
	return "remote: malformed message: " + strings.TrimPrefix(e.err.Error(), "remote: codec: ")
}

func (e *malformedError) Unwrap() error { return e.err }

// takeMalformed returns the INVALID_ARGUMENT status of a request that did not
// decode, when m is one (see newServerCodec), and forgets it; nil otherwise.
func (c actCodec) takeMalformed(m any) error {
	if c.malformed == nil || c.malformed.n.Load() == 0 {
		return nil
	}
	err, ok := c.malformed.errs.LoadAndDelete(m)
	if !ok {
		return nil
	}
	c.malformed.n.Add(-1)
	return status.Error(codes.InvalidArgument, "malformed request: "+strings.TrimPrefix(err.(error).Error(), "remote: codec: "))
}

// decodingDesc returns a copy of desc whose unary handlers answer a request that
// did not decode with its INVALID_ARGUMENT status (takeMalformed).
func (s *Server) decodingDesc(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i := range d.Methods {
		h := d.Methods[i].Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(v any) error {
				if err := dec(v); err != nil {
					return err
				}
				return s.codec.takeMalformed(v)
			}, in)
		}
	}
	return &d
}

// decodingStream is a server stream whose RecvMsg answers a request that did not
// decode with its INVALID_ARGUMENT status (takeMalformed).
type decodingStream struct {
	grpc.ServerStream
	codec actCodec
}

func (s decodingStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.codec.takeMalformed(m)
}

// fields calls f with each field of b: its number, wire type and, for the varint,
// fixed64 and bytes types, its value (v or data); fields of other types are
// skipped.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		if num > protowire.MaxValidNumber {
			return fmt.Errorf("remote: codec: field number %d is out of range", num)
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		if typ != protowire.VarintType && typ != protowire.Fixed64Type && typ != protowire.BytesType {
			continue
		}
		if err := f(num, typ, v, data); err != nil {
			return err
		}
	}
	return nil
}

// setString sets *s to data, to prev when equal (without allocating).
func setString(s *string, prev string, data []byte) error {
	if string(data) == prev {
		*s = prev
		return nil
	}
	if !utf8.Valid(data) {
		return errInvalidUTF8
	}
	*s = string(data)
	return nil
}

// unmarshalTensor decodes b into t, merging as protobuf does (a message may come in
// several parts); fresh says the data is copied into a new array rather than t's.
func unmarshalTensor(b []byte, t *pb.Tensor, fresh bool) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fTensorDType && typ == protowire.VarintType:
			t.Dtype = pb.DType(int32(v))
		case num == fTensorShape && typ == protowire.VarintType:
			t.Shape = append(t.Shape, int64(v))
		case num == fTensorShape && typ == protowire.BytesType:
			for len(data) > 0 {
				d, n := protowire.ConsumeVarint(data)
				if n < 0 {
					return wireError(n)
				}
				t.Shape = append(t.Shape, int64(d))
				data = data[n:]
			}
		case num == fTensorData && typ == protowire.BytesType:
			if fresh {
				t.Data = append([]byte(nil), data...)
			} else {
				t.Data = append(t.Data[:0], data...)
			}
		}
		return nil
	})
}

// reuseTensor returns t reset for decoding, keeping its shape and data arrays (a
// new tensor for nil).
func reuseTensor(t *pb.Tensor) *pb.Tensor {
	if t == nil {
		return &pb.Tensor{}
	}
	shape, data := t.Shape[:0], t.Data[:0]
	t.Reset()
	t.Shape, t.Data = shape, data
	return t
}

// unmarshalContext decodes b into c, merging; prevTrial and prevAgentID are
// strings to reuse when equal.
func unmarshalContext(b []byte, c *pb.ActContext, prevTrial, prevAgentID string) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fCtxTrial && typ == protowire.BytesType:
			return setString(&c.Trial, prevTrial, data)
		case num == fCtxEpisode && typ == protowire.VarintType:
			c.Episode = int64(v)
		case num == fCtxTick && typ == protowire.VarintType:
			c.Tick = int64(v)
		case num == fCtxAgentID && typ == protowire.BytesType:
			return setString(&c.AgentId, prevAgentID, data)
		}
		return nil
	})
}

// unmarshalActRequest decodes b into m, as proto.Unmarshal does, reusing m's
// tensors, context and strings.
func unmarshalActRequest(b []byte, m *pb.ActRequest) error {
	obs, mask, actx, agent := m.Observation, m.Mask, m.Context, m.Agent
	var prevTrial, prevAgentID string
	if actx != nil {
		prevTrial, prevAgentID = actx.Trial, actx.AgentId
	}
	m.Reset()
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fReqAgent && typ == protowire.BytesType:
			return setString(&m.Agent, agent, data)
		case num == fReqObservation && typ == protowire.BytesType:
			if m.Observation == nil {
				m.Observation = reuseTensor(obs)
			}
			return unmarshalTensor(data, m.Observation, false)
		case num == fReqMask && typ == protowire.BytesType:
			if m.Mask == nil {
				m.Mask = reuseTensor(mask)
			}
			return unmarshalTensor(data, m.Mask, false)
		case num == fReqContext && typ == protowire.BytesType:
			if m.Context == nil {
				if actx == nil {
					actx = &pb.ActContext{}
				}
				actx.Reset()
				m.Context = actx
			} else {
				prevTrial, prevAgentID = m.Context.Trial, m.Context.AgentId
			}
			return unmarshalContext(data, m.Context, prevTrial, prevAgentID)
		case num == fReqSeq && typ == protowire.VarintType:
			m.Seq = v
		case num == fReqFeedback && typ == protowire.BytesType:
			fb := &pb.Feedback{}
			m.Feedback = append(m.Feedback, fb)
			return unmarshalFeedback(data, fb)
		}
		return nil
	})
}

// unmarshalActResponse decodes b into m, as proto.Unmarshal does; the action's
// data is a new array.
func unmarshalActResponse(b []byte, m *pb.ActResponse) error {
	action := m.Action
	m.Reset()
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fRespAction && typ == protowire.BytesType:
			if m.Action == nil {
				m.Action = reuseTensor(action)
			}
			return unmarshalTensor(data, m.Action, true)
		case num == fRespSeq && typ == protowire.VarintType:
			m.Seq = v
		}
		return nil
	})
}

// unmarshalActBatchRequest decodes b into m, as proto.Unmarshal does, with the
// observations' data in an array of the pool.
func (c actCodec) unmarshalActBatchRequest(b []byte, m *pb.ActBatchRequest) error {
	m.Reset()
	return fields(b, func(num protowire.Number, typ protowire.Type, v uint64, data []byte) error {
		switch {
		case num == fBatchAgent && typ == protowire.BytesType:
			return setString(&m.Agent, "", data)
		case num == fBatchObservations && typ == protowire.BytesType:
			if m.Observations == nil {
				m.Observations = &pb.Tensor{}
				if p, ok := c.bufs.Get().(*[]byte); ok {
					m.Observations.Data = (*p)[:0]
				}
			}
			return unmarshalTensor(data, m.Observations, false)
		case num == fBatchMasks && typ == protowire.BytesType:
			if m.Masks == nil {
				m.Masks = &pb.Tensor{}
			}
			return unmarshalTensor(data, m.Masks, true)
		}
		return nil
	})
}
