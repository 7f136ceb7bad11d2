package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxCampaign bounds the trials of one Start.
const maxCampaign = 1 << 20

// maxWatch bounds the trials one Watch call follows (a goroutine each).
const maxWatch = 1 << 16

// maxRemoteAgents bounds the remote agents a trial server keeps connections to.
const maxRemoteAgents = 64

// trialService implements TrialService over a runners.Controller.
type trialService struct {
	pb.UnimplementedTrialServiceServer
	srv      *Server
	ctrl     *runners.Controller
	remoteOK bool
	remote   []DialOption
	keys     Keys

	mu      sync.Mutex
	envOf   map[string]string       // trial id -> environment, for the key check
	clients map[string]*AgentClient // remote actors by agent name and target
	players map[string]*clientActor // client actors by trial id and agent name
}

// AddTrials serves a controller on the server (TrialService): clients start trials
// of the controller's registry, watch, stop and reward them. The server's shutdown
// shuts the controller down (its running trials stop). With keys, a call needs a key
// that grants the environment of the trials it addresses.
func (s *Server) AddTrials(c *runners.Controller) error {
	if c == nil {
		return fmt.Errorf("%w: AddTrials: nil controller", ErrConfig)
	}
	svc := &trialService{srv: s, ctrl: c, remoteOK: s.cfg.remoteOK, remote: s.cfg.remote, keys: s.cfg.remoteKeys, envOf: map[string]string{}, clients: map[string]*AgentClient{}, players: map[string]*clientActor{}}
	return s.register(&pb.TrialService_ServiceDesc, svc, svc.scope, svc.close)
}

// ServeTrials serves a controller of the environments of reg on lis until ctx is
// done (see Server.Serve); WithTrialWorkers bounds the trials run at once.
func ServeTrials(ctx context.Context, lis net.Listener, reg *runners.Registry, opts ...ServerOption) error {
	s, err := NewServer(opts...)
	if err != nil {
		_ = lis.Close()
		return err
	}
	workers := s.cfg.workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	c, err := runners.NewController(reg, runners.WithWorkers(workers))
	if err != nil {
		_ = lis.Close()
		return err
	}
	if err := s.AddTrials(c); err != nil {
		_ = lis.Close()
		return err
	}
	return s.Serve(ctx, lis)
}

func (t *trialService) close(ctx context.Context) error {
	err := t.ctrl.Shutdown(ctx)
	t.mu.Lock()
	clients := t.clients
	t.clients = map[string]*AgentClient{}
	t.mu.Unlock()
	for _, c := range clients {
		err = errors.Join(err, c.Close())
	}
	return err
}

// scope names the environments a request addresses.
func (t *trialService) scope(_ string, req any) ([]string, error) {
	switch r := req.(type) {
	case *pb.StartRequest:
		return []string{r.GetSpec().GetEnv()}, nil
	case *pb.WatchRequest:
		return t.envs(r.GetIds())
	case *pb.StopRequest:
		return t.envs(r.GetIds())
	case *pb.RewardRequest:
		return t.envs([]string{r.GetTrial()})
	case *pb.PendingRequest:
		return t.envs([]string{r.GetTrial()})
	case *pb.ClientActRequest:
		return t.envs([]string{r.GetTrial()})
	case *pb.EpisodesRequest:
		return t.envs([]string{r.GetTrial()})
	}
	return nil, nil
}

// envs returns the environments of trials; an unknown trial is NOT_FOUND.
func (t *trialService) envs(ids []string) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		e, ok := t.envOf[id]
		if !ok {
			return nil, status.Errorf(codes.NotFound, "no trial %q", id)
		}
		out = append(out, e)
	}
	return out, nil
}

