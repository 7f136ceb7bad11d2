package remote_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/cartpole"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// A policy served on loopback and acted on through a client, which is itself an
// agent.Policy.
func ExampleServeAgent() {
	ctx, stop := context.WithCancel(context.Background())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	spec := env.Spec{Name: "thermostat", ObservationSpace: spaces.Must(spaces.NewBox([]int{1}, -50, 50)), ActionSpace: spaces.Discrete{N: 2}}
	heat := agent.PolicyFunc(func(_ context.Context, obs []float32, _ []bool) (agent.RawAction, error) {
		if obs[0] < 20 {
			return agent.Discrete(1), nil // heat
		}
		return agent.Discrete(0), nil
	})
	done := make(chan error, 1)
	go func() {
		done <- remote.ServeAgent(ctx, lis, []remote.Agent{{Spec: spec, Policy: heat, Concurrent: true}})
	}()

	client, err := remote.DialAgent(ctx, "grpc://"+lis.Addr().String()+"/thermostat")
	if err != nil {
		panic(err)
	}
	var policy agent.Policy = client
	for _, temp := range []float32{12, 25} {
		a, err := policy.Act(ctx, []float32{temp}, nil)
		fmt.Println(temp, "->", a, err)
	}
	client.Close()
	stop()
	fmt.Println("served:", <-done)
	// Output:
	// 12 -> 1 <nil>
	// 25 -> 0 <nil>
	// served: <nil>
}

// A maze campaign whose strategy agent is served by another process (here a
// goroutine) with an API key.
func ExampleDialAgent() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	strategy, err := remote.RegisteredAgent(reg, "maze", nil, "strategy", "oracle", 1)
	if err != nil {
		panic(err)
	}
	keys, err := remote.ParseKeys([]byte("strategy=an-example-key-do-not-use\n"))
	if err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- remote.ServeAgent(ctx, lis, []remote.Agent{strategy}, remote.WithKeys(keys)) }()

	client, err := remote.DialAgent(ctx, "grpc://"+lis.Addr().String()+"/strategy", remote.WithKey("an-example-key-do-not-use"))
	if err != nil {
		panic(err)
	}
	defer client.Close()
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1, Actors: map[string]runners.Actor{
		"strategy": runners.Value(client),
	}}, runners.WithTrials(20), runners.WithWorkers(2))
	if err != nil {
		panic(err)
	}
	sum, err := c.Run(ctx)
	fmt.Println(sum.Ended, "trials ended,", sum.Failed, "failed, success rate", *sum.SuccessRate, err)
	stop()
	<-done
	// Output:
	// 20 trials ended, 0 failed, success rate 0.65 <nil>
}

// A session of a remote environment, stepped as a local env.MultiAgent.
func ExampleDialEnv() {
	ctx, stop := context.WithCancel(context.Background())
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- remote.ServeEnv(ctx, lis, reg) }()

	client, err := remote.DialEnv(ctx, lis.Addr().String())
	if err != nil {
		panic(err)
	}
	e, err := client.Make(ctx, "maze", nil, 0)
	if err != nil {
		panic(err)
	}
	var m env.MultiAgent = e
	turn, err := m.Reset(1)
	if err != nil {
		panic(err)
	}
	rep := turn.Acting()
	fmt.Println(rep.AgentID, "observes", len(rep.Obs), "floats, mask", rep.Mask)
	client.Close()
	stop()
	<-done
	// Output:
	// strategy_0 observes 106 floats, mask [true false false true]
}

// ExampleEnvClient_MakeBatch steps 64 cart-poles served by an environment server, one
// call a tick for all of them.
func ExampleEnvClient_MakeBatch() {
	ctx, stop := context.WithCancel(context.Background())
	reg := registry.New()
	if err := cartpole.Register(reg); err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- remote.ServeEnv(ctx, lis, reg) }()

	client, err := remote.DialEnv(ctx, lis.Addr().String())
	if err != nil {
		panic(err)
	}
	b, err := client.MakeBatch(ctx, "cartpole", nil, 64, 1)
	if err != nil {
		panic(err)
	}
	if err := b.Reset(ctx, 1); err != nil {
		panic(err)
	}
	actions := make([]int64, b.Len()) // always push left
	ended := 0
	for range 100 {
		if err := b.Step(ctx, actions); err != nil {
			panic(err)
		}
		for i := range b.Len() {
			if b.Terminated()[i] || b.Truncated()[i] {
				ended++
			}
		}
	}
	fmt.Println(b.Len(), "copies of", b.Spec().Name, "observing", len(b.Obs())/b.Len(), "floats; episodes ended:", ended > 0)
	client.Close()
	stop()
	<-done
	// Output:
	// 64 copies of cartpole observing 4 floats; episodes ended: true
}

