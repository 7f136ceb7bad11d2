package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The methods of AgentService, as errors name them.
const (
	methodAct       = "AgentService/Act"
	methodActStream = "AgentService/ActStream"
	methodActBatch  = "AgentService/ActBatch"
	methodSpec      = "AgentService/Spec"
)

// AgentClient is a remote agent: an agent.Policy whose actions come from an agent
// server, so that a trial cannot tell it from a local policy. It also implements
// runners.Interactor, to tell the server the trial, episode, tick and agent id of
// each observation, and vector.BatchPolicy, to act for a vector of environments in
// one call.
//
// Observations go on gRPC streams (ActStream): the client keeps a stream per call in
// flight and reuses it for the next call, so a trial's actor talks over one stream;
// it falls back to unary calls when the server has no ActStream, or with WithUnary.
// Every call has a deadline (WithTimeout): a server that stalls fails the call with
// ErrDeadline within it, one that dies with ErrUnavailable; WithRetries retries
// those.
//
// When the server says its agent learns (Learns), the client is also a
// runners.Learner that passes the trials' feedback on: each Outcome goes with the
// trial's next request, so that the server takes it before that decision, and an
// episode's end goes at once, with what is still held for the trial. An error the
// server finds in feedback sent alone comes back from a later call on the same
// stream, or from Close. A call retried (WithRetries) sends its feedback again, so
// after a network failure a learner may be told an outcome twice. With a server
// whose agent does not learn, Learn does nothing and sends nothing.
//
// An AgentClient is safe for concurrent use: one client can act for every trial of a
// campaign. The slices of the actions it returns are new for every call. Close it
// when done: it sends the feedback it still holds first.
type AgentClient struct {
	c      *conn
	api    pb.AgentServiceClient
	agent  string // the served agent's name
	spec   env.Spec
	act    actionShape
	obsDim int
	learns bool // the server's agent takes feedback

	unary atomic.Bool     // the server has no ActStream (or WithUnary)
	codec grpc.CallOption // Act's and ActStream's messages skip reflection

	mu      sync.Mutex
	idle    []*actStream
	pending map[string][]*pb.Feedback // feedback to send, by trial
	closed  bool
}

// DialAgent connects to the agent server at target ("host:port", or
// "grpc://host:port/AGENT", "grpcs://host:port/AGENT" for TLS), asks it for the
// agent's spec (the agent named by WithAgent or the target's path; the server's
// only agent when neither names one) and returns the client. The first call
// happens here, under the call deadline, so that a wrong address, a missing server
// or a refused key fails now, not in the middle of a trial.
func DialAgent(ctx context.Context, target string, opts ...DialOption) (*AgentClient, error) {
	c, path, err := dial(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	name := c.cfg.agent
	if path != "" {
		if name != "" && name != path {
			_ = c.close()
			return nil, fmt.Errorf("%w: target %q names agent %s, WithAgent %s", ErrConfig, target, path, name)
		}
		name = path
	}
	a := &AgentClient{c: c, api: pb.NewAgentServiceClient(c.cc), agent: name, codec: grpc.ForceCodecV2(newActCodec())}
	a.unary.Store(c.cfg.unary)
	var sp *pb.AgentSpec
	err = c.call(ctx, methodSpec, a.target(), func(ctx context.Context) error {
		var err error
		sp, err = a.api.Spec(ctx, &pb.AgentSpecRequest{Agent: name})
		return err
	})
	if err != nil {
		_ = c.close()
		return nil, err
	}
	if a.spec, err = agentSpecFromProto(sp); err != nil {
		_ = c.close()
		return nil, fmt.Errorf("%w: agent server at %s: its spec: %w", ErrMismatch, c.addr, err)
	}
	if name != "" && a.spec.Name != name {
		_ = c.close()
		return nil, fmt.Errorf("%w: agent server at %s: asked for agent %s, got %s", ErrMismatch, c.addr, name, a.spec.Name)
	}
	a.agent = a.spec.Name
	if a.act, err = newActionShape(a.spec.ActionSpace); err != nil {
		_ = c.close()
		return nil, fmt.Errorf("%w: agent server at %s: %w", ErrMismatch, c.addr, err)
	}
	a.obsDim = a.spec.ObservationSpace.FlatDim()
	if a.learns = sp.GetLearns(); a.learns {
		a.pending = map[string][]*pb.Feedback{}
	}
	return a, nil
}

// Learns reports whether the server's agent learns online, so that Learn passes
// feedback on.
func (a *AgentClient) Learns() bool { return a.learns }

// Learn passes a trial's feedback to an agent that learns (see AgentClient); it
// does nothing when the agent does not. It holds o (copied) until the trial's next
// request, and sends what it holds for the trial at once at an episode's end.
func (a *AgentClient) Learn(ctx context.Context, o *runners.Outcome) error {
	if !a.learns {
		return nil
	}
	fb := feedbackProto(o)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return fmt.Errorf("%w: agent %s at %s: Learn after Close", ErrConfig, a.agent, a.c.addr)
	}
	held := append(a.pending[o.Trial], fb)
	if o.Kind != runners.OutcomeEpisodeEnd {
		a.pending[o.Trial] = held
		a.mu.Unlock()
		return nil
	}
	delete(a.pending, o.Trial)
	a.mu.Unlock()
	return a.deliver(ctx, held)
}

