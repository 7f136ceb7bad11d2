package remote

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/env/vector"
	"github.com/batonrl/baton/registry"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/spaces"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxBatchEnvs bounds the copies of one batch session.
const MaxBatchEnvs = 1 << 16

// batchSession is a session of N copies of an environment: of a single-agent one,
// stepped by an env/vector.Env (v), or of a multi-agent one, batched per acting agent
// by the fast lane's Multi (multi, env_batch_multi.go). One of v and multi is set.
type batchSession struct {
	id, env string
	mu      sync.Mutex // one call at a time
	v       *vector.Env
	multi   *multiBatch
	proto   *pb.EnvSpec
	actions spaces.Discrete
	closed  bool
	used    time.Time // guarded by envService.mu
	owner   string    // the key that made it (keyOf)
	cost    int64     // its bytes in the owner's budget
}

func (b *batchSession) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		if b.multi != nil {
			_ = b.multi.x.Close()
		} else {
			_ = b.v.Close()
		}
	}
}

// agent names the agent acting in copy i, for messages.
func (b *batchSession) agent(i int) string {
	if b.multi != nil {
		return cmp.Or(b.multi.x.Agent(i), "?")
	}
	return b.v.Spec().Name
}

// batches holds the batch sessions of an envService; its zero value is ready.
type batches struct {
	mu sync.Mutex
	m  map[string]*batchSession
}

func (bs *batches) get(id string) *batchSession {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.m[id]
	if b != nil {
		b.used = time.Now()
	}
	return b
}

// take removes and returns the session id, if there is one.
func (bs *batches) take(id string) *batchSession {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.m[id]
	delete(bs.m, id)
	return b
}

// closeAll closes every batch session, at shutdown.
func (bs *batches) closeAll() {
	bs.mu.Lock()
	all := bs.m
	bs.m = nil
	bs.mu.Unlock()
	for _, b := range all {
		b.close()
	}
}

// singleEnv returns the single-agent environment that m presents
// (registry.SingleAgent), if it is one.
func singleEnv(m env.MultiAgent) (env.Env, bool) {
	if len(m.Agents()) != 1 {
		return nil, false
	}
	u, ok := m.(interface{ Unwrap() env.Env })
	if !ok {
		return nil, false
	}
	return u.Unwrap(), true
}

func (e *envService) MakeBatch(ctx context.Context, req *pb.MakeBatchRequest) (*pb.MakeBatchResponse, error) {
	name, n, w := req.GetEnv(), req.GetNumEnvs(), req.GetWorkers()
	switch {
	case name == "":
		return nil, invalid(fieldErrorf("env", "empty"))
	case n < 1 || n > MaxBatchEnvs:
		return nil, invalid(fieldErrorf("num_envs", "%d, want 1 to %d", n, MaxBatchEnvs))
	case w < 0:
		return nil, invalid(fieldErrorf("workers", "%d, want 0 or more", w))
	}
	f, err := e.factory(name, req.GetConfig())
	if err != nil {
		return nil, err
	}
	probe, err := safe(func() (env.MultiAgent, error) { return f.NewEnv(registry.EnvOptions{}) })
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%s: building the environment: %v", name, err)
	}
	if _, ok := singleEnv(probe); !ok {
		if !req.GetMultiAgent() {
			return nil, invalid(fieldErrorf("env", "%s has agents %s; this batch session takes a single-agent environment (multi_agent: false)", name, specNames(probe.Agents())))
		}
		return e.makeMultiBatch(ctx, req, f, probe)
	}
	d, ok := probe.Agents()[0].ActionSpace.(spaces.Discrete)
	if !ok {
		return nil, invalid(fieldErrorf("env", "%s acts in %v; a batch session takes Discrete actions", name, probe.Agents()[0].ActionSpace))
	}
	// The copies are counted, and refused, before they are built.
	c := sessionCost(name, f, probe.Agents(), n)
	if err := e.budget.check("MakeBatch", c); err != nil {
		return nil, err
	}
	now := time.Now()
	e.sweep(now)
	who := keyOf(ctx)
	if err := e.budget.reserve("MakeBatch", who, c); err != nil {
		return nil, err
	}
	built := false
	defer func() {
		if !built {
			e.budget.release(who, c.bytes)
		}
	}()
	v, err := vector.New(int(n), func(int) (env.Env, error) {
		m, err := safe(func() (env.MultiAgent, error) { return f.NewEnv(registry.EnvOptions{}) })
		if err != nil {
			return nil, err
		}
		s, _ := singleEnv(m)
		return s, nil
	}, vector.WithWorkers(batchWorkers(w)))
	if err != nil {
		return nil, status.Errorf(codes.Internal, "%s: building %d copies: %v", name, n, err)
	}
	b := &batchSession{env: name, v: v, actions: d, owner: who, cost: c.bytes}
	if err := e.openBatch(b, probe.Agents(), now); err != nil {
		_ = v.Close()
		return nil, err
	}
	built = true
	return &pb.MakeBatchResponse{Session: b.id, Spec: b.proto, NumEnvs: n}, nil
}

// openBatch gives b its spec and an id, and registers it as used at now.
func (e *envService) openBatch(b *batchSession, specs []env.Spec, now time.Time) error {
	var err error
	if b.proto, err = envSpecProto(b.env, specs); err != nil {
		return err
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return status.Errorf(codes.Internal, "a session id: %v", err)
	}
	b.id = hex.EncodeToString(id[:])
	e.addBatch(b, now)
	return nil
}

