package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/internal/fastlane"
	"github.com/batonrl/baton/registry"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// multiBatch is the vector of a multi-agent batch session: the fast lane's Multi,
// which groups the copies per acting agent name (env/vector's Multi) into buffers
// laid out as Python's in-process baton.vector.MultiVector has them, so that a
// remote vector and a local one give the same arrays.
type multiBatch struct {
	x *fastlane.Multi
	l fastlane.Layout
	b fastlane.MultiBuffers
}

// newMultiBuffers allocates the buffers of n copies of the layout l.
func newMultiBuffers(n int, l fastlane.Layout) fastlane.MultiBuffers {
	a := len(l.Agents)
	b := fastlane.MultiBuffers{Agents: make([]fastlane.AgentBuffers, a), Counts: make([]int64, a), Acting: make([]int64, n),
		Rewards: make([]float64, n*a), Spans: make([]int64, n*a), Terminated: make([]bool, n*a), Truncated: make([]bool, n*a),
		Ended: make([]bool, n)}
	for j, ag := range l.Agents {
		b.Agents[j] = fastlane.AgentBuffers{Copies: make([]int64, n), Obs: make([]float32, n*ag.ObsDim),
			Masks: make([]bool, n*ag.MaskLen), Actions: make([]int64, n)}
	}
	return b
}

// multiAnswer is the size of the largest BatchTurn of n copies of the layout l: each
// copy's row in the group of its widest agent, and its columns of every agent.
func multiAnswer(l fastlane.Layout, n int64) int64 {
	row, a, groups := int64(0), int64(len(l.Agents)), int64(256)
	for _, ag := range l.Agents {
		row = max(row, 4*int64(ag.ObsDim)+int64(ag.MaskLen))
		groups += 64 + int64(len(ag.Name)) // a group's name, shapes and tags
	}
	// A row: observation and mask, copy index; per agent a reward, a span and two
	// flags; the ended flag.
	return n*(row+8+a*(8+8+1+1)+1) + groups
}

// makeMultiBatch is MakeBatch of a multi-agent environment, f's, whose environments
// are like probe.
func (e *envService) makeMultiBatch(ctx context.Context, req *pb.MakeBatchRequest, f registry.Factory, probe env.MultiAgent) (*pb.MakeBatchResponse, error) {
	name, n := req.GetEnv(), req.GetNumEnvs()
	l, err := fastlane.LayoutOf(name, probe)
	if err != nil {
		return nil, invalid(fieldErrorf("env", "%v", err))
	}
	// The copies are counted, and refused, before they are built: their observations
	// held three times, as a single-agent batch's (the copies', the groups', the
	// buffers'), and an answer of every copy's row.
	c := sessionCost(name, f, probe.Agents(), n)
	c.answer = multiAnswer(l, n)
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
	var config []byte
	if req.GetConfig() != "" {
		config = []byte(req.GetConfig())
	}
	// A factory that panics fails the call, as a copy that panics fails a step.
	guarded := registry.FactoryFunc(func(o registry.EnvOptions) (env.MultiAgent, error) {
		return safe(func() (env.MultiAgent, error) { return f.NewEnv(o) })
	})
	mb := &multiBatch{l: l, b: newMultiBuffers(int(n), l)}
	if mb.x, err = fastlane.NewMultiOf(e.reg, name, config, guarded, l, int(n), batchWorkers(req.GetWorkers()), mb.b); err != nil {
		return nil, status.Errorf(codes.Internal, "%s: building %d copies: %v", name, n, err)
	}
	b := &batchSession{env: name, multi: mb, owner: who, cost: c.bytes}
	if err := e.openBatch(b, probe.Agents(), now); err != nil {
		_ = mb.x.Close()
		return nil, err
	}
	built = true
	return &pb.MakeBatchResponse{Session: b.id, Spec: b.proto, NumEnvs: n, MultiAgent: true}, nil
}

// resetMulti is ResetBatch of a multi-agent session, locked.
func (b *batchSession) resetMulti(ctx context.Context, seed uint64) (*pb.BatchTurn, error) {
	if err := b.multi.x.Reset(ctx, seed); err != nil {
		return nil, b.status("ResetBatch", err)
	}
	return b.multi.turn(), nil
}