// actor reads the choice of an agent's policy; a client actor is added to players.
func (t *trialService) actor(ctx context.Context, spec *pb.TrialSpec, name string, a *pb.Actor, players map[string]*clientActor) (runners.Actor, error) {
	field := "spec.actors[" + name + "]"
	switch c := a.GetChoice().(type) {
	case *pb.Actor_Policy:
		if c.Policy == "" {
			return runners.Actor{}, invalid(fieldErrorf(field+".policy", "empty"))
		}
		return runners.Named(c.Policy), nil
	case *pb.Actor_Remote:
		if !t.remoteOK {
			return runners.Actor{}, invalid(fieldErrorf(field+".remote", "this server runs no remote actors (it is not configured to dial agents)"))
		}
		cl, err := t.remoteAgent(ctx, name, c.Remote)
		if err != nil {
			return runners.Actor{}, invalid(fieldErrorf(field+".remote", "%v", err))
		}
		if cl.Spec().Name != name {
			return runners.Actor{}, invalid(fieldErrorf(field+".remote", "%s serves agent %s, not %s", c.Remote, cl.Spec().Name, name))
		}
		return runners.Value(cl), nil
	case *pb.Actor_Client:
		if c.Client.GetTimeoutMs() < 0 {
			return runners.Actor{}, invalid(fieldErrorf(field+".client.timeout_ms", "%d, want 0 (no timeout) or more", c.Client.GetTimeoutMs()))
		}
		var fallback agent.Policy
		if pn := c.Client.GetDefaultPolicy(); pn != "" {
			var err error
			if fallback, err = t.namedPolicy(spec, name, pn); err != nil {
				return runners.Actor{}, invalid(fieldErrorf(field+".client.default_policy", "%v", err))
			}
		}
		p := newClientActor(name, c.Client, fallback)
		players[name] = p
		return runners.Value(p), nil
	}
	return runners.Actor{}, invalid(fieldErrorf(field, "sets neither policy, remote nor client"))
}

// remoteAgent returns the client of a remote actor of agent name, dialing it once.
func (t *trialService) remoteAgent(ctx context.Context, name, target string) (*AgentClient, error) {
	if _, _, _, err := ParseTarget(target); err != nil || !strings.Contains(target, "://") {
		return nil, fmt.Errorf("want grpc://HOST:PORT[/AGENT] or grpcs://HOST:PORT[/AGENT], got %q", target)
	}
	key := name + "\x00" + target
	t.mu.Lock()
	cl := t.clients[key]
	n := len(t.clients)
	t.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	if n >= maxRemoteAgents {
		return nil, fmt.Errorf("the server already talks to %d remote agents, its most", n)
	}
	opts := t.remote
	if key, ok := t.keys.For(name); ok {
		opts = append(slices.Clone(opts), WithKey(key))
	}
	if _, _, path, _ := ParseTarget(target); path == "" {
		opts = append(slices.Clone(opts), WithAgent(name))
	}
	cl, err := DialAgent(ctx, target, opts...)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.clients[key]; old != nil {
		_ = cl.Close()
		return old, nil
	}
	t.clients[key] = cl
	return cl, nil
}

// spec reads a TrialSpec, and the client actors it names by agent.
func (t *trialService) spec(ctx context.Context, p *pb.TrialSpec, players map[string]*clientActor) (runners.Spec, error) {
	if p == nil {
		return runners.Spec{}, invalid(fieldErrorf("spec", "missing"))
	}
	s := runners.Spec{ID: p.GetId(), Env: p.GetEnv(), Seed: p.GetSeed()}
	if s.Env == "" {
		return s, invalid(fieldErrorf("spec.env", "empty"))
	}
	if c := p.GetConfig(); c != "" {
		s.Config = []byte(c)
	}
	if e := p.GetEpisodes(); e < 0 || e > 1<<31 {
		return s, invalid(fieldErrorf("spec.episodes", "%d, want 0 (for 1) to %d", e, 1<<31))
	}
	s.Episodes = int(p.GetEpisodes())
	if m := p.GetMaxTicks(); m < 0 || m > 1<<31 {
		return s, invalid(fieldErrorf("spec.max_ticks", "%d, want 0 (no limit) to %d", m, 1<<31))
	}
	s.MaxTicks = int(p.GetMaxTicks())
	if len(p.GetActors()) > 0 {
		s.Actors = make(map[string]runners.Actor, len(p.GetActors()))
		for name, a := range p.GetActors() {
			actor, err := t.actor(ctx, p, name, a, players)
			if err != nil {
				return s, err
			}
			s.Actors[name] = actor
		}
	}
	return s, nil
}

