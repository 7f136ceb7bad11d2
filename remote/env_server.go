package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// envService implements EnvService over a registry.
type envService struct {
	pb.UnimplementedEnvServiceServer
	reg    *registry.Registry // a view that opens configurations as remote ones
	idle   time.Duration
	budget *budget

	mu       sync.Mutex
	sessions map[string]*session
	batches  batches // MakeBatch's sessions (env_batch.go)
}

// session is one environment made by a client.
type session struct {
	id      string
	env     string
	mu      sync.Mutex // one call at a time
	m       env.MultiAgent
	specs   []env.Spec
	proto   *pb.EnvSpec
	actions map[string]*actionShape // by agent name
	broken  error                   // set when the environment panicked
	closed  bool
	used    time.Time // guarded by envService.mu
	owner   string    // the key that made it (keyOf)
	cost    int64     // its bytes in the owner's budget
	ints    []int64
	floats  []float32
}

// AddEnvs serves the environments of reg on the server (EnvService): clients make
// sessions of them by name, reset and step them. With keys, a session's calls need a
// key that grants its environment's name.
//
// The configurations that clients send are opened as configurations from the
// network (registry.Registry.Remote): they name no file outside the folder
// WithConfigDir allows, and ask for no more than the environments' limits
// (WithEnvLimits). Each session is counted against its key's budgets (WithMaxSessions,
// WithMaxSessionBytes, WithMaxKeyBytes). AddEnvs fails for a limit that no entry of
// reg declares.
func (s *Server) AddEnvs(reg *registry.Registry) error {
	if reg == nil {
		return fmt.Errorf("%w: AddEnvs: nil registry", ErrConfig)
	}
	view, err := reg.Remote(s.cfg.envRemote)
	if err != nil {
		return fmt.Errorf("%w: AddEnvs: %w", ErrConfig, err)
	}
	svc := &envService{reg: view, idle: s.cfg.sessionIdle, budget: newBudget(&s.cfg), sessions: map[string]*session{}}
	s.cfg.metrics.AddSessions(svc.openSessions)
	return s.register(envServiceDesc(), svc, svc.scope, svc.closeAll)
}

// openSessions counts the sessions open, Make's and MakeBatch's.
func (e *envService) openSessions() int {
	e.mu.Lock()
	n := len(e.sessions)
	e.mu.Unlock()
	e.batches.mu.Lock()
	defer e.batches.mu.Unlock()
	return n + len(e.batches.m)
}

// closeAliasMethod is CloseSession's former name, which shadowed the close() of
// grpc-js clients made from the contract. The contract names it no more, and
// servers answer it on the wire (/baton.v1.EnvService/Close) as CloseSession, for
// clients built before the rename. It is deprecated.
const closeAliasMethod = "Close"

// envServiceDesc is EnvService's description with closeAliasMethod beside
// CloseSession.
func envServiceDesc() *grpc.ServiceDesc {
	d := pb.EnvService_ServiceDesc
	d.Methods = slices.Clone(d.Methods)
	for _, m := range pb.EnvService_ServiceDesc.Methods {
		if m.MethodName == "CloseSession" {
			d.Methods = append(d.Methods, grpc.MethodDesc{MethodName: closeAliasMethod, Handler: m.Handler})
		}
	}
	return &d
}

// ServeEnv serves the environments of reg on lis until ctx is done (see
// Server.Serve).
func ServeEnv(ctx context.Context, lis net.Listener, reg *registry.Registry, opts ...ServerOption) error {
	s, err := NewServer(opts...)
	if err != nil {
		_ = lis.Close()
		return err
	}
	if err := s.AddEnvs(reg); err != nil {
		_ = lis.Close()
		return err
	}
	return s.Serve(ctx, lis)
}

type sessionNamer interface{ GetSession() string }