// drain waits, within the call deadline, for the server to end a stream the client
// has half-closed: once it has, the server has taken every message sent on it. It
// returns the status the server ended the stream with, unless OK.
func (a *AgentClient) drain(st *actStream) error {
	st.timer.Reset(a.c.cfg.timeout)
	defer st.timer.Stop()
	for {
		err := st.stream.RecvMsg(&st.resp)
		switch {
		case err == nil:
			continue // an answer nobody waits for: none is expected
		case errors.Is(err, io.EOF):
			return nil
		case status.Code(err) == codes.Canceled: // by the stall timer
			return a.c.fail(a.c.base, methodActStream, a.target(), status.Errorf(codes.DeadlineExceeded, "the stream did not end within %v", a.c.cfg.timeout), 1)
		}
		return a.c.fail(a.c.base, methodActStream, a.target(), err, 1)
	}
}

// held takes the feedback held for a trial.
func (a *AgentClient) held(trial string) []*pb.Feedback {
	a.mu.Lock()
	fbs := a.pending[trial]
	delete(a.pending, trial)
	a.mu.Unlock()
	return fbs
}

// deliver sends feedback alone: on a stream, which answers nothing, or unary.
func (a *AgentClient) deliver(ctx context.Context, fbs []*pb.Feedback) error {
	req := &pb.ActRequest{Agent: a.agent, Feedback: fbs}
	backoff := a.c.cfg.backoff
	for attempt := 1; ; attempt++ {
		method := methodActStream
		var err error
		if !a.unary.Load() {
			err = a.sendStream(ctx, req)
		}
		if a.unary.Load() {
			method = methodAct
			cctx, cancel := context.WithTimeout(ctx, a.c.cfg.timeout)
			_, err = a.api.Act(cctx, req, a.codec)
			cancel()
		}
		if err == nil {
			return nil
		}
		err = a.c.fail(ctx, method, a.target(), err, attempt)
		if !a.c.retry(ctx, err, attempt, &backoff) {
			return err
		}
	}
}

// sendStream sends req on a stream and expects no answer.
func (a *AgentClient) sendStream(ctx context.Context, req *pb.ActRequest) error {
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	st, err := a.takeStream(a.c.cfg.timeout)
	if err != nil {
		return err
	}
	err = st.stream.SendMsg(req)
	if errors.Is(err, io.EOF) {
		err = st.stream.RecvMsg(&st.resp) // the stream is broken: its status
		if err == nil || errors.Is(err, io.EOF) {
			err = status.Error(codes.Unavailable, "the server closed the stream")
		}
	}
	if !st.timer.Stop() { // the server took nothing in time: the timer cancelled the stream
		err = status.Errorf(codes.DeadlineExceeded, "not sent within %v", a.c.cfg.timeout.Round(time.Millisecond))
	}
	if err != nil {
		st.discard()
		return err
	}
	a.putStream(st)
	return nil
}

func (a *AgentClient) target() string {
	if a.agent == "" {
		return "agent server"
	}
	return "agent " + a.agent
}

// Spec returns the remote agent's name, spaces and mask length.
func (a *AgentClient) Spec() env.Spec { return a.spec }

// Addr returns the server's address.
func (a *AgentClient) Addr() string { return a.c.addr }

