package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/event"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Agent is a policy served to remote callers, with the spec of the agent it acts
// for. Exactly one of Policy and New is set.
//
// Policies are not safe for concurrent use unless they say so, and a server has many
// callers at once, so the server calls Policy one call at a time, unless Concurrent
// says Policy is safe for concurrent use. With New instead, the server builds a
// policy for each stream (ActStream), used by that stream alone, and a pool of them
// for Act and ActBatch calls, one per call in flight, reused by later calls.
//
// A policy that implements vector.BatchPolicy answers each ActBatch call in one
// ActBatch call of its own; other policies are called once per row.
//
// A shared Policy that implements runners.Learner learns from the trials it acts in:
// its spec tells clients so (AgentSpec.learns), and the server passes it the
// feedback of every trial and client (Learn), each request's feedback in order before
// its action, serialised with Act unless Concurrent. An Outcome's Agent is the served
// agent's name, and feedback of different streams may interleave: a Learner keeps
// what it remembers per trial, episode and agent id. Policies built by New are not
// told feedback (one per stream, none would see a whole trial).
type Agent struct {
	// Spec names the agent and gives its spaces and mask length: what callers send
	// and receive is checked against it.
	Spec env.Spec
	// Policy acts for every caller.
	Policy agent.Policy
	// Concurrent says that Policy is safe for concurrent use.
	Concurrent bool
	// New builds a policy.
	New func() (agent.Policy, error)
}

// servedAgent is an Agent checked and ready to serve.
type servedAgent struct {
	Agent
	learner runners.Learner // Policy's, or nil
	proto   *pb.AgentSpec
	obsDim  int
	obsBox  *spaces.Box // the observation space when it is a Box, for the bounds check
	action  actionShape
	shared  sync.Mutex // held around calls of a shared Policy that is not Concurrent
	mu      sync.Mutex
	free    []*worker
	obsAcc  [][]int64 // accepted observation shapes
	maskAcc [][]int64
}

// worker is a policy with the buffers of one call in flight.
type worker struct {
	policy agent.Policy
	batch  vector.BatchPolicy // policy's, or nil
	obs    []float32
	// sources holds the reward sources of an Outcome told to a Learner.
	sources []event.RewardSource
	ints    []int64
	floats  []float32
	rows    []agent.RawAction
	copies  []int
	bytes   []byte
}

// actionShape is what an agent's raw actions look like on the wire.
type actionShape struct {
	space spaces.Space
	kind  spaces.Kind
	dim   int // elements of one action: 1 for Discrete
	dtype pb.DType
	// accepted shapes of one action
	accept [][]int64
}

func newActionShape(s spaces.Space) (actionShape, error) {
	a := actionShape{space: s, kind: s.Kind()}
	switch s.Kind() {
	case spaces.KindDiscrete:
		a.dim, a.dtype = 1, pb.DType_DTYPE_INT64
		a.accept = [][]int64{{}, {1}}
	case spaces.KindMultiDiscrete, spaces.KindMultiBinary:
		a.dim, a.dtype = s.FlatDim(), pb.DType_DTYPE_INT64
		if md, ok := s.(*spaces.MultiDiscrete); ok {
			a.dim = len(md.Nvec())
		}
		a.accept = [][]int64{{int64(a.dim)}}
	case spaces.KindBox:
		a.dim, a.dtype = s.FlatDim(), pb.DType_DTYPE_FLOAT32
		a.accept = [][]int64{{int64(a.dim)}}
		if b, ok := s.(*spaces.Box); ok {
			if shape := b.Shape(); len(shape) != 1 {
				s64 := make([]int64, len(shape))
				for i, d := range shape {
					s64[i] = int64(d)
				}
				a.accept = append(a.accept, s64)
			}
		}
	default:
		return a, fmt.Errorf("%w: %v", agent.ErrActionSpace, s)
	}
	return a, nil
}

// rowShapes returns the accepted shapes of n actions, each with a leading n.
func (a *actionShape) rowShapes(n int) [][]int64 {
	out := make([][]int64, 0, len(a.accept))
	for _, s := range a.accept {
		if a.kind == spaces.KindDiscrete && len(s) == 1 {
			out = append(out, []int64{int64(n), 1})
			continue
		}
		out = append(out, append([]int64{int64(n)}, s...))
	}
	return out
}

