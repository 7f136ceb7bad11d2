package remote

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxListPage bounds the trials of one List page, and is the size of a page when the
// request does not say.
const maxListPage = 1000

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
	idle     time.Duration // the client actors' default and longest idle timeout; 0: none

	mu      sync.Mutex
	clients map[string]*AgentClient            // remote actors by agent name and target
	players map[string]map[string]*clientActor // client actors by trial id, then agent name
}

// AddTrials serves a controller on the server (TrialService): clients start trials
// of the controller's registry, watch, stop and reward them. The server's shutdown
// shuts the controller down (its running trials stop). With keys, a call needs a key
// that grants the environment of the trials it addresses. Build c over a remote view
// of the registry (registry.Registry.Remote), as ServeTrials does, so that the
// configurations of the trials that callers start name no file on the server and
// stay within the environments' limits. The controller's bounds (runners.WithMaxLive,
// WithKeepFinished, WithEpisodeWindow) bound what clients make it hold;
// WithClientIdleTimeout bounds the wait for client actors.
func (s *Server) AddTrials(c *runners.Controller) error {
	if c == nil {
		return fmt.Errorf("%w: AddTrials: nil controller", ErrConfig)
	}
	svc := &trialService{
		srv: s, ctrl: c, remoteOK: s.cfg.remoteOK, remote: s.cfg.remote, keys: s.cfg.remoteKeys, idle: max(s.cfg.clientIdle, 0),
		clients: map[string]*AgentClient{}, players: map[string]map[string]*clientActor{},
	}
	if s.cfg.clientIdle == 0 {
		svc.idle = DefaultClientIdleTimeout
	}
	return s.register(&pb.TrialService_ServiceDesc, svc, svc.scope, svc.close)
}

// ServeTrials serves a controller of the environments of reg on lis until ctx is
// done (see Server.Serve); WithTrialWorkers bounds the trials run at once. The
// controller opens the configurations of its trials as ones from the network
// (registry.Registry.Remote, with WithConfigDir and WithEnvLimits).
func ServeTrials(ctx context.Context, lis net.Listener, reg *registry.Registry, opts ...ServerOption) error {
	s, err := NewServer(opts...)
	if err != nil {
		_ = lis.Close()
		return err
	}
	workers := s.cfg.workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if reg != nil {
		if reg, err = reg.Remote(s.cfg.envRemote); err != nil {
			_ = lis.Close()
			return fmt.Errorf("%w: ServeTrials: %w", ErrConfig, err)
		}
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

// scope names the environments a request addresses: a Start's, and those of the
// trials of the others ("" for a trial that does not exist; see scoper).
func (t *trialService) scope(_ string, req any) ([]string, error) {
	if r, ok := req.(*pb.StartRequest); ok {
		return []string{r.GetSpec().GetEnv()}, nil
	}
	return t.envs(trialIDs(req)), nil
}

// trialIDs returns the ids of the trials a request addresses; nil for a request
// that addresses none.
func trialIDs(req any) []string {
	switch r := req.(type) {
	case *pb.WatchRequest:
		return r.GetIds()
	case *pb.StopRequest:
		return r.GetIds()
	case *pb.RewardRequest:
		return []string{r.GetTrial()}
	case *pb.PendingRequest:
		return []string{r.GetTrial()}
	case *pb.ClientActRequest:
		return []string{r.GetTrial()}
	case *pb.EpisodesRequest:
		return []string{r.GetTrial()}
	}
	return nil
}

// envs returns the environments of trials, "" for a trial that the controller does
// not hold (never started, or forgotten).
func (t *trialService) envs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if st, err := t.ctrl.Status(id); err == nil {
			out[i] = st.Env
		}
	}
	return out
}

// noTrial is the NOT_FOUND status of an unknown trial.
func noTrial(id string) error { return status.Errorf(codes.NotFound, "no trial %q", id) }

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
		idle, err := t.idleTimeout(field+".client.idle_timeout_ms", c.Client.GetIdleTimeoutMs())
		if err != nil {
			return runners.Actor{}, err
		}
		var fallback agent.Policy
		if pn := c.Client.GetDefaultPolicy(); pn != "" {
			var err error
			if fallback, err = t.namedPolicy(spec, name, pn); err != nil {
				return runners.Actor{}, invalid(fieldErrorf(field+".client.default_policy", "%v", err))
			}
		}
		p := newClientActor(name, c.Client, fallback, idle)
		players[name] = p
		return runners.Value(p), nil
	}
	return runners.Actor{}, invalid(fieldErrorf(field, "sets neither policy, remote nor client"))
}