// scope names the environment a request addresses.
func (e *envService) scope(_ string, req any) ([]string, error) {
	switch r := req.(type) {
	case *pb.MakeRequest:
		return []string{r.GetEnv()}, nil
	case *pb.MakeBatchRequest:
		return []string{r.GetEnv()}, nil
	case *pb.EnvSpecRequest:
		if r.GetSession() == "" {
			return []string{r.GetEnv()}, nil
		}
	case *pb.CloseRequest:
		if b := e.batches.get(r.GetSession()); b != nil {
			return []string{b.env}, nil
		}
		e.mu.Lock()
		ss := e.sessions[r.GetSession()]
		e.mu.Unlock()
		if ss == nil {
			return nil, nil // closing what is not there succeeds, and tells nothing
		}
		return []string{ss.env}, nil
	case *pb.EnvsRequest:
		return nil, nil
	}
	if r, ok := req.(sessionNamer); ok {
		if b := e.batches.get(r.GetSession()); b != nil {
			return []string{b.env}, nil
		}
		ss, err := e.session(r.GetSession())
		if err != nil {
			return nil, err
		}
		return []string{ss.env}, nil
	}
	return nil, nil
}

func (e *envService) session(id string) (*session, error) {
	if id == "" {
		return nil, invalid(fieldErrorf("session", "empty"))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ss := e.sessions[id]
	if ss == nil {
		return nil, status.Error(codes.NotFound, "no session of that id (closed, expired, or never made)")
	}
	ss.used = time.Now()
	return ss, nil
}

func (e *envService) Envs(ctx context.Context, _ *pb.EnvsRequest) (*pb.EnvsResponse, error) {
	g := grantFrom(ctx)
	resp := &pb.EnvsResponse{}
	for entry := range e.reg.All() {
		if g.allows(entry.Name) {
			resp.Envs = append(resp.Envs, &pb.EnvInfo{Name: entry.Name, Description: entry.Description})
		}
	}
	return resp, nil
}

// open builds an environment of a name and configuration, and returns it with its
// factory.
func (e *envService) open(name, config string, maxTicks int64) (registry.Factory, env.MultiAgent, error) {
	if maxTicks < 0 || maxTicks > 1<<31 {
		return nil, nil, invalid(fieldErrorf("max_ticks", "%d, want 0 (no limit) to %d", maxTicks, 1<<31))
	}
	f, err := e.factory(name, config)
	if err != nil {
		return nil, nil, err
	}
	m, err := safe(func() (env.MultiAgent, error) { return f.NewEnv(registry.EnvOptions{MaxTicks: int(maxTicks)}) })
	if err != nil {
		return nil, nil, status.Errorf(codes.Internal, "%s: building the environment: %v", name, err)
	}
	return f, m, nil
}

// factory opens a configuration of the environment name, as one from the network.
// A configuration over a limit of the environment is RESOURCE_EXHAUSTED, any other
// it rejects INVALID_ARGUMENT (the entry's message, which tells nothing of the
// server's files: registry.Remote.ReadFile).
func (e *envService) factory(name, config string) (registry.Factory, error) {
	entry, err := e.reg.Lookup(name)
	if err != nil {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	var cfg []byte
	if config != "" {
		cfg = []byte(config)
	}
	f, err := safe(func() (registry.Factory, error) { return entry.Open(cfg) })
	if err != nil {
		if le, ok := errors.AsType[*registry.LimitError](err); ok {
			return nil, status.Errorf(codes.ResourceExhausted, "config: %v", le)
		}
		return nil, invalid(fieldErrorf("config", "%s rejects it: %v", name, err))
	}
	if f == nil {
		return nil, status.Errorf(codes.Internal, "%s: the registry entry opened no factory", name)
	}
	return f, nil
}

// sweep closes the sessions of both kinds unused for longer than the idle time, and
// gives their budgets back.
func (e *envService) sweep(now time.Time) {
	e.mu.Lock()
	for id, old := range e.sessions {
		if now.Sub(old.used) > e.idle {
			delete(e.sessions, id)
			e.budget.release(old.owner, old.cost)
		}
	}
	e.mu.Unlock()
	var idle []*batchSession
	e.batches.mu.Lock()
	for id, old := range e.batches.m {
		if now.Sub(old.used) > e.idle {
			delete(e.batches.m, id)
			idle = append(idle, old)
		}
	}
	e.batches.mu.Unlock()
	for _, old := range idle {
		e.budget.release(old.owner, old.cost)
		old.close()
	}
}

// safe calls f, turning a panic into a *panicError.
func safe[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return f()
}

// panicError is a panic of user code (an environment), recovered.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

func envSpecProto(name string, specs []env.Spec) (*pb.EnvSpec, error) {
	out := &pb.EnvSpec{Env: name}
	for _, s := range specs {
		p, err := agentSpecProto(s)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "%s: %v", name, err)
		}
		out.Agents = append(out.Agents, p)
	}
	return out, nil
}