// batchWorkers bounds the workers a caller asks for by the CPUs.
func batchWorkers(w int64) int { return int(min(max(w, 1), int64(runtime.NumCPU()))) }

// addBatch registers b, whose budget is reserved, as used at now.
func (e *envService) addBatch(b *batchSession, now time.Time) {
	e.batches.mu.Lock()
	defer e.batches.mu.Unlock()
	if e.batches.m == nil {
		e.batches.m = map[string]*batchSession{}
	}
	b.used = now
	e.batches.m[b.id] = b
}

// lockBatch takes a batch session for one call.
func (e *envService) lockBatch(id string) (*batchSession, error) {
	if id == "" {
		return nil, invalid(fieldErrorf("session", "empty"))
	}
	b := e.batches.get(id)
	if b == nil {
		return nil, status.Error(codes.NotFound, "no batch session of that id (closed, expired, or never made)")
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, status.Error(codes.NotFound, "the session was closed")
	}
	return b, nil
}

func (e *envService) ResetBatch(ctx context.Context, req *pb.ResetBatchRequest) (*pb.BatchTurn, error) {
	b, err := e.lockBatch(req.GetSession())
	if err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	if b.multi != nil {
		return b.resetMulti(ctx, req.GetSeed())
	}
	if err := b.v.Reset(ctx, req.GetSeed()); err != nil {
		return nil, b.status("ResetBatch", err)
	}
	return b.turn(false), nil
}

func (e *envService) StepBatch(ctx context.Context, req *pb.StepBatchRequest) (*pb.BatchTurn, error) {
	b, err := e.lockBatch(req.GetSession())
	if err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	if b.multi != nil {
		return b.stepMulti(ctx, req.GetActions())
	}
	n := b.v.Len()
	actions, fe := decodeInt64("actions", req.GetActions(), nil, []int64{int64(n)})
	if fe != nil {
		return nil, invalid(fe)
	}
	masks, m := b.v.Masks(), b.v.MaskLen()
	start, k := uint64(b.actions.Start), uint64(b.actions.N)
	for i, a := range actions {
		switch j := uint64(a) - start; {
		case j >= k:
			return nil, invalid(fieldErrorf(fmt.Sprintf("actions[%d]", i), "copy %d: agent %s: action %d outside %v", i, b.v.Spec().Name, a, b.actions))
		case m > 0 && !masks[i*m+int(j)]:
			return nil, invalid(fieldErrorf(fmt.Sprintf("actions[%d]", i), "copy %d: agent %s: action %d is masked", i, b.v.Spec().Name, a))
		}
	}
	if err := b.v.StepDiscrete(ctx, actions); err != nil {
		return nil, b.status("StepBatch", err)
	}
	return b.turn(true), nil
}

// status maps an error of the vector to its status: FAILED_PRECONDITION for a vector
// not reset, INTERNAL naming each failed copy, the caller's own when ctx ended.
func (b *batchSession) status(op string, err error) error {
	if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, vector.ErrNotReset):
		return status.Errorf(codes.FailedPrecondition, "%s: %s: %v (ResetBatch first)", b.env, op, err)
	}
	var parts []string
	walk(err, func(e error) {
		if ce, ok := errors.AsType[*vector.CopyError](e); ok {
			parts = append(parts, fmt.Sprintf("copy %d (agent %s, %v): %v", ce.Copy, b.agent(ce.Copy), ce.Op, ce.Err))
			return
		}
		parts = append(parts, e.Error())
	})
	return status.Errorf(codes.Internal, "%s: %s: %s; ResetBatch before the next StepBatch", b.env, op, strings.Join(parts, "; "))
}

// walk calls f with each error joined in err.
func walk(err error, f func(error)) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			walk(e, f)
		}
		return
	}
	f(err)
}

// turn copies the vector's buffers into a BatchTurn: the response is marshaled after
// the session is released, so nothing may alias them.
func (b *batchSession) turn(stepped bool) *pb.BatchTurn {
	v := b.v
	n, d, m := int64(v.Len()), int64(v.ObsDim()), int64(v.MaskLen())
	out := &pb.BatchTurn{
		Observations: setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, append([]byte(nil), float32Bytes(v.Obs(), nil)...), n, d),
		Rewards:      setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT64, append([]byte(nil), float64Bytes(v.Rewards())...), n),
		Terminated:   setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, append([]byte(nil), boolBytes(v.Terminated())...), n),
		Truncated:    setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, append([]byte(nil), boolBytes(v.Truncated())...), n),
	}
	if m > 0 {
		out.Masks = setTensor(&pb.Tensor{}, pb.DType_DTYPE_BOOL, append([]byte(nil), boolBytes(v.Masks())...), n, m)
	}
	var final []float32
	k := int64(0)
	if stepped {
		fo := v.FinalObs()
		for i := range int(n) {
			if v.Done(i) {
				final = append(final, fo[int64(i)*d:int64(i+1)*d]...)
				k++
			}
		}
	}
	out.FinalObservations = setTensor(&pb.Tensor{}, pb.DType_DTYPE_FLOAT32, append([]byte(nil), float32Bytes(final, nil)...), k, d)
	return out
}

// float64Bytes returns v's elements as little-endian bytes: v's own memory on a
// little-endian machine, else a new slice.
func float64Bytes(v []float64) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
	}
	buf := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(x))
	}
	return buf
}