// startStatus maps the error of Controller.Start to a status.
func startStatus(err error) error {
	var ne *runners.NameError
	switch {
	case errors.As(err, &ne) && errors.Is(err, runners.ErrUnknownEnv):
		return status.Error(codes.NotFound, err.Error())
	case errors.As(err, &ne), errors.Is(err, runners.ErrInvalidSpec):
		return invalid(&FieldError{Field: "spec.actors", Reason: err.Error()})
	case errors.Is(err, runners.ErrEnvConfig):
		return invalid(&FieldError{Field: "spec.config", Reason: err.Error()})
	case errors.Is(err, runners.ErrTrialExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, runners.ErrShutdown):
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Errorf(codes.Internal, "starting the trial: %v", err)
}

func (t *trialService) Start(ctx context.Context, req *pb.StartRequest) (*pb.StartResponse, error) {
	k := req.GetTrials()
	if k < 0 || k > maxCampaign {
		return nil, invalid(fieldErrorf("trials", "%d, want 0 (for 1) to %d", k, maxCampaign))
	}
	players := map[string]*clientActor{}
	spec, err := t.spec(ctx, req.GetSpec(), players)
	if err != nil {
		return nil, err
	}
	if len(players) > 0 && k > 1 {
		return nil, invalid(fieldErrorf("trials", "%d: a trial with client actors is started alone (trials 0 or 1)", k))
	}
	// The trials outlive this call: they end by themselves, by Stop, or at shutdown.
	tctx := context.WithoutCancel(ctx)
	if k <= 1 {
		id, err := t.ctrl.Start(tctx, spec)
		if err != nil {
			return nil, startStatus(err)
		}
		t.remember(spec.Env, id)
		if len(players) > 0 {
			t.seat(tctx, id, players)
		}
		return &pb.StartResponse{Ids: []string{id}}, nil
	}
	prefix := spec.ID
	if prefix == "" {
		prefix = spec.Env
	}
	resp := &pb.StartResponse{Ids: make([]string, 0, k)}
	for i := range int(k) {
		s := spec
		s.ID, s.Seed = prefix+"-"+strconv.Itoa(i), env.DeriveSeed(spec.Seed, i)
		id, err := t.ctrl.Start(tctx, s)
		if err != nil {
			for _, started := range resp.Ids {
				_ = t.ctrl.Stop(started)
			}
			return nil, startStatus(err)
		}
		t.remember(spec.Env, id)
		resp.Ids = append(resp.Ids, id)
	}
	return resp, nil
}

func (t *trialService) remember(env, id string) {
	t.mu.Lock()
	t.envOf[id] = env
	t.mu.Unlock()
}

var statesProto = map[runners.State]pb.TrialState{
	runners.Pending: pb.TrialState_TRIAL_STATE_PENDING,
	runners.Running: pb.TrialState_TRIAL_STATE_RUNNING,
	runners.Ended:   pb.TrialState_TRIAL_STATE_ENDED,
	runners.Stopped: pb.TrialState_TRIAL_STATE_STOPPED,
	runners.Failed:  pb.TrialState_TRIAL_STATE_FAILED,
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func resultProto(r runners.Result) *pb.TrialResult {
	out := &pb.TrialResult{Steps: r.Steps}
	if r.Info != nil {
		for _, a := range r.Info.Agents {
			out.Agents = append(out.Agents, a.Name)
		}
		out.DefinesSuccess = r.Info.DefinesSuccess
	}
	for _, e := range r.Episodes {
		out.Episodes = append(out.Episodes, &pb.EpisodeResult{
			Seed: e.Seed, Ticks: int64(e.Ticks), Complete: e.Complete, Truncated: e.Truncated,
			Success: e.Success, Returns: append([]float64(nil), e.Returns...),
		})
	}
	return out
}

func (t *trialService) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.TrialStateChange]) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	ids := req.GetIds()
	if len(ids) == 0 {
		g := grantFrom(ctx)
		for _, st := range t.ctrl.List() {
			if g.allows(st.Env) {
				ids = append(ids, st.ID)
			}
		}
	}
	if len(ids) > maxWatch {
		return status.Errorf(codes.ResourceExhausted, "a watch follows at most %d trials, asked for %d: watch fewer at a time", maxWatch, len(ids))
	}
	type change struct {
		sc  runners.StateChange
		res *pb.TrialResult
	}
	changes := make(chan change)
	errs := make(chan error, len(ids))
	var wg sync.WaitGroup
	for _, id := range ids {
		seq, err := t.ctrl.Watch(ctx, id)
		if err != nil {
			cancel()
			wg.Wait()
			return status.Errorf(codes.NotFound, "no trial %q", id)
		}
		wg.Go(func() {
			for sc := range seq {
				c := change{sc: sc}
				if sc.State.Done() {
					res, err := t.ctrl.Wait(ctx, id)
					if err != nil {
						errs <- err
						return
					}
					c.res = resultProto(res)
				}
				select {
				case changes <- c:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		wg.Wait()
		close(changes)
	}()
	for c := range changes {
		msg := &pb.TrialStateChange{Trial: c.sc.Trial, State: statesProto[c.sc.State], Error: errText(c.sc.Err), Result: c.res}
		if err := stream.Send(msg); err != nil {
			cancel()
			for range changes { //nolint:revive // drain, so that the watchers end
			}
			return err
		}
	}
	select {
	case err := <-errs:
		return statusOf(err, codes.Internal, "watching")
	default:
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	return nil
}

func (t *trialService) Stop(_ context.Context, req *pb.StopRequest) (*pb.StopResponse, error) {
	for _, id := range req.GetIds() {
		if err := t.ctrl.Stop(id); err != nil {
			return nil, status.Errorf(codes.NotFound, "no trial %q", id)
		}
	}
	return &pb.StopResponse{}, nil
}

func (t *trialService) List(ctx context.Context, _ *pb.ListRequest) (*pb.ListResponse, error) {
	g := grantFrom(ctx)
	resp := &pb.ListResponse{}
	for _, st := range t.ctrl.List() {
		if !g.allows(st.Env) {
			continue
		}
		resp.Trials = append(resp.Trials, &pb.TrialStatus{
			Id: st.ID, Env: st.Env, State: statesProto[st.State], Error: errText(st.Err),
			Episode: int64(st.Episode), Tick: int64(st.Tick),
		})
	}
	return resp, nil
}

func (t *trialService) Reward(_ context.Context, req *pb.RewardRequest) (*pb.RewardResponse, error) {
	fb := runners.Feedback{AgentID: req.GetAgentId(), Value: req.GetValue(), Source: req.GetSource()}
	if req.GetNextStep() {
		fb.Tick = runners.Now
	} else {
		fb.Episode, fb.Tick = int(req.GetEpisode()), int(req.GetTick())
		if req.GetTick() < 0 || req.GetEpisode() < 0 {
			return nil, invalid(fieldErrorf("tick", "episode %d, tick %d: want >= 0 (or next_step)", req.GetEpisode(), req.GetTick()))
		}
	}
	err := t.ctrl.Reward(req.GetTrial(), fb)
	switch {
	case err == nil:
		return &pb.RewardResponse{}, nil
	case errors.Is(err, runners.ErrUnknownTrial):
		return nil, status.Error(codes.NotFound, err.Error())
	case errors.Is(err, runners.ErrNotRunning):
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, runners.ErrReward):
		return nil, invalid(&FieldError{Field: "agent_id", Reason: err.Error()})
	}
	return nil, status.Errorf(codes.Internal, "reward: %v", err)
}

// seat records the client actors of trial id, and tells them when it finishes.
func (t *trialService) seat(ctx context.Context, id string, players map[string]*clientActor) {
	t.mu.Lock()
	for name, p := range players {
		t.players[id+"\x00"+name] = p
	}
	t.mu.Unlock()
	go func() {
		_, _ = t.ctrl.Wait(ctx, id)
		for _, p := range players {
			p.finish()
		}
	}()
}

// player returns the client actor of an agent of a trial.
func (t *trialService) player(trial, agentName string) (*clientActor, error) {
	t.mu.Lock()
	p := t.players[trial+"\x00"+agentName]
	t.mu.Unlock()
	if p == nil {
		return nil, status.Errorf(codes.NotFound, "agent %q of trial %q is not played by a client", agentName, trial)
	}
	return p, nil
}

// status returns a trial's status.
func (t *trialService) status(id string) (runners.Status, bool) {
	for _, st := range t.ctrl.List() {
		if st.ID == id {
			return st, true
		}
	}
	return runners.Status{}, false
}

func (t *trialService) Pending(ctx context.Context, req *pb.PendingRequest) (*pb.PendingResponse, error) {
	p, err := t.player(req.GetTrial(), req.GetAgent())
	if err != nil {
		return nil, err
	}
	w := req.GetWaitMs()
	if w < 0 || time.Duration(w)*time.Millisecond > maxPendingWait {
		return nil, invalid(fieldErrorf("wait_ms", "%d, want 0 to %d", w, maxPendingWait.Milliseconds()))
	}
	turn, err := p.pending(ctx, time.Duration(w)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	resp := &pb.PendingResponse{}
	if turn != nil {
		resp = proto.CloneOf(turn.resp)
		if !turn.deadline.IsZero() {
			resp.RemainingMs = max(time.Until(turn.deadline).Milliseconds(), 1)
		}
	}
	if st, ok := t.status(req.GetTrial()); ok {
		resp.State, resp.Error = statesProto[st.State], errText(st.Err)
		if turn == nil {
			resp.Episode, resp.Tick = int64(st.Episode), int64(st.Tick)
		}
	}
	return resp, nil
}

func (t *trialService) ClientAct(ctx context.Context, req *pb.ClientActRequest) (*pb.ClientActResponse, error) {
	p, err := t.player(req.GetTrial(), req.GetAgent())
	if err != nil {
		return nil, err
	}
	if err := p.act(ctx, req); err != nil {
		return nil, err
	}
	return &pb.ClientActResponse{}, nil
}

func (t *trialService) Episodes(ctx context.Context, req *pb.EpisodesRequest) (*pb.EpisodesResponse, error) {
	from := req.GetFrom()
	if from < 0 || from > 1<<31 {
		return nil, invalid(fieldErrorf("from", "%d, want 0 to %d", from, 1<<31))
	}
	eps, _, err := t.ctrl.Episodes(req.GetTrial(), int(from))
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "no trial %q", req.GetTrial())
	}
	resp := &pb.EpisodesResponse{}
	// The agents, from the trial's first state change (its info is set from Start on).
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if seq, err := t.ctrl.Watch(wctx, req.GetTrial()); err == nil {
		for sc := range seq {
			if sc.Info != nil {
				for _, a := range sc.Info.Agents {
					resp.Agents = append(resp.Agents, a.Name)
				}
			}
			break
		}
	}
	for _, e := range eps {
		resp.Episodes = append(resp.Episodes, &pb.EpisodeResult{
			Seed: e.Seed, Ticks: int64(e.Ticks), Complete: e.Complete, Truncated: e.Truncated,
			Success: e.Success, Returns: append([]float64(nil), e.Returns...),
		})
	}
	return resp, nil
}

// namedPolicy builds the registered policy of an agent of the spec's environment, for
// the trial of spec (its configuration, and a generator seeded from its seed and the
// agent's place).
func (t *trialService) namedPolicy(spec *pb.TrialSpec, agentName, policy string) (agent.Policy, error) {
	entry, err := t.ctrl.Registry().Lookup(spec.GetEnv())
	if err != nil {
		return nil, err
	}
	for i, a := range entry.Agents {
		if a.Name != agentName {
			continue
		}
		for _, pe := range a.Policies {
			if pe.Name != policy {
				continue
			}
			var config []byte
			if c := spec.GetConfig(); c != "" {
				config = []byte(c)
			}
			f, err := entry.Open(config)
			if err != nil {
				return nil, fmt.Errorf("the configuration: %w", err)
			}
			return pe.New(f, rand.New(rand.NewPCG(spec.GetSeed(), uint64(i)+1)))
		}
		return nil, fmt.Errorf("agent %s has no policy %q (policies: %s)", agentName, policy, strings.Join(a.PolicyNames(), ", "))
	}
	return nil, fmt.Errorf("environment %s has no agent %q with policies", spec.GetEnv(), agentName)
}