func (e *envService) Spec(_ context.Context, req *pb.EnvSpecRequest) (*pb.EnvSpec, error) {
	if req.GetSession() != "" {
		ss, err := e.session(req.GetSession())
		if err != nil {
			return nil, err
		}
		return ss.proto, nil
	}
	if req.GetEnv() == "" {
		return nil, invalid(fieldErrorf("env", "empty: name an environment, or set session"))
	}
	_, m, err := e.open(req.GetEnv(), req.GetConfig(), 0)
	if err != nil {
		return nil, err
	}
	return envSpecProto(req.GetEnv(), m.Agents())
}

func (e *envService) Make(ctx context.Context, req *pb.MakeRequest) (*pb.MakeResponse, error) {
	if req.GetEnv() == "" {
		return nil, invalid(fieldErrorf("env", "empty"))
	}
	f, m, err := e.open(req.GetEnv(), req.GetConfig(), req.GetMaxTicks())
	if err != nil {
		return nil, err
	}
	ss := &session{env: req.GetEnv(), m: m, specs: m.Agents(), actions: map[string]*actionShape{}}
	if ss.proto, err = envSpecProto(ss.env, ss.specs); err != nil {
		return nil, err
	}
	for _, sp := range ss.specs {
		a, err := newActionShape(sp.ActionSpace)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "%s: agent %s: %v", ss.env, sp.Name, err)
		}
		ss.actions[sp.Name] = &a
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, status.Errorf(codes.Internal, "a session id: %v", err)
	}
	ss.id = hex.EncodeToString(b[:])
	c := sessionCost(ss.env, f, ss.specs, 0)
	if err := e.budget.check("Make", c); err != nil {
		return nil, err
	}
	now := time.Now()
	e.sweep(now)
	ss.owner, ss.cost = keyOf(ctx), c.bytes
	if err := e.budget.reserve("Make", ss.owner, c); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ss.used = now
	e.sessions[ss.id] = ss
	return &pb.MakeResponse{Session: ss.id, Spec: ss.proto}, nil
}

func (e *envService) CloseSession(_ context.Context, req *pb.CloseRequest) (*pb.CloseResponse, error) {
	e.mu.Lock()
	ss := e.sessions[req.GetSession()]
	delete(e.sessions, req.GetSession())
	e.mu.Unlock()
	if ss != nil {
		e.budget.release(ss.owner, ss.cost)
		ss.mu.Lock()
		ss.closed = true
		ss.mu.Unlock()
	}
	if b := e.batches.take(req.GetSession()); b != nil {
		e.budget.release(b.owner, b.cost)
		b.close()
	}
	return &pb.CloseResponse{}, nil
}

// closeAll drops every session, at shutdown.
func (e *envService) closeAll(context.Context) error {
	e.mu.Lock()
	clear(e.sessions)
	e.mu.Unlock()
	e.batches.closeAll()
	return nil
}

// lock takes a session for one call.
func (e *envService) lock(id string) (*session, error) {
	ss, err := e.session(id)
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	switch {
	case ss.closed:
		ss.mu.Unlock()
		return nil, status.Error(codes.NotFound, "the session was closed")
	case ss.broken != nil:
		ss.mu.Unlock()
		return nil, status.Errorf(codes.FailedPrecondition, "the session's environment panicked earlier (%v): close it and make another", ss.broken)
	}
	return ss, nil
}

func (e *envService) Reset(_ context.Context, req *pb.ResetRequest) (*pb.Turn, error) {
	ss, err := e.lock(req.GetSession())
	if err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	turn, err := safe(func() (env.Turn, error) { return ss.m.Reset(req.GetSeed()) })
	if err != nil {
		if _, ok := errors.AsType[*panicError](err); ok {
			ss.broken = err
			return nil, status.Errorf(codes.Internal, "%s: Reset: %v", ss.env, err)
		}
		return nil, status.Errorf(codes.FailedPrecondition, "%s: Reset: %v", ss.env, err)
	}
	if len(turn.Reports) == 0 {
		return nil, status.Errorf(codes.Internal, "%s: Reset reported no agent", ss.env)
	}
	return ss.turnProto(turn, req.GetInfo())
}

