package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// The remote cases measure what serving an agent over gRPC costs: a client acts
// through remote.DialAgent on a policy served by remote.NewServer on 127.0.0.1 (real
// TCP on loopback), and each is compared with a bare grpc-go service that receives
// the same request bytes and answers the same response bytes without decoding
// anything, on the same transport settings. The ratio of the two is the framework's
// overhead: protobuf encoding, tensor checks, the interceptor, the policy call, the
// client's deadlines and checks.
//
// The observation is the maze strategy agent's (106 float32 and a mask of 4), the
// policy plays the first action its mask allows (it costs next to nothing).
//
//	RemoteAct/unary     AgentClient.Act, one unary Act call per action
//	RemoteAct/stream    AgentClient.Act on its ActStream stream
//	RemoteAct/batch256  AgentClient.ActBatch, 256 observations per call
//	RemoteEcho/...      the bare service, the same payloads
//
// One iteration is one round trip (256 actions for batch256). Besides ns/op and
// actions/s, each reports the round trip's p50-ns and p99-ns. The client and the
// server share the machine's cores: on a loaded machine, compare ratios.

// remoteBatch is the batch size of the batch cases.
const remoteBatch = 256

func remoteCases() []Case {
	var cs []Case
	for _, mode := range []string{"unary", "stream", "batch256"} {
		cs = append(cs,
			Case{Name: "RemoteAct/" + mode, Baseline: "RemoteEcho/" + mode, Unit: "action", Run: remoteAct(mode)},
			Case{Name: "RemoteEcho/" + mode, Unit: "action", Run: remoteEcho(mode)},
		)
	}
	return cs
}

// firstAllowed plays the first action the mask allows.
var firstAllowed = agent.PolicyFunc(func(_ context.Context, _ []float32, mask []bool) (agent.RawAction, error) {
	return agent.Discrete(int64(max(slices.Index(mask, true), 0))), nil
})

// RemoteFixture is a served maze strategy agent and what its clients send: the
// setup the remote cases share, which tests check.
type RemoteFixture struct {
	// Spec is the maze strategy agent's.
	Spec env.Spec
	// Obs and Mask are one observation; Batch holds remoteBatch of them.
	Obs   []float32
	Mask  []bool
	Batch vector.Batch
	// Target is the server's address.
	Target string
	stop   func()
}

// NewRemoteFixture serves the strategy agent, playing the first allowed action, on
// 127.0.0.1; Close stops the server.
func NewRemoteFixture() (*RemoteFixture, error) {
	e, err := maze.NewEnv(maze.Config{})
	if err != nil {
		return nil, err
	}
	rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](e), hrl.Config{})
	if err != nil {
		return nil, err
	}
	f := &RemoteFixture{}
	for _, s := range rt.Agents() {
		if s.Name == maze.StrategyName {
			f.Spec = s
		}
	}
	// The observations of the first strategy decisions of a few episodes.
	var rows [][]float32
	var masks [][]bool
	for seed := uint64(0); len(rows) < remoteBatch; seed++ {
		res, err := rt.Reset(seed)
		if err != nil {
			return nil, err
		}
		for !res.Over && len(rows) < remoteBatch {
			rep := res.Acting()
			if rep.Agent == maze.StrategyName {
				rows, masks = append(rows, slices.Clone(rep.Obs)), append(masks, slices.Clone(rep.Mask))
			}
			a, _ := firstAllowed.Act(context.Background(), rep.Obs, rep.Mask)
			if res, err = rt.Step(rep.AgentID, a); err != nil {
				return nil, err
			}
		}
	}
	f.Obs, f.Mask = rows[0], masks[0]
	f.Batch = vector.Batch{ObsDim: len(rows[0]), MaskLen: len(masks[0])}
	for i := range rows {
		f.Batch.Copies = append(f.Batch.Copies, i)
		f.Batch.Obs = append(f.Batch.Obs, rows[i]...)
		f.Batch.Masks = append(f.Batch.Masks, masks[i]...)
	}

	s, err := remote.NewServer()
	if err != nil {
		return nil, err
	}
	if err := s.AddAgents(remote.Agent{Spec: f.Spec, Policy: firstAllowed, Concurrent: true}); err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f.Target = lis.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = s.Serve(ctx, lis)
		close(done)
	}()
	f.stop = func() { cancel(); <-done }
	return f, nil
}

// Close stops the server.
func (f *RemoteFixture) Close() { f.stop() }

// Dial returns a client of the served agent.
func (f *RemoteFixture) Dial(opts ...remote.DialOption) (*remote.AgentClient, error) {
	return remote.DialAgent(context.Background(), f.Target, opts...)
}

