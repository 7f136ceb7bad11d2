package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
)

// The methods of EnvService, as errors name them.
const (
	methodEnvs  = "EnvService/Envs"
	methodSpecE = "EnvService/Spec"
	methodMake  = "EnvService/Make"
	methodReset = "EnvService/Reset"
	methodStep  = "EnvService/Step"
	methodClose = "EnvService/CloseSession"
)

// EnvInfo is an environment an environment server can make.
type EnvInfo struct {
	Name, Description string
}

// EnvClient is a client of an environment server: it lists its environments and
// makes sessions of them (Make), each an env.MultiAgent. It is safe for concurrent
// use; Close closes its sessions and the connection.
type EnvClient struct {
	c   *conn
	api pb.EnvServiceClient

	mu       sync.Mutex
	sessions map[*Env]struct{}
	batches  map[batchCloser]struct{} // MakeBatch's and MakeMultiBatch's (env_batch_client.go)
	closed   bool
}

// DialEnv connects to the environment server at target ("host:port",
// "grpc://host:port", "grpcs://host:port") and lists its environments, under the
// call deadline, so that a wrong address or key fails now.
func DialEnv(ctx context.Context, target string, opts ...DialOption) (*EnvClient, error) {
	c, _, err := dial(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	e := &EnvClient{c: c, api: pb.NewEnvServiceClient(c.cc), sessions: map[*Env]struct{}{}}
	if _, err := e.Envs(ctx); err != nil {
		_ = c.close()
		return nil, err
	}
	return e, nil
}

// Envs lists the environments the server makes (those the client's key grants).
func (c *EnvClient) Envs(ctx context.Context) ([]EnvInfo, error) {
	var resp *pb.EnvsResponse
	err := c.c.call(ctx, methodEnvs, "", func(ctx context.Context) error {
		var err error
		resp, err = c.api.Envs(ctx, &pb.EnvsRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]EnvInfo, len(resp.GetEnvs()))
	for i, e := range resp.GetEnvs() {
		out[i] = EnvInfo{Name: e.GetName(), Description: e.GetDescription()}
	}
	return out, nil
}

// Spec describes the agents of the environment name with a JSON configuration
// (nil for its defaults).
func (c *EnvClient) Spec(ctx context.Context, name string, config []byte) ([]env.Spec, error) {
	var resp *pb.EnvSpec
	err := c.c.call(ctx, methodSpecE, "environment "+name, func(ctx context.Context) error {
		var err error
		resp, err = c.api.Spec(ctx, &pb.EnvSpecRequest{Env: name, Config: string(config)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return c.specs(resp)
}

func (c *EnvClient) specs(p *pb.EnvSpec) ([]env.Spec, error) {
	out := make([]env.Spec, len(p.GetAgents()))
	for i, a := range p.GetAgents() {
		s, err := agentSpecFromProto(a)
		if err != nil {
			return nil, fmt.Errorf("%w: environment %s at %s: agent %d: %w", ErrMismatch, p.GetEnv(), c.c.addr, i, err)
		}
		out[i] = s
	}
	return out, nil
}

// Make opens a session: an environment name with a JSON configuration (nil for its
// defaults) and a tick limit (0 for the environment's own).
func (c *EnvClient) Make(ctx context.Context, name string, config []byte, maxTicks int) (*Env, error) {
	var resp *pb.MakeResponse
	err := c.c.call(ctx, methodMake, "environment "+name, func(ctx context.Context) error {
		var err error
		resp, err = c.api.Make(ctx, &pb.MakeRequest{Env: name, Config: string(config), MaxTicks: int64(maxTicks)})
		return err
	})
	if err != nil {
		return nil, err
	}
	specs, err := c.specs(resp.GetSpec())
	if err != nil {
		return nil, err
	}
	e := &Env{c: c, name: name, session: resp.GetSession(), specs: specs, actions: map[string]*actionShape{}}
	for _, s := range specs {
		a, err := newActionShape(s.ActionSpace)
		if err != nil {
			return nil, fmt.Errorf("%w: environment %s at %s: agent %s: %w", ErrMismatch, name, c.c.addr, s.Name, err)
		}
		e.actions[s.Name] = &a
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%w: the client is closed", ErrConfig)
	}
	c.sessions[e] = struct{}{}
	return e, nil
}

// Factory returns a registry.Factory whose environments are sessions of the
// environment name with a JSON configuration, made on this client's server: a
// registry entry with it runs trials of a remote environment. Its NewEnv calls
// the server under the client's call deadline.
func (c *EnvClient) Factory(name string, config []byte) registry.Factory {
	config = slices.Clone(config)
	return registry.FactoryFunc(func(o registry.EnvOptions) (env.MultiAgent, error) {
		return c.Make(c.c.base, name, config, o.MaxTicks)
	})
}

// Close closes every session still open (each under the call deadline) and the
// connection.
func (c *EnvClient) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	open := make([]*Env, 0, len(c.sessions))
	for e := range c.sessions {
		open = append(open, e)
	}
	batches := make([]batchCloser, 0, len(c.batches))
	for b := range c.batches {
		batches = append(batches, b)
	}
	c.mu.Unlock()
	for _, e := range open {
		_ = e.close(c.c.base)
	}
	for _, b := range batches {
		_ = b.close(c.c.base)
	}
	return c.c.close()
}

// Env is a session of an environment server: an env.MultiAgent whose Reset and Step
// run on the server, so that a trial cannot tell it from a local environment.
//
// The methods of env.MultiAgent take no context: they run under the client's call
// deadline. ResetContext and StepContext take the caller's context. Each returns the
// call's error: a Reset the server's environment refused comes back with the server's
// message and a status code, which errors.Is matches against this package's sentinels.
// Step is never retried: a step that timed out may have happened.
//
// The slices of the Turns it returns belong to the Env and stay valid until its next
// Reset or Step, as a local environment's do. An Env is not safe for concurrent use.
type Env struct {
	c       *EnvClient
	name    string
	session string
	specs   []env.Spec
	actions map[string]*actionShape
	info    bool
	infoJS  json.RawMessage

	reports []env.Report
	obs     [][]float32 // scratch for observations that cannot be aliased
	buf     []byte
	actT    pb.Tensor
}

var _ env.MultiAgent = (*Env)(nil)

// Session returns the session's id.
func (e *Env) Session() string { return e.session }

// Agents describes the environment's agents, in its order.
func (e *Env) Agents() []env.Spec { return slices.Clone(e.specs) }

// WithInfo makes every later Reset and Step ask the server for the environment's
// info (which costs time); Info then returns it.
func (e *Env) WithInfo(on bool) { e.info = on }

// Info returns the environment's info of the latest Reset or Step as JSON, when
// WithInfo asked for it; nil otherwise.
func (e *Env) Info() any {
	if e.infoJS == nil {
		return nil
	}
	return e.infoJS
}

// Reset starts an episode under the client's call deadline.
func (e *Env) Reset(seed uint64) (env.Turn, error) {
	return e.ResetContext(e.c.c.base, seed)
}

// ResetContext starts an episode.
func (e *Env) ResetContext(ctx context.Context, seed uint64) (env.Turn, error) {
	var resp *pb.Turn
	err := e.c.c.call(ctx, methodReset, e.target(), func(ctx context.Context) error {
		var err error
		resp, err = e.c.api.Reset(ctx, &pb.ResetRequest{Session: e.session, Seed: seed, Info: e.info})
		return err
	})
	if err != nil {
		return env.Turn{}, err
	}
	return e.turn(resp)
}

// Step applies the action of the acting agent id under the client's call deadline.
func (e *Env) Step(id string, a agent.RawAction) (env.Turn, error) {
	return e.StepContext(e.c.c.base, id, a)
}

// StepContext applies the action of the acting agent id.
func (e *Env) StepContext(ctx context.Context, id string, a agent.RawAction) (env.Turn, error) {
	name, ok := agentOfID(id)
	shape := e.actions[name]
	if !ok || shape == nil {
		return env.Turn{}, fmt.Errorf("%w: %s: %q is not the id of an agent of %s (agents: %s)", env.ErrUnknownAgent, e.target(), id, e.name, specNames(e.specs))
	}
	if err := a.Check(shape.space); err != nil {
		return env.Turn{}, fmt.Errorf("%s: agent %s: %w", e.target(), id, err)
	}
	e.buf = shape.encode(&e.actT, a, e.buf, true)
	req := &pb.StepRequest{Session: e.session, AgentId: id, Action: &e.actT, Info: e.info}
	cctx, cancel := context.WithTimeout(ctx, e.c.c.cfg.timeout)
	defer cancel()
	resp, err := e.c.api.Step(cctx, req)
	if err != nil {
		return env.Turn{}, e.c.c.fail(ctx, methodStep, e.target(), err, 1)
	}
	return e.turn(resp)
}

func (e *Env) target() string {
	return "environment " + e.name + " (session " + shortID(e.session) + ")"
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// turn reads a Turn into the Env's buffers.
func (e *Env) turn(p *pb.Turn) (env.Turn, error) {
	n := len(p.GetReports())
	e.reports = grow(e.reports, n)
	for len(e.obs) < n {
		e.obs = append(e.obs, nil)
	}
	bad := func(i int, fe *FieldError) error {
		return fmt.Errorf("%w: %s: the turn's reports[%d].%w", ErrMismatch, e.target(), i, fe)
	}
	for i, r := range p.GetReports() {
		spec := e.spec(r.GetAgent())
		if spec == nil {
			return env.Turn{}, bad(i, fieldErrorf("agent", "%q is not an agent of %s", r.GetAgent(), e.name))
		}
		obs, fe := decodeFloat32("observation", r.GetObservation(), &e.obs[i], []int64{int64(spec.ObservationSpace.FlatDim())})
		if fe != nil {
			return env.Turn{}, bad(i, fe)
		}
		var mask []bool
		if r.GetMask() != nil {
			if mask, fe = decodeBool("mask", r.GetMask(), []int64{int64(spec.MaskLen)}); fe != nil {
				return env.Turn{}, bad(i, fe)
			}
		}
		c := r.GetClock()
		e.reports[i] = env.Report{
			AgentID: r.GetAgentId(), Agent: r.GetAgent(), ParentID: r.GetParentId(),
			Obs: obs, Mask: mask, Reward: r.GetReward(),
			Terminated: r.GetTerminated(), Truncated: r.GetTruncated(), Start: r.GetStart(),
			SpanTicks: int(r.GetSpanTicks()),
			Clock:     agent.Clock{Steps: int(c.GetSteps()), Tick: int(c.GetTick()), SubEpisode: int(c.GetSubEpisode())},
		}
	}
	e.infoJS = nil
	if js := p.GetInfoJson(); js != "" {
		e.infoJS = json.RawMessage(js)
	}
	return env.Turn{Reports: e.reports[:n:n], Next: p.GetNext(), Over: p.GetOver(), Tick: int(p.GetTick())}, nil
}

func (e *Env) spec(name string) *env.Spec {
	for i := range e.specs {
		if e.specs[i].Name == name {
			return &e.specs[i]
		}
	}
	return nil
}

// Close ends the session on the server.
func (e *Env) Close(ctx context.Context) error {
	e.c.mu.Lock()
	delete(e.c.sessions, e)
	e.c.mu.Unlock()
	return e.close(ctx)
}

func (e *Env) close(ctx context.Context) error { return e.c.closeSession(ctx, e.target(), e.session) }

// closeSession ends a session, plain or batch, on the server; target names it in errors.
func (c *EnvClient) closeSession(ctx context.Context, target, session string) error {
	return c.c.call(ctx, methodClose, target, func(ctx context.Context) error {
		_, err := c.api.CloseSession(ctx, &pb.CloseRequest{Session: session})
		return err
	})
}