// ExampleEnvClient_MakeMultiBatch steps 256 mazes served by an environment server,
// one call a tick for all of them, batched per acting agent: each tick, every agent
// chooses the actions of the copies it acts in (here, the first its mask allows).
func ExampleEnvClient_MakeMultiBatch() {
	ctx, stop := context.WithCancel(context.Background())
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- remote.ServeEnv(ctx, lis, reg) }()

	client, err := remote.DialEnv(ctx, lis.Addr().String())
	if err != nil {
		panic(err)
	}
	b, err := client.MakeMultiBatch(ctx, "maze", nil, 256, 1)
	if err != nil {
		panic(err)
	}
	if err := b.Reset(ctx, 1); err != nil {
		panic(err)
	}
	fmt.Println("after the reset, the strategy acts in", len(b.Groups()[0].Copies), "copies")
	decisions := map[string]int{}
	for range 50 {
		for j, g := range b.Groups() {
			m := b.Agents()[j].MaskLen
			for r := range g.Copies {
				g.Actions[r] = int64(slices.Index(g.Masks[r*m:(r+1)*m], true))
			}
			decisions[g.Agent] += len(g.Copies)
		}
		if err := b.Step(ctx); err != nil {
			panic(err)
		}
	}
	fmt.Println("decisions:", decisions["strategy"]+decisions["motion"], "=", 50*b.Len())
	client.Close()
	stop()
	<-done
	// Output:
	// after the reset, the strategy acts in 256 copies
	// decisions: 12800 = 12800
}

// goalCounter plays a policy and learns, in its way: it counts the rewards and
// episodes the trials tell it of. Served, it is told them over the network.
type goalCounter struct {
	agent.Policy
	reward   float64
	episodes int
}

func (g *goalCounter) Learn(_ context.Context, o *runners.Outcome) error {
	switch o.Kind {
	case runners.OutcomeStep:
		g.reward += o.Reward
	case runners.OutcomeEpisodeEnd:
		g.episodes++
	}
	return nil
}

// A served policy that is a runners.Learner learns from every trial that plays it:
// the client sees that it learns and passes the trials' feedback on.
func ExampleAgent_learner() {
	ctx, stop := context.WithCancel(context.Background())
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	oracle, err := remote.RegisteredAgent(reg, "maze", nil, maze.StrategyName, "oracle", 1)
	if err != nil {
		panic(err)
	}
	p, err := oracle.New() // the registry's policy, built once
	if err != nil {
		panic(err)
	}
	learner := &goalCounter{Policy: p}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- remote.ServeAgent(ctx, lis, []remote.Agent{{Spec: oracle.Spec, Policy: learner}}) }()

	client, err := remote.DialAgent(ctx, lis.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Println("learns:", client.Learns())
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 1, Episodes: 2, Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(client), maze.MotionName: runners.Named("forward"),
	}}, runners.WithTrials(5))
	if err != nil {
		panic(err)
	}
	s, err := c.Run(ctx)
	fmt.Println("successes:", s.Successes, err)
	client.Close() // once it returns, the server has taken every message
	stop()
	<-done
	fmt.Printf("told %d episodes, %.0f reward\n", learner.episodes, learner.reward)
	// Output:
	// learns: true
	// successes: 10 <nil>
	// told 10 episodes, 10 reward
}

// A handler served beside the services checks its callers' keys as the services do.
func ExampleKeys_Check() {
	keys, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789abcdef"})
	if err != nil {
		panic(err)
	}
	fmt.Println(keys.Check("maze-key-0123456789abcdef", "maze"))
	fmt.Println(keys.Check("maze-key-0123456789abcdef", "rps"))
	fmt.Println(keys.Check("", "maze"))
	// Output:
	// <nil>
	// remote: permission denied: the key does not grant rps
	// remote: unauthenticated: no key, or a key this server does not know
}

// An interceptor that logs every call, whichever way it comes: gRPC, or the HTTP
// gateway's Connect JSON (as curl or a browser calls it). It runs after the key
// check, so it sees only the calls of callers the server knows.
func ExampleWithUnaryInterceptors() {
	ctx, stop := context.WithCancel(context.Background())
	logCalls := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		md, _ := metadata.FromIncomingContext(ctx)
		fmt.Println(info.FullMethod, md.Get("x-caller"), status.Code(err))
		return resp, err
	}
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		panic(err)
	}
	s, err := remote.NewServer(remote.WithUnaryInterceptors(logCalls))
	if err != nil {
		panic(err)
	}
	if err := s.AddEnvs(reg); err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, lis) }()

	// A gRPC caller.
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	gctx := metadata.AppendToOutgoingContext(ctx, "x-caller", "grpc")
	if _, err := pb.NewEnvServiceClient(cc).Envs(gctx, &pb.EnvsRequest{}); err != nil {
		panic(err)
	}
	_ = cc.Close()

	// A Connect JSON caller.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+lis.Addr().String()+"/baton.v1.EnvService/Envs", strings.NewReader("{}"))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Caller", "curl")
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		panic(err)
	}
	_ = resp.Body.Close()
	tr.CloseIdleConnections()
	fmt.Println(resp.Status)

	stop()
	fmt.Println("served:", <-done)
	// Output:
	// /baton.v1.EnvService/Envs [grpc] OK
	// /baton.v1.EnvService/Envs [curl] OK
	// 200 OK
	// served: <nil>
}