// idleTimeout reads a client actor's idle_timeout_ms against the server's.
func (t *trialService) idleTimeout(field string, ms int64) (time.Duration, error) {
	switch {
	case ms < 0:
		return 0, invalid(fieldErrorf(field, "%d, want 0 (the server's, %v) or more", ms, t.idleText()))
	case ms == 0:
		return t.idle, nil
	case t.idle > 0 && ms > t.idle.Milliseconds():
		return 0, invalid(fieldErrorf(field, "%d, want at most %d: the server's idle timeout (baton serve --client-idle-timeout %v)", ms, t.idle.Milliseconds(), t.idle))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func (t *trialService) idleText() string {
	if t.idle == 0 {
		return "none"
	}
	return t.idle.String()
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
	var ne *registry.NameError
	switch {
	case errors.As(err, &ne) && errors.Is(err, registry.ErrUnknownEnv):
		return status.Error(codes.NotFound, err.Error())
	case errors.As(err, &ne), errors.Is(err, runners.ErrInvalidSpec):
		return invalid(&FieldError{Field: "spec.actors", Reason: err.Error()})
	case errors.Is(err, runners.ErrEnvConfig):
		return invalid(&FieldError{Field: "spec.config", Reason: err.Error()})
	case errors.Is(err, runners.ErrTrialExists):
		return status.Error(codes.AlreadyExists, err.Error())
	case errors.Is(err, runners.ErrFull):
		return status.Errorf(codes.ResourceExhausted, "%v: wait for trials to finish, or stop some (the server's bound: baton serve --max-live-trials)", err)
	case errors.Is(err, runners.ErrShutdown):
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Errorf(codes.Internal, "starting the trial: %v", err)
}

func (t *trialService) Start(ctx context.Context, req *pb.StartRequest) (*pb.StartResponse, error) {
	k := req.GetTrials()
	if k < 0 || k > math.MaxInt32 {
		return nil, invalid(fieldErrorf("trials", "%d, want 0 (for 1) to %d", k, math.MaxInt32))
	}
	players := map[string]*clientActor{}
	spec, err := t.spec(ctx, req.GetSpec(), players)
	if err != nil {
		return nil, err
	}
	if len(players) > 0 && k > 1 {
		return nil, invalid(fieldErrorf("trials", "%d: a trial with client actors is started alone (trials 0 or 1)", k))
	}
	pace := req.GetWatchPaceMs()
	if pace < 0 || pace > runners.MaxFramePace.Milliseconds() {
		return nil, invalid(fieldErrorf("watch_pace_ms", "%d, want 0 to %d", pace, runners.MaxFramePace.Milliseconds()))
	}
	if req.GetWatched() && k > 1 {
		return nil, invalid(fieldErrorf("trials", "%d: a watched trial is started alone (trials 0 or 1)", k))
	}
	// The trials outlive this call: they end by themselves, by Stop, or at shutdown.
	tctx := context.WithoutCancel(ctx)
	if k <= 1 {
		start := t.ctrl.Start
		if req.GetWatched() {
			start = func(ctx context.Context, spec runners.Spec) (string, error) {
				return t.ctrl.StartWatched(ctx, spec, time.Duration(pace)*time.Millisecond)
			}
		}
		id, err := start(tctx, spec)
		if err != nil {
			return nil, t.startError(ctx, []string{spec.ID}, err)
		}
		if len(players) > 0 {
			t.seat(tctx, id, players)
		}
		return &pb.StartResponse{Ids: []string{id}}, nil
	}
	ids, err := t.ctrl.StartCampaign(tctx, spec, int(k))
	if err != nil {
		return nil, t.startError(ctx, campaignIDs(spec, int(k)), err)
	}
	return &pb.StartResponse{Ids: ids}, nil
}

// campaignIDs are the ids the controller gives a campaign of k trials of spec
// (runners.Controller.StartCampaign): its id, or else its environment's name, then
// "-i".
func campaignIDs(spec runners.Spec, k int) []string {
	prefix := spec.ID
	if prefix == "" {
		prefix = spec.Env
	}
	ids := make([]string, k)
	for i := range ids {
		ids[i] = prefix + "-" + strconv.Itoa(i)
	}
	return ids
}

// startError is the status of a Start that failed to start the trials of ids (a
// campaign's, or one): a key that does not grant the environment of a trial that holds
// one of the ids gets the answer of any call that names a trial outside its scope
// (deniedTrial), not ALREADY_EXISTS.
func (t *trialService) startError(ctx context.Context, ids []string, err error) error {
	if g := grantFrom(ctx); errors.Is(err, runners.ErrTrialExists) {
		for i, env := range t.envs(ids) {
			if env != "" && !g.allows(env) {
				return g.deniedTrial(ids[i])
			}
		}
	}
	return startStatus(err)
}

var statesProto = map[event.State]pb.TrialState{
	event.Pending: pb.TrialState_TRIAL_STATE_PENDING,
	event.Running: pb.TrialState_TRIAL_STATE_RUNNING,
	event.Ended:   pb.TrialState_TRIAL_STATE_ENDED,
	event.Stopped: pb.TrialState_TRIAL_STATE_STOPPED,
	event.Failed:  pb.TrialState_TRIAL_STATE_FAILED,
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func resultProto(r *runners.Result) *pb.TrialResult {
	tot := r.Totals
	out := &pb.TrialResult{
		Steps: r.Steps, FirstEpisode: int64(r.FirstEpisode), Episodes: episodesProto(r.Episodes),
		Totals: &pb.EpisodeTotals{Episodes: int64(tot.Episodes), Complete: int64(tot.Complete), Successes: int64(tot.Successes), Returns: slices.Clone(tot.Returns)},
	}
	if r.Info != nil {
		out.Agents = agentNamesOf(r.Info)
		out.DefinesSuccess = r.Info.DefinesSuccess
	}
	return out
}

func episodesProto(eps []runners.EpisodeResult) []*pb.EpisodeResult {
	out := make([]*pb.EpisodeResult, len(eps))
	for i, e := range eps {
		out[i] = &pb.EpisodeResult{
			Seed: e.Seed, Ticks: int64(e.Ticks), Complete: e.Complete, Truncated: e.Truncated,
			Success: e.Success, Returns: slices.Clone(e.Returns),
		}
	}
	return out
}

func agentNamesOf(info *event.TrialInfo) []string {
	out := make([]string, len(info.Agents))
	for i, a := range info.Agents {
		out[i] = a.Name
	}
	return out
}

// Watch follows the trials on the controller's watch of many, which starts no
// goroutine per trial: watching every trial costs a map entry each, however many
// trials the server has ever run.
func (t *trialService) Watch(req *pb.WatchRequest, stream grpc.ServerStreamingServer[pb.TrialStateChange]) error {
	ctx := stream.Context()
	changes, err := t.ctrl.WatchMany(ctx, req.GetIds(), grantFrom(ctx).allows)
	if err != nil {
		return status.Error(codes.NotFound, err.Error())
	}
	for sc, res := range changes {
		msg := &pb.TrialStateChange{Trial: sc.Trial, State: statesProto[sc.State], Error: errText(sc.Err)}
		if res != nil {
			msg.Result = resultProto(res)
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
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

// List answers a page of the trials the key grants. Its token carries the Seq of the
// last trial of the previous page, so pages resume in place while trials are
// forgotten.
func (t *trialService) List(ctx context.Context, req *pb.ListRequest) (*pb.ListResponse, error) {
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, invalid(fieldErrorf("page_size", "%d, want 0 (for %d) or more", size, maxListPage))
	case size == 0 || size > maxListPage:
		size = maxListPage
	}
	var after uint64
	if tok := req.GetPageToken(); tok != "" {
		seq, ok := strings.CutPrefix(tok, "after-")
		var err error
		if after, err = strconv.ParseUint(seq, 10, 64); err != nil || !ok {
			return nil, invalid(fieldErrorf("page_token", "%q is not a token this server gave (ListResponse.next_page_token)", tok))
		}
	}
	page, more := t.ctrl.ListAfter(after, size, grantFrom(ctx).allows)
	busy, limit := t.ctrl.Workers()
	resp := &pb.ListResponse{Trials: make([]*pb.TrialStatus, len(page))}
	for i, st := range page {
		clients := t.playersOf(st.ID)
		resp.Trials[i] = &pb.TrialStatus{
			Id: st.ID, Env: st.Env, State: statesProto[st.State], Error: errText(st.Err),
			Episode: int64(st.Episode), Tick: int64(st.Tick), Reason: reason(st, busy, limit, clients),
			Clients: slices.Sorted(maps.Keys(clients)),
		}
	}
	if more {
		resp.NextPageToken = "after-" + strconv.FormatUint(page[len(page)-1].Seq, 10)
	}
	return resp, nil
}

// reason says what a trial waits for: a worker, or the clients whose turn it is.
func reason(st runners.Status, busy, limit int, clients map[string]*clientActor) string {
	switch {
	case st.State == event.Pending && !st.Attended:
		return fmt.Sprintf("waiting for a compute worker (%d of %d in use, baton serve --workers; %d trials queued ahead)", busy, limit, st.Ahead)
	case st.State != event.Running:
		return ""
	}
	var waits []string
	for _, name := range slices.Sorted(maps.Keys(clients)) {
		if w := clients[name].waiting(); w != "" {
			waits = append(waits, w)
		}
	}
	return strings.Join(waits, "; ")
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
	case errors.Is(err, runners.ErrFull):
		return nil, status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, runners.ErrReward):
		return nil, invalid(&FieldError{Field: "agent_id", Reason: err.Error()})
	}
	return nil, status.Errorf(codes.Internal, "reward: %v", err)
}

// seat records the client actors of trial id, and tells them when it finishes. It
// drops those of the trials the controller has forgotten.
func (t *trialService) seat(ctx context.Context, id string, players map[string]*clientActor) {
	t.mu.Lock()
	for old := range t.players {
		if _, err := t.ctrl.Status(old); err != nil {
			delete(t.players, old)
		}
	}
	t.players[id] = players
	t.mu.Unlock()
	go func() {
		_, _ = t.ctrl.Wait(ctx, id)
		for _, p := range players {
			p.finish()
		}
	}()
}

// playersOf returns the client actors of a trial by agent name; nil for none.
func (t *trialService) playersOf(trial string) map[string]*clientActor {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.players[trial]
}

// player returns the client actor of an agent of a trial, and the trial's status.
func (t *trialService) player(trial, agentName string) (*clientActor, runners.Status, error) {
	st, err := t.ctrl.Status(trial)
	if err != nil {
		return nil, st, noTrial(trial)
	}
	players := t.playersOf(trial)
	p := players[agentName]
	if p == nil {
		clients := "none"
		if len(players) > 0 {
			clients = strings.Join(slices.Sorted(maps.Keys(players)), ", ")
		}
		return nil, st, status.Errorf(codes.NotFound, "agent %q of trial %q is not played by a client (clients: %s)", agentName, trial, clients)
	}
	return p, st, nil
}

func (t *trialService) Pending(ctx context.Context, req *pb.PendingRequest) (*pb.PendingResponse, error) {
	p, st, err := t.player(req.GetTrial(), req.GetAgent())
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
	if now, err := t.ctrl.Status(req.GetTrial()); err == nil {
		st = now // the state after the wait, unless the trial was forgotten meanwhile
	}
	resp.State, resp.Error = statesProto[st.State], errText(st.Err)
	if turn == nil {
		resp.Episode, resp.Tick = int64(st.Episode), int64(st.Tick)
	}
	return resp, nil
}

func (t *trialService) ClientAct(ctx context.Context, req *pb.ClientActRequest) (*pb.ClientActResponse, error) {
	p, _, err := t.player(req.GetTrial(), req.GetAgent())
	if err != nil {
		return nil, err
	}
	if err := p.act(ctx, req); err != nil {
		return nil, err
	}
	return &pb.ClientActResponse{}, nil
}

func (t *trialService) Episodes(_ context.Context, req *pb.EpisodesRequest) (*pb.EpisodesResponse, error) {
	from := req.GetFrom()
	if from < 0 || from > 1<<31 {
		return nil, invalid(fieldErrorf("from", "%d, want 0 to %d", from, 1<<31))
	}
	st, err := t.ctrl.Status(req.GetTrial())
	if err != nil {
		return nil, noTrial(req.GetTrial())
	}
	eps, first, err := t.ctrl.Episodes(req.GetTrial(), int(from))
	if err != nil {
		return nil, noTrial(req.GetTrial())
	}
	return &pb.EpisodesResponse{Agents: agentNamesOf(st.Info), Episodes: episodesProto(eps), First: int64(first)}, nil
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