// Check returns an error wrapping ErrMismatch unless the remote agent has the name,
// spaces and mask length of want: what a caller checks before the agent plays in an
// environment.
func (a *AgentClient) Check(want env.Spec) error {
	got := a.spec
	var diffs []string
	if got.Name != want.Name {
		diffs = append(diffs, fmt.Sprintf("name %s, want %s", got.Name, want.Name))
	}
	if want.ObservationSpace != nil && !got.ObservationSpace.Equal(want.ObservationSpace) {
		diffs = append(diffs, fmt.Sprintf("observation space %v, want %v", got.ObservationSpace, want.ObservationSpace))
	}
	if want.ActionSpace != nil && !got.ActionSpace.Equal(want.ActionSpace) {
		diffs = append(diffs, fmt.Sprintf("action space %v, want %v", got.ActionSpace, want.ActionSpace))
	}
	if got.MaskLen != want.MaskLen {
		diffs = append(diffs, fmt.Sprintf("mask length %d, want %d", got.MaskLen, want.MaskLen))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: agent %s at %s: %s", ErrMismatch, a.agent, a.c.addr, joinStrings(diffs))
	}
	return nil
}

// Act sends the observation and mask to the server and returns its action.
func (a *AgentClient) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	return a.do(ctx, nil, obs, mask)
}

// Interact is Act with the trial's context sent along (ActContext): the trial, the
// episode, the tick and the acting agent's id. It reads no message and sends none.
func (a *AgentClient) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	return a.do(ctx, &pb.ActContext{Trial: x.Trial(), Episode: int64(x.Episode()), Tick: int64(x.Tick()), AgentId: x.AgentID()}, obs, mask)
}

var (
	_ agent.Policy       = (*AgentClient)(nil)
	_ runners.Interactor = (*AgentClient)(nil)
	_ runners.Learner    = (*AgentClient)(nil)
	_ vector.BatchPolicy = (*AgentClient)(nil)
)

func (a *AgentClient) checkInput(obs []float32, mask []bool) error {
	if len(obs) != a.obsDim {
		return fmt.Errorf("%w: agent %s at %s: observation of %d floats, the agent's space %v has %d", ErrMismatch, a.agent, a.c.addr, len(obs), a.spec.ObservationSpace, a.obsDim)
	}
	if mask != nil && len(mask) != a.spec.MaskLen {
		return fmt.Errorf("%w: agent %s at %s: mask of %d entries, the agent's is %d", ErrMismatch, a.agent, a.c.addr, len(mask), a.spec.MaskLen)
	}
	return nil
}

// do acts on one observation: on a stream, or unary, with retries.
func (a *AgentClient) do(ctx context.Context, actx *pb.ActContext, obs []float32, mask []bool) (agent.RawAction, error) {
	if err := a.checkInput(obs, mask); err != nil {
		return agent.RawAction{}, err
	}
	if a.spec.MaskLen == 0 {
		mask = nil
	}
	var fbs []*pb.Feedback
	if a.learns {
		fbs = a.held(actx.GetTrial())
	}
	backoff := a.c.cfg.backoff
	for attempt := 1; ; attempt++ {
		var raw agent.RawAction
		var err error
		method := methodActStream
		if !a.unary.Load() {
			raw, err = a.actStream(ctx, actx, fbs, obs, mask)
			if status.Code(err) == codes.Unimplemented {
				a.c.cfg.logger.Info("remote: the agent server has no ActStream; using Act", "addr", a.c.addr)
				a.unary.Store(true)
			}
		}
		if a.unary.Load() {
			method = methodAct
			raw, err = a.actUnary(ctx, actx, fbs, obs, mask)
		}
		if err == nil {
			return raw, nil
		}
		if _, isCall := status.FromError(err); !isCall {
			return agent.RawAction{}, err // a response that does not fit the agent
		}
		err = a.c.fail(ctx, method, a.target(), err, attempt)
		if !a.c.retry(ctx, err, attempt, &backoff) {
			return agent.RawAction{}, err
		}
	}
}

func (a *AgentClient) request(req *pb.ActRequest, actx *pb.ActContext, fbs []*pb.Feedback, obs []float32, mask []bool, obsT, maskT *pb.Tensor, buf *[]byte) {
	req.Agent = a.agent
	req.Context = actx
	req.Feedback = fbs
	req.Observation = setTensor(obsT, pb.DType_DTYPE_FLOAT32, float32Bytes(obs, *buf), int64(len(obs)))
	if mask != nil {
		req.Mask = setTensor(maskT, pb.DType_DTYPE_BOOL, boolBytes(mask), int64(len(mask)))
	} else {
		req.Mask = nil
	}
}

// decodeAction reads the action of a response; an action that does not fit the
// agent's action space is an error wrapping ErrMismatch.
func (a *AgentClient) decodeAction(method string, t *pb.Tensor) (agent.RawAction, error) {
	raw, fe := a.act.decode("action", t, nil, nil)
	if fe != nil {
		return agent.RawAction{}, fmt.Errorf("%w: agent %s at %s: %s: the response's %w", ErrMismatch, a.agent, a.c.addr, method, fe)
	}
	return raw, nil
}