func (e *envService) Step(_ context.Context, req *pb.StepRequest) (*pb.Turn, error) {
	ss, err := e.lock(req.GetSession())
	if err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	id := req.GetAgentId()
	name, ok := agentOfID(id)
	if !ok {
		return nil, invalid(fieldErrorf("agent_id", "%q is not an agent id (NAME_K)", id))
	}
	shape := ss.actions[name]
	if shape == nil {
		return nil, invalid(fieldErrorf("agent_id", "%q: %s has no agent %s (agents: %s)", id, ss.env, name, specNames(ss.specs)))
	}
	var raw agent.RawAction
	var fe *FieldError
	raw, fe = shape.decode("action", req.GetAction(), &ss.ints, &ss.floats)
	if fe != nil {
		return nil, invalid(fe)
	}
	turn, err := safe(func() (env.Turn, error) { return ss.m.Step(id, raw) })
	if err != nil {
		if _, ok := errors.AsType[*panicError](err); ok {
			ss.broken = err
			return nil, status.Errorf(codes.Internal, "%s: Step: %v", ss.env, err)
		}
		return nil, stepStatus(err)
	}
	return ss.turnProto(turn, req.GetInfo())
}

// stepStatus maps the error of a refused step to its status.
func stepStatus(err error) error {
	switch {
	case errors.Is(err, env.ErrNotReset), errors.Is(err, env.ErrEpisodeOver),
		errors.Is(err, env.ErrNotActing):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, env.ErrOutsideSpace), errors.Is(err, env.ErrInvalidAction),
		errors.Is(err, env.ErrRejected), errors.Is(err, hrl.ErrNoTrigger), errors.Is(err, hrl.ErrInControl):
		return invalid(&FieldError{Field: "action", Reason: err.Error()})
	}
	return status.Errorf(codes.Unknown, "the environment refused the step: %v", err)
}

func specNames(specs []env.Spec) string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// agentOfID returns the name in an agent id "<name>_<k>".
func agentOfID(id string) (string, bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 || i == len(id)-1 {
		return "", false
	}
	for _, c := range id[i+1:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return id[:i], true
}

// turnProto copies a turn into its message: the response is marshaled after the
// session is released, so nothing may alias the environment's buffers.
func (ss *session) turnProto(t env.Turn, info bool) (*pb.Turn, error) {
	out := &pb.Turn{Next: t.Next, Over: t.Over, Tick: int64(t.Tick), Reports: make([]*pb.Report, len(t.Reports))}
	for i := range t.Reports {
		r := &t.Reports[i]
		out.Reports[i] = &pb.Report{
			AgentId:     r.AgentID,
			Agent:       r.Agent,
			ParentId:    r.ParentID,
			Observation: setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, append([]byte(nil), float32Bytes(r.Obs, nil)...), int64(len(r.Obs))),
			Reward:      r.Reward,
			Terminated:  r.Terminated,
			Truncated:   r.Truncated,
			Start:       r.Start,
			SpanTicks:   int64(r.SpanTicks),
			Clock:       &pb.Clock{Steps: int64(r.Clock.Steps), Tick: int64(r.Clock.Tick), SubEpisode: int64(r.Clock.SubEpisode)},
		}
		if r.Mask != nil {
			out.Reports[i].Mask = setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, append([]byte(nil), boolBytes(r.Mask)...), int64(len(r.Mask)))
		}
	}
	if info {
		v, err := safe(func() (any, error) { return ss.m.Info(), nil })
		if err != nil {
			return nil, status.Errorf(codes.Internal, "%s: Info: %v", ss.env, err)
		}
		js, err := json.Marshal(v)
		if err != nil {
			js, _ = json.Marshal(fmt.Sprint(v))
		}
		out.InfoJson = string(js)
	}
	return out, nil
}