// stepMulti is StepBatch of a multi-agent session, locked: the actions, the groups'
// one after the other, go to the groups' rows, and the fast lane checks every one
// before any copy steps.
func (b *batchSession) stepMulti(ctx context.Context, t *pb.Tensor) (*pb.BatchTurn, error) {
	m := b.multi
	actions, fe := decodeInt64("actions", t, nil, []int64{int64(m.x.Len())})
	if fe != nil {
		return nil, invalid(fe)
	}
	off := 0
	for j := range m.b.Agents {
		k := int(m.b.Counts[j])
		copy(m.b.Agents[j].Actions[:k], actions[off:off+k])
		off += k
	}
	if err := m.x.Step(ctx); err != nil {
		if ae, ok := errors.AsType[*fastlane.ActionError](err); ok {
			return nil, invalid(fieldErrorf(fmt.Sprintf("actions[%d]", m.row(ae.Copy)), "copy %d: agent %s: action %d: %s", ae.Copy, ae.Agent, ae.Action, ae.Reason))
		}
		return nil, b.status("StepBatch", err)
	}
	return m.turn(), nil
}

// row returns the index of copy i's action in StepBatch's actions: its row in its
// group, after the rows of the groups before.
func (m *multiBatch) row(i int) int {
	off := 0
	for j := range m.b.Agents {
		k := int(m.b.Counts[j])
		for r, c := range m.b.Agents[j].Copies[:k] {
			if int(c) == i {
				return off + r
			}
		}
		off += k
	}
	return i
}

// turn copies the buffers into a BatchTurn, in one array: the response is marshaled
// after the session is released, so nothing may alias them.
func (m *multiBatch) turn() *pb.BatchTurn {
	b := &m.b
	n, a := int64(len(b.Acting)), int64(len(m.l.Agents))
	size := n*a*(8+8+1+1) + n
	for j, ag := range m.l.Agents {
		size += b.Counts[j] * (8 + 4*int64(ag.ObsDim) + int64(ag.MaskLen))
	}
	arena := make([]byte, 0, size)
	put := func(p []byte) []byte {
		start := len(arena)
		arena = append(arena, p...)
		return arena[start:len(arena):len(arena)]
	}
	ts := make([]pb.Tensor, 3*a+5)
	tensor := func(dtype pb.DType, data []byte, shape ...int64) *pb.Tensor {
		t := &ts[0]
		ts = ts[1:]
		return setTensor(t, dtype, put(data), shape...)
	}
	out := &pb.BatchTurn{Groups: make([]*pb.BatchGroup, a)}
	groups := make([]pb.BatchGroup, a)
	for j, ag := range m.l.Agents {
		g, k, d := &b.Agents[j], b.Counts[j], int64(ag.ObsDim)
		gp := &groups[j]
		gp.Agent = ag.Name
		gp.Copies = tensor(pb.DType_DTYPE_INT64, int64Bytes(g.Copies[:k], nil), k)
		gp.Observations = tensor(pb.DType_DTYPE_FLOAT32, float32Bytes(g.Obs[:k*d], nil), k, d)
		if ml := int64(ag.MaskLen); ml > 0 {
			gp.Masks = tensor(pb.DType_DTYPE_BOOL, boolBytes(g.Masks[:k*ml]), k, ml)
		}
		out.Groups[j] = gp
	}
	out.Rewards = tensor(pb.DType_DTYPE_FLOAT64, float64Bytes(b.Rewards), n, a)
	out.Spans = tensor(pb.DType_DTYPE_INT64, int64Bytes(b.Spans, nil), n, a)
	out.Terminated = tensor(pb.DType_DTYPE_BOOL, boolBytes(b.Terminated), n, a)
	out.Truncated = tensor(pb.DType_DTYPE_BOOL, boolBytes(b.Truncated), n, a)
	out.Ended = tensor(pb.DType_DTYPE_BOOL, boolBytes(b.Ended), n)
	return out
}