func (a *AgentClient) actUnary(ctx context.Context, actx *pb.ActContext, fbs []*pb.Feedback, obs []float32, mask []bool) (agent.RawAction, error) {
	var req pb.ActRequest
	var obsT, maskT pb.Tensor
	var buf []byte
	a.request(&req, actx, fbs, obs, mask, &obsT, &maskT, &buf)
	cctx, cancel := context.WithTimeout(ctx, a.c.cfg.timeout)
	defer cancel()
	resp, err := a.api.Act(cctx, &req, a.codec)
	if err != nil {
		return agent.RawAction{}, err
	}
	return a.decodeAction(methodAct, resp.GetAction())
}

// actStream is one ActStream stream with the buffers of its requests. A call holds
// it alone; the stall timer cancels it when the server does not answer in time.
type actStream struct {
	stream interface {
		SendMsg(any) error
		RecvMsg(any) error
		CloseSend() error
	}
	cancel context.CancelCauseFunc
	timer  *time.Timer
	req    pb.ActRequest
	resp   pb.ActResponse
	obsT   pb.Tensor
	maskT  pb.Tensor
	buf    []byte
	seq    uint64
}

// errStall is the cause with which a stalled stream is cancelled.
var errStall = errors.New("remote: stream stalled")

// takeStream returns an idle stream, or opens one, with its stall timer armed for
// d: opening a stream counts against the call's deadline too.
func (a *AgentClient) takeStream(d time.Duration) (*actStream, error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, status.Error(codes.Canceled, "the client is closed")
	}
	if n := len(a.idle); n > 0 {
		st := a.idle[n-1]
		a.idle = a.idle[:n-1]
		a.mu.Unlock()
		st.timer.Reset(d)
		return st, nil
	}
	a.mu.Unlock()
	sctx, cancel := context.WithCancelCause(a.c.base)
	st := &actStream{cancel: cancel}
	st.timer = time.AfterFunc(d, func() { cancel(errStall) })
	stream, err := a.api.ActStream(sctx, a.codec)
	if err != nil {
		st.timer.Stop()
		cancel(nil)
		if errors.Is(context.Cause(sctx), errStall) {
			return nil, status.Errorf(codes.DeadlineExceeded, "no answer within %v", d.Round(time.Millisecond))
		}
		return nil, err
	}
	st.stream = stream
	return st, nil
}

// putStream keeps a healthy stream for the next call.
func (a *AgentClient) putStream(st *actStream) {
	a.mu.Lock()
	if !a.closed {
		a.idle = append(a.idle, st)
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	st.discard()
}

func (st *actStream) discard() {
	st.timer.Stop()
	st.cancel(nil)
}

func (a *AgentClient) actStream(ctx context.Context, actx *pb.ActContext, fbs []*pb.Feedback, obs []float32, mask []bool) (agent.RawAction, error) {
	if err := ctx.Err(); err != nil {
		return agent.RawAction{}, status.FromContextError(err).Err()
	}
	d := a.c.cfg.timeout
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	st, err := a.takeStream(d)
	if err != nil {
		return agent.RawAction{}, err
	}
	st.seq++
	a.request(&st.req, actx, fbs, obs, mask, &st.obsT, &st.maskT, &st.buf)
	st.req.Seq = st.seq
	var callerDone atomic.Bool
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			callerDone.Store(true)
			st.cancel(context.Cause(ctx))
		})
	}
	err = st.stream.SendMsg(&st.req)
	if err == nil {
		err = st.stream.RecvMsg(&st.resp)
	} else if errors.Is(err, io.EOF) {
		// The stream is broken; its status comes from RecvMsg.
		err = st.stream.RecvMsg(&st.resp)
	}
	timerOK, stopOK := st.timer.Stop(), stop()
	st.req.Context, st.req.Feedback = nil, nil
	if err != nil || !timerOK || !stopOK {
		st.discard()
		switch {
		case callerDone.Load():
			return agent.RawAction{}, status.FromContextError(ctx.Err()).Err()
		case !timerOK:
			return agent.RawAction{}, status.Errorf(codes.DeadlineExceeded, "no answer within %v", d.Round(time.Millisecond))
		case err == nil:
			return agent.RawAction{}, status.Error(codes.Canceled, "the call was cancelled")
		}
		if errors.Is(err, io.EOF) {
			err = status.Error(codes.Unavailable, "the server closed the stream")
		}
		return agent.RawAction{}, err
	}
	if got := st.resp.GetSeq(); got != st.seq {
		st.discard()
		return agent.RawAction{}, fmt.Errorf("%w: agent %s at %s: %s: answer %d to request %d", ErrMismatch, a.agent, a.c.addr, methodActStream, got, st.seq)
	}
	raw, err := a.decodeAction(methodActStream, st.resp.GetAction())
	if err != nil {
		st.discard()
		return agent.RawAction{}, err
	}
	a.putStream(st)
	return raw, nil
}