// decode reads one raw action from t (field names the field), checked against the
// action space. Its slices alias t's bytes or are in *ints or *floats (see
// decodeFloat32Any); nil scratch pointers mean new slices when a copy is needed.
func (a *actionShape) decode(field string, t *pb.Tensor, ints *[]int64, floats *[]float32) (agent.RawAction, *FieldError) {
	var raw agent.RawAction
	switch {
	case a.kind == spaces.KindDiscrete:
		if _, fe := checkTensor(field, t, pb.DType_DTYPE_INT64, a.accept...); fe != nil {
			return raw, fe
		}
		raw.Int = int64(binary.LittleEndian.Uint64(t.GetData()))
	case a.dtype == pb.DType_DTYPE_INT64:
		v, fe := decodeInt64(field, t, ints, a.accept...)
		if fe != nil {
			return raw, fe
		}
		raw.Ints = v
	default:
		v, fe := decodeFloat32(field, t, floats, a.accept...)
		if fe != nil {
			return raw, fe
		}
		raw.Floats = v
	}
	if err := raw.Check(a.space); err != nil {
		return raw, &FieldError{Field: field, Reason: err.Error()}
	}
	return raw, nil
}

// encode writes raw into t, with buf as scratch for the bytes on a big-endian machine.
func (a *actionShape) encode(t *pb.Tensor, raw agent.RawAction, buf []byte, owned bool) []byte {
	switch a.kind {
	case spaces.KindDiscrete:
		buf = grow(buf, 8)
		if !owned {
			buf = make([]byte, 8)
		}
		for i := range 8 {
			buf[i] = byte(uint64(raw.Int) >> (8 * i))
		}
		setTensor(t, pb.DType_DTYPE_INT64, buf)
	case spaces.KindBox:
		data := float32Bytes(raw.Floats, buf)
		if !owned {
			data = slices.Clone(data)
		}
		setTensor(t, pb.DType_DTYPE_FLOAT32, data, int64(len(raw.Floats)))
	default:
		data := int64Bytes(raw.Ints, buf)
		if !owned {
			data = slices.Clone(data)
		}
		setTensor(t, pb.DType_DTYPE_INT64, data, int64(len(raw.Ints)))
	}
	return buf
}

func newServedAgent(a Agent) (*servedAgent, error) {
	name := a.Spec.Name
	var problems []string
	if name == "" {
		problems = append(problems, "the spec has no name")
	}
	if (a.Policy == nil) == (a.New == nil) {
		problems = append(problems, "set exactly one of Policy and New")
	}
	if a.New != nil && a.Concurrent {
		problems = append(problems, "Concurrent is for a shared Policy, not New")
	}
	if a.Spec.ObservationSpace == nil || a.Spec.ActionSpace == nil {
		problems = append(problems, "the spec lacks a space")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: agent %q: %s", ErrConfig, name, joinStrings(problems))
	}
	proto, err := agentSpecProto(a.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	act, err := newActionShape(a.Spec.ActionSpace)
	if err != nil {
		return nil, fmt.Errorf("%w: agent %s: %w", ErrConfig, name, err)
	}
	if a.Spec.MaskLen > 0 && (act.kind != spaces.KindDiscrete || a.Spec.MaskLen != a.Spec.ActionSpace.FlatDim()) {
		return nil, fmt.Errorf("%w: agent %s: mask length %d does not fit the action space %v", ErrConfig, name, a.Spec.MaskLen, a.Spec.ActionSpace)
	}
	s := &servedAgent{Agent: a, proto: proto, obsDim: a.Spec.ObservationSpace.FlatDim(), action: act}
	if s.learner, _ = a.Policy.(runners.Learner); s.learner != nil {
		proto.Learns = true
	}
	s.obsBox, _ = a.Spec.ObservationSpace.(*spaces.Box)
	s.obsAcc = [][]int64{{int64(s.obsDim)}}
	s.maskAcc = [][]int64{{int64(a.Spec.MaskLen)}}
	return s, nil
}

func joinStrings(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += "; "
		}
		out += x
	}
	return out
}