// Payloads returns the wire bytes of the requests and responses of an Act call and
// an ActBatch call of remoteBatch observations, as the client sends and the server
// answers them: what the bare echo service carries.
func (f *RemoteFixture) Payloads() (actReq, actResp, batchReq, batchResp []byte, err error) {
	captured := map[string][2][]byte{}
	capture := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
			return err
		}
		rq, err := proto.Marshal(req.(proto.Message))
		if err != nil {
			return err
		}
		rp, err := proto.Marshal(reply.(proto.Message))
		if err != nil {
			return err
		}
		captured[method] = [2][]byte{rq, rp}
		return nil
	}
	c, err := f.Dial(remote.WithUnary(), remote.WithGRPCDialOptions(grpc.WithUnaryInterceptor(capture)))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer c.Close()
	if _, err := c.Act(context.Background(), f.Obs, f.Mask); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := c.ActBatch(context.Background(), f.Batch, make([]agent.RawAction, remoteBatch)); err != nil {
		return nil, nil, nil, nil, err
	}
	act, batch := captured["/baton.v1.AgentService/Act"], captured["/baton.v1.AgentService/ActBatch"]
	if act[0] == nil || batch[0] == nil {
		return nil, nil, nil, nil, errors.New("bench: the Act and ActBatch calls were not captured")
	}
	return act[0], act[1], batch[0], batch[1], nil
}

// latencies is a histogram of round trips at 1 µs resolution up to 100 ms, so that
// recording one allocates nothing.
type latencies struct {
	n       int64
	buckets [100_001]int64
}

func (l *latencies) add(d time.Duration) {
	i := min(int(d/time.Microsecond), len(l.buckets)-1)
	l.buckets[i]++
	l.n++
}

// quantile returns the q-quantile in nanoseconds (the bucket's upper edge).
func (l *latencies) quantile(q float64) float64 {
	want := int64(q*float64(l.n) + 0.5)
	var seen int64
	for i, c := range l.buckets {
		seen += c
		if seen >= max(want, 1) {
			return float64(i+1) * 1e3
		}
	}
	return float64(len(l.buckets)) * 1e3
}

// report reports actions/s and the latency quantiles; perOp is the actions of an
// iteration.
func (l *latencies) report(b *testing.B, perOp int) {
	b.ReportMetric(float64(b.N)*float64(perOp)/b.Elapsed().Seconds(), "actions/s")
	b.ReportMetric(l.quantile(0.5), "p50-ns")
	b.ReportMetric(l.quantile(0.99), "p99-ns")
}

func remoteAct(mode string) func(b *testing.B) {
	return func(b *testing.B) {
		f, err := NewRemoteFixture()
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var opts []remote.DialOption
		if mode == "unary" {
			opts = append(opts, remote.WithUnary())
		}
		c, err := f.Dial(opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		lat := &latencies{}
		actions := make([]agent.RawAction, remoteBatch)
		perOp := 1
		if mode == "batch256" {
			perOp = remoteBatch
		}
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			if perOp == 1 {
				_, err = c.Act(ctx, f.Obs, f.Mask)
			} else {
				err = c.ActBatch(ctx, f.Batch, actions)
			}
			lat.add(time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
		}
		lat.report(b, perOp)
	}
}

// rawCodec passes pre-marshaled bytes through, for the bare echo service.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append((*v.(*[]byte))[:0], data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// echoService answers every request with fixed response bytes: unary calls with
// the Act or ActBatch response (by method), stream messages with the Act response.
type echoService struct{ act, batch []byte }

var echoDesc = grpc.ServiceDesc{
	ServiceName: "baton.bench.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Act", Handler: func(srv any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var in []byte
			if err := dec(&in); err != nil {
				return nil, err
			}
			return &srv.(*echoService).act, nil
		}},
		{MethodName: "ActBatch", Handler: func(srv any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var in []byte
			if err := dec(&in); err != nil {
				return nil, err
			}
			return &srv.(*echoService).batch, nil
		}},
	},
	Streams: []grpc.StreamDesc{{StreamName: "ActStream", ServerStreams: true, ClientStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			var in []byte
			for {
				if err := stream.RecvMsg(&in); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
				if err := stream.SendMsg(&srv.(*echoService).act); err != nil {
					return err
				}
			}
		}}},
}

func remoteEcho(mode string) func(b *testing.B) {
	return func(b *testing.B) {
		f, err := NewRemoteFixture()
		if err != nil {
			b.Fatal(err)
		}
		actReq, actResp, batchReq, batchResp, err := f.Payloads()
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		// The transport settings of remote's servers and clients.
		gs := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.InitialWindowSize(1<<20), grpc.InitialConnWindowSize(1<<22))
		gs.RegisterService(&echoDesc, &echoService{act: actResp, batch: batchResp})
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go func() { _ = gs.Serve(lis) }()
		defer gs.Stop()
		cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<22),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		ctx := context.Background()
		lat := &latencies{}
		var resp []byte
		perOp, method, req := 1, "/baton.bench.Echo/Act", actReq
		if mode == "batch256" {
			perOp, method, req = remoteBatch, "/baton.bench.Echo/ActBatch", batchReq
		}
		var stream grpc.ClientStream
		if mode == "stream" {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if stream, err = cc.NewStream(sctx, &echoDesc.Streams[0], "/baton.bench.Echo/ActStream"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			if stream != nil {
				if err = stream.SendMsg(&req); err == nil {
					err = stream.RecvMsg(&resp)
				}
			} else {
				cctx, cancel := context.WithTimeout(ctx, remote.DefaultTimeout) // as the client's deadline
				err = cc.Invoke(cctx, method, &req, &resp)
				cancel()
			}
			lat.add(time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
		}
		if len(resp) == 0 {
			b.Fatal(fmt.Errorf("bench: the echo answered nothing"))
		}
		lat.report(b, perOp)
	}
}