// ActBatch sends the rows of b in one ActBatch call and writes their actions into
// actions (len b.Len()). The slices of the actions are new, one array per call.
func (a *AgentClient) ActBatch(ctx context.Context, b vector.Batch, actions []agent.RawAction) error {
	n := b.Len()
	switch {
	case len(actions) != n:
		return fmt.Errorf("%w: ActBatch: %d actions for %d rows", ErrConfig, len(actions), n)
	case b.ObsDim != a.obsDim || len(b.Obs) != n*b.ObsDim:
		return fmt.Errorf("%w: agent %s at %s: a batch of %d observations of %d floats in %d, the agent's are %d", ErrMismatch, a.agent, a.c.addr, n, b.ObsDim, len(b.Obs), a.obsDim)
	case b.MaskLen != 0 && (b.MaskLen != a.spec.MaskLen || len(b.Masks) != n*b.MaskLen):
		return fmt.Errorf("%w: agent %s at %s: a batch of masks of %d entries, the agent's are %d", ErrMismatch, a.agent, a.c.addr, b.MaskLen, a.spec.MaskLen)
	}
	if n == 0 {
		return nil
	}
	req := &pb.ActBatchRequest{Agent: a.agent}
	req.Observations = setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, float32Bytes(b.Obs, nil), int64(n), int64(a.obsDim))
	if b.MaskLen != 0 && a.spec.MaskLen != 0 {
		req.Masks = setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, boolBytes(b.Masks), int64(n), int64(b.MaskLen))
	}
	var resp *pb.ActBatchResponse
	err := a.c.call(ctx, methodActBatch, a.target(), func(ctx context.Context) error {
		var err error
		resp, err = a.api.ActBatch(ctx, req)
		return err
	})
	if err != nil {
		return err
	}
	return a.decodeRows(resp.GetActions(), actions)
}

// decodeRows reads n actions from one tensor, checking each against the space.
func (a *AgentClient) decodeRows(t *pb.Tensor, actions []agent.RawAction) error {
	n := len(actions)
	bad := func(fe *FieldError) error {
		return fmt.Errorf("%w: agent %s at %s: %s: the response's %w", ErrMismatch, a.agent, a.c.addr, methodActBatch, fe)
	}
	switch a.act.dtype {
	case pb.DType_DTYPE_INT64:
		v, fe := decodeInt64("actions", t, nil, a.act.rowShapes(n)...)
		if fe != nil {
			return bad(fe)
		}
		for r := range actions {
			if a.act.kind == spaces.KindDiscrete {
				actions[r] = agent.RawAction{Int: v[r]}
			} else {
				actions[r] = agent.RawAction{Ints: v[r*a.act.dim : (r+1)*a.act.dim : (r+1)*a.act.dim]}
			}
		}
	default:
		v, fe := decodeFloat32("actions", t, nil, a.act.rowShapes(n)...)
		if fe != nil {
			return bad(fe)
		}
		for r := range actions {
			actions[r] = agent.RawAction{Floats: v[r*a.act.dim : (r+1)*a.act.dim : (r+1)*a.act.dim]}
		}
	}
	for r := range actions {
		if err := actions[r].Check(a.spec.ActionSpace); err != nil {
			return bad(&FieldError{Field: fmt.Sprintf("actions[row %d]", r), Reason: err.Error()})
		}
	}
	return nil
}

// Close sends the feedback it still holds (of trials whose last episode was cut
// short, or rewards that came after an episode's end), then closes the streams and
// the connection; calls in flight fail. It returns nil when called again.
func (a *AgentClient) Close() error {
	var err error
	if a.learns {
		a.mu.Lock()
		pending := a.pending
		a.pending = map[string][]*pb.Feedback{}
		a.mu.Unlock()
		for _, trial := range slices.Sorted(maps.Keys(pending)) {
			err = errors.Join(err, a.deliver(a.c.base, pending[trial]))
		}
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	idle := slices.Clone(a.idle)
	a.idle = nil
	a.mu.Unlock()
	for _, st := range idle {
		_ = st.stream.CloseSend()
		if a.learns {
			err = errors.Join(err, a.drain(st))
		}
		st.discard()
	}
	return errors.Join(err, a.c.close())
}