// newWorker returns a worker with a policy of its own (New) or the shared one.
func (s *servedAgent) newWorker() (*worker, error) {
	w := &worker{policy: s.Policy}
	if s.New != nil {
		p, err := s.New()
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "agent %s: building a policy: %v", s.Spec.Name, err)
		}
		if p == nil {
			return nil, status.Errorf(codes.Internal, "agent %s: building a policy: New returned nil", s.Spec.Name)
		}
		w.policy = p
	}
	w.batch, _ = w.policy.(vector.BatchPolicy)
	return w, nil
}

// get takes a worker from the pool, or builds one.
func (s *servedAgent) get() (*worker, error) {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		w := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return w, nil
	}
	s.mu.Unlock()
	return s.newWorker()
}

func (s *servedAgent) put(w *worker) {
	s.mu.Lock()
	s.free = append(s.free, w)
	s.mu.Unlock()
}

// call calls the worker's policy, serialised for a shared policy that is not
// concurrent, with a panic turned into an error.
func (s *servedAgent) call(ctx context.Context, w *worker, obs []float32, mask []bool) (raw agent.RawAction, err error) {
	if s.New == nil && !s.Concurrent {
		s.shared.Lock()
		defer s.shared.Unlock()
	}
	defer func() {
		if v := recover(); v != nil {
			err = status.Errorf(codes.Internal, "agent %s: the policy panicked: %v\n%s", s.Spec.Name, v, debug.Stack())
		}
	}()
	raw, err = w.policy.Act(ctx, obs, mask)
	if err != nil {
		return raw, statusOf(err, codes.Unknown, "agent %s: the policy failed", s.Spec.Name)
	}
	if err := raw.Check(s.Spec.ActionSpace); err != nil {
		return raw, status.Errorf(codes.Internal, "agent %s: the policy chose an action outside its space: %v", s.Spec.Name, err)
	}
	return raw, nil
}

func (s *servedAgent) callBatch(ctx context.Context, w *worker, b vector.Batch, out []agent.RawAction) (err error) {
	if s.New == nil && !s.Concurrent {
		s.shared.Lock()
		defer s.shared.Unlock()
	}
	defer func() {
		if v := recover(); v != nil {
			err = status.Errorf(codes.Internal, "agent %s: the policy panicked: %v\n%s", s.Spec.Name, v, debug.Stack())
		}
	}()
	if err := w.batch.ActBatch(ctx, b, out); err != nil {
		return statusOf(err, codes.Unknown, "agent %s: the policy failed", s.Spec.Name)
	}
	for r := range out {
		if err := out[r].Check(s.Spec.ActionSpace); err != nil {
			return status.Errorf(codes.Internal, "agent %s: the policy chose an action outside its space for row %d: %v", s.Spec.Name, r, err)
		}
	}
	return nil
}

// decodeObs decodes observations, one or several rows of obsDim: no NaN, and
// within the bounds of a Box observation space (which rejects NaN itself).
func (s *servedAgent) decodeObs(field string, t *pb.Tensor, scratch *[]float32, accept ...[]int64) ([]float32, *FieldError) {
	if s.obsBox == nil {
		return decodeFloat32(field, t, scratch, accept...)
	}
	obs, fe := decodeFloat32Any(field, t, scratch, accept...)
	if fe != nil {
		return nil, fe
	}
	for r := 0; r < len(obs); r += s.obsDim {
		if err := s.obsBox.CheckFloats(obs[r : r+s.obsDim]); err != nil {
			reason := err.Error()
			if len(obs) > s.obsDim {
				reason = fmt.Sprintf("row %d: %s", r/s.obsDim, reason)
			}
			return nil, &FieldError{Field: field + ".data", Reason: reason}
		}
	}
	return obs, nil
}

// act answers one request with w, writing the action into resp (owned: the
// response's bytes may reuse w's buffers, as on a stream, which marshals before the
// next request), after it passes the request's feedback on. A request with feedback
// and no observation is not answered: act returns false.
func (s *servedAgent) act(ctx context.Context, w *worker, req *pb.ActRequest, resp *pb.ActResponse, owned bool) (bool, error) {
	if err := s.feed(ctx, w, req); err != nil {
		return false, err
	}
	if req.GetObservation() == nil && len(req.GetFeedback()) > 0 {
		return false, nil
	}
	return true, s.answer(ctx, w, req, resp, owned)
}

// answer acts on the observation of req.
func (s *servedAgent) answer(ctx context.Context, w *worker, req *pb.ActRequest, resp *pb.ActResponse, owned bool) error {
	obs, fe := s.decodeObs("observation", req.GetObservation(), &w.obs, s.obsAcc...)
	if fe != nil {
		return invalid(fe)
	}
	var mask []bool
	if req.GetMask() != nil {
		if s.Spec.MaskLen == 0 {
			return invalid(fieldErrorf("mask", "agent %s has no action mask; leave the field out", s.Spec.Name))
		}
		if mask, fe = decodeBool("mask", req.GetMask(), s.maskAcc...); fe != nil {
			return invalid(fe)
		}
		if !slices.Contains(mask, true) {
			return invalid(fieldErrorf("mask.data", "allows no action"))
		}
	}
	raw, err := s.call(ctx, w, obs, mask)
	if err != nil {
		return err
	}
	if resp.Action == nil {
		resp.Action = &pb.Tensor{}
	}
	w.bytes = s.action.encode(resp.Action, raw, w.bytes, owned)
	resp.Seq = req.GetSeq()
	return nil
}

// agentService implements AgentService over served agents.
type agentService struct {
	pb.UnimplementedAgentServiceServer
	srv    *Server
	agents map[string]*servedAgent
	order  []string
}

// AddAgents serves agents on the server (AgentService). Their names must be
// distinct; with keys, each agent needs a key of its own or the default key.
func (s *Server) AddAgents(agents ...Agent) error {
	if len(agents) == 0 {
		return fmt.Errorf("%w: AddAgents: no agent", ErrConfig)
	}
	svc := &agentService{srv: s, agents: map[string]*servedAgent{}}
	var errs []error
	for _, a := range agents {
		sa, err := newServedAgent(a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := svc.agents[sa.Spec.Name]; dup {
			errs = append(errs, fmt.Errorf("%w: agent %s is served twice", ErrConfig, sa.Spec.Name))
			continue
		}
		if !s.cfg.keys.Empty() {
			if _, ok := s.cfg.keys.For(sa.Spec.Name); !ok {
				errs = append(errs, fmt.Errorf("%w: agent %s has no API key (keys: %s)", ErrConfig, sa.Spec.Name, strings.Join(s.cfg.keys.Names(), ", ")))
			}
		}
		svc.agents[sa.Spec.Name] = sa
		svc.order = append(svc.order, sa.Spec.Name)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if err := s.register(&pb.AgentService_ServiceDesc, svc, svc.scope, nil); err != nil {
		return err
	}
	s.setServed(pb.AgentService_ServiceDesc.ServiceName, svc.order)
	return nil
}

// ServeAgent serves agents on lis until ctx is done (see Server.Serve): the
// shortest way to put a policy on the network.
func ServeAgent(ctx context.Context, lis net.Listener, agents []Agent, opts ...ServerOption) error {
	s, err := NewServer(opts...)
	if err != nil {
		_ = lis.Close()
		return err
	}
	if err := s.AddAgents(agents...); err != nil {
		_ = lis.Close()
		return err
	}
	return s.Serve(ctx, lis)
}

// agentNamer is a request that names a served agent.
type agentNamer interface{ GetAgent() string }

// scope names the agent a request addresses, served or not: the key check comes
// first, so that a key learns nothing of agents it does not grant. A request that
// names no agent addresses the server's only agent; with several, nothing (the
// handler asks to name one), and the Agents request nothing (it lists the agents
// the key grants).
func (a *agentService) scope(_ string, req any) ([]string, error) {
	r, ok := req.(agentNamer)
	if !ok {
		return nil, nil
	}
	name := r.GetAgent()
	if name == "" {
		if len(a.order) != 1 {
			return nil, nil
		}
		name = a.order[0]
	}
	return []string{name}, nil
}

// agent returns the named agent, or the only one for "". The agents an error lists
// are those the call's key grants.
func (a *agentService) agent(ctx context.Context, name string) (*servedAgent, error) {
	if name == "" && len(a.order) == 1 {
		return a.agents[a.order[0]], nil
	}
	if sa, ok := a.agents[name]; ok && name != "" {
		return sa, nil
	}
	agents := "the API key grants no agent this server serves"
	if usable := grantFrom(ctx).usable(a.order); len(usable) > 0 {
		agents = "agents: " + strings.Join(usable, ", ")
	}
	if name == "" {
		return nil, invalid(fieldErrorf("agent", "empty, but the server serves several agents: name one (%s)", agents))
	}
	return nil, status.Errorf(codes.NotFound, "no agent %q (%s)", name, agents)
}

func (a *agentService) Spec(ctx context.Context, req *pb.AgentSpecRequest) (*pb.AgentSpec, error) {
	sa, err := a.agent(ctx, req.GetAgent())
	if err != nil {
		return nil, err
	}
	return sa.proto, nil
}

func (a *agentService) Agents(ctx context.Context, _ *pb.AgentsRequest) (*pb.AgentsResponse, error) {
	g := grantFrom(ctx)
	resp := &pb.AgentsResponse{}
	for _, name := range a.order {
		if g.allows(name) {
			resp.Agents = append(resp.Agents, a.agents[name].proto)
		}
	}
	return resp, nil
}

func (a *agentService) Act(ctx context.Context, req *pb.ActRequest) (*pb.ActResponse, error) {
	sa, err := a.agent(ctx, req.GetAgent())
	if err != nil {
		return nil, err
	}
	w, err := sa.get()
	if err != nil {
		return nil, err
	}
	defer sa.put(w)
	resp := &pb.ActResponse{}
	if _, err := sa.act(ctx, w, req, resp, false); err != nil {
		return nil, err
	}
	return resp, nil // empty for a request with only feedback
}

// ActStream answers requests on a stream. The requests are read and answered by a
// goroutine of the stream's own, so that this one can end the stream when the
// server shuts down while the stream waits for its next request.
func (a *agentService) ActStream(stream grpc.BidiStreamingServer[pb.ActRequest, pb.ActResponse]) error {
	st := &streamState{done: make(chan error, 1)}
	st.phase.Store(phaseIdle)
	go a.serveStream(stream, st)
	select {
	case err := <-st.done:
		return err
	case <-a.srv.draining:
	}
	if st.phase.CompareAndSwap(phaseIdle, phaseClosed) {
		return nil // waiting for a request: end the stream now
	}
	return <-st.done // answering one: the loop ends after it
}

// The phases of a stream's loop.
const (
	phaseIdle   int32 = 1 + iota // waiting for a request
	phaseBusy                    // answering one
	phaseClosed                  // the handler ended the stream
)

type streamState struct {
	phase atomic.Int32
	done  chan error
}

func (a *agentService) serveStream(stream grpc.BidiStreamingServer[pb.ActRequest, pb.ActResponse], st *streamState) {
	ctx := stream.Context()
	var (
		cur  *servedAgent
		w    *worker
		req  pb.ActRequest
		resp = pb.ActResponse{Action: &pb.Tensor{}}
	)
	for {
		if err := stream.RecvMsg(&req); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			st.done <- err
			return
		}
		if !st.phase.CompareAndSwap(phaseIdle, phaseBusy) {
			return // the handler ended the stream at shutdown
		}
		err := func() error {
			sa := cur
			var err error
			if sa == nil || req.GetAgent() != sa.Spec.Name {
				if sa, err = a.agent(ctx, req.GetAgent()); err != nil {
					return err
				}
			}
			if sa != cur {
				if w, err = sa.newWorker(); err != nil {
					return err
				}
				cur = sa
			}
			answered, err := sa.act(ctx, w, &req, &resp, true)
			if err != nil || !answered {
				return err
			}
			return stream.SendMsg(&resp)
		}()
		if err != nil {
			st.done <- err
			return
		}
		st.phase.Store(phaseIdle)
		select {
		case <-a.srv.draining:
			st.done <- nil // the server shuts down: end the stream after this answer
			return
		default:
		}
	}
}

func (a *agentService) ActBatch(ctx context.Context, req *pb.ActBatchRequest) (*pb.ActBatchResponse, error) {
	defer a.srv.codec.release(req) // the observations are used up when this returns
	sa, err := a.agent(ctx, req.GetAgent())
	if err != nil {
		return nil, err
	}
	t := req.GetObservations()
	if t == nil {
		return nil, invalid(fieldErrorf("observations", "missing"))
	}
	if len(t.GetShape()) != 2 {
		return nil, invalid(fieldErrorf("observations.shape", "%s, want [N %d]", shapeString(t.GetShape()), sa.obsDim))
	}
	n64 := t.GetShape()[0]
	if _, fe := elements("observations", t.GetShape()); fe != nil {
		return nil, invalid(fe)
	}
	n := int(n64)
	w, err := sa.get()
	if err != nil {
		return nil, err
	}
	defer sa.put(w)
	obs, fe := sa.decodeObs("observations", t, &w.obs, []int64{n64, int64(sa.obsDim)})
	if fe != nil {
		return nil, invalid(fe)
	}
	var masks []bool
	if req.GetMasks() != nil {
		if sa.Spec.MaskLen == 0 {
			return nil, invalid(fieldErrorf("masks", "agent %s has no action mask; leave the field out", sa.Spec.Name))
		}
		if masks, fe = decodeBool("masks", req.GetMasks(), []int64{n64, int64(sa.Spec.MaskLen)}); fe != nil {
			return nil, invalid(fe)
		}
		for r := range n {
			if !slices.Contains(masks[r*sa.Spec.MaskLen:(r+1)*sa.Spec.MaskLen], true) {
				return nil, invalid(fieldErrorf("masks.data", "row %d allows no action", r))
			}
		}
	}
	b := vector.Batch{Obs: obs, Masks: masks, ObsDim: sa.obsDim}
	if masks != nil {
		b.MaskLen = sa.Spec.MaskLen
	}
	if w.batch != nil {
		w.rows = grow(w.rows, n)
		w.copies = grow(w.copies, n)
		for i := range w.copies {
			w.copies[i] = i
		}
		b.Copies = w.copies
		clear(w.rows)
		if err := sa.callBatch(ctx, w, b, w.rows); err != nil {
			return nil, err
		}
		return &pb.ActBatchResponse{Actions: encodeRows(&sa.action, w.rows)}, nil
	}
	// One call per row, the actions written straight into the response's elements
	// (the policy may reuse the slices of its actions).
	dim := sa.action.dim
	var ints []int64
	var floats []float32
	if sa.action.dtype == pb.DType_DTYPE_INT64 {
		ints = make([]int64, 0, n*dim)
	} else {
		floats = make([]float32, 0, n*dim)
	}
	for r := range n {
		var mask []bool
		if masks != nil {
			mask = b.Mask(r)
		}
		raw, err := sa.call(ctx, w, obs[r*sa.obsDim:(r+1)*sa.obsDim:(r+1)*sa.obsDim], mask)
		if err != nil {
			return nil, err
		}
		switch sa.action.kind {
		case spaces.KindDiscrete:
			ints = append(ints, raw.Int)
		case spaces.KindBox:
			floats = append(floats, raw.Floats...)
		default:
			ints = append(ints, raw.Ints...)
		}
	}
	shape := []int64{n64, int64(dim)}
	if sa.action.kind == spaces.KindDiscrete {
		shape = shape[:1]
	}
	if ints != nil {
		return &pb.ActBatchResponse{Actions: setTensor(&pb.Tensor{}, pb.DType_DTYPE_INT64, int64Bytes(ints, nil), shape...)}, nil
	}
	return &pb.ActBatchResponse{Actions: setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, float32Bytes(floats, nil), shape...)}, nil
}

// encodeRows writes n actions as one tensor with a leading dimension n; its bytes
// are its own.
func encodeRows(a *actionShape, rows []agent.RawAction) *pb.Tensor {
	n := int64(len(rows))
	switch a.kind {
	case spaces.KindDiscrete:
		v := make([]int64, len(rows))
		for i, r := range rows {
			v[i] = r.Int
		}
		return setTensor(&pb.Tensor{}, pb.DType_DTYPE_INT64, int64Bytes(v, nil), n)
	case spaces.KindBox:
		v := make([]float32, 0, len(rows)*a.dim)
		for _, r := range rows {
			v = append(v, r.Floats...)
		}
		return setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, float32Bytes(v, nil), n, int64(a.dim))
	default:
		v := make([]int64, 0, len(rows)*a.dim)
		for _, r := range rows {
			v = append(v, r.Ints...)
		}
		return setTensor(&pb.Tensor{}, pb.DType_DTYPE_INT64, int64Bytes(v, nil), n, int64(a.dim))
	}
}
