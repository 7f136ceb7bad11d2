package remote

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/batonrl/baton/env"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
)

// BatchGroup is one agent's group in a MultiBatchEnv after a Reset or Step: the
// copies the agent acts in now (ascending), with their observations (rows of the
// agent's observation length) and masks (rows of its mask length; nil for an agent
// without a mask), and Actions, one per copy, which the caller fills before the next
// Step. Its slices belong to the MultiBatchEnv and are overwritten by its next Reset
// and Step.
type BatchGroup struct {
	// Agent is the agent's name; Index its position in Agents.
	Agent string
	Index int
	// Copies holds the copies' indices, ascending.
	Copies []int64
	Obs    []float32
	Masks  []bool
	// Actions holds the action of each row, for the next Step.
	Actions []int64
}

// MultiBatchEnv is a batch session of a multi-agent environment (a hierarchy such as
// the maze, or any turn-taking env.MultiAgent): N copies reset and stepped together,
// one call for all of them, batched per acting agent as env/vector's Multi does, with
// the buffers and results of the fast lane's in-process Multi for the same seed and
// actions (Python's baton.vector.MultiVector). After each Reset and Step:
//
//	Groups      one BatchGroup per agent, in the order of Agents
//	Acting      [N]      the index of the agent acting in each copy
//	Rewards     [N × A]  the sum of the rewards each agent was reported in each copy
//	Spans       [N × A]  the sum of the ticks those rewards' decisions took
//	Terminated  [N × A]  whether an agent of that name was reported terminated
//	Truncated   [N × A]  ... or truncated, in the last Step (false after Reset)
//	Ended       [N]      which copies' episodes ended in the last Step, and were reset
//
// It is not safe for concurrent use; Close ends the session, as the client's Close
// does for the sessions still open.
type MultiBatchEnv struct {
	c       *EnvClient
	name    string
	session string
	specs   []env.Spec
	n       int

	groups  []BatchGroup
	copies  [][]int64   // per agent, N rows
	obs     [][]float32 // per agent, N rows of its observation
	masks   [][]bool    // per agent, N rows of its mask; nil without one
	actions []int64     // N: the groups' Actions, one group after the other
	acting  []int64
	rewards []float64
	spans   []int64
	term    []bool
	trunc   []bool
	ended   []bool
	seen    []bool // scratch of read
	buf     []byte
	act     pb.Tensor
}

// MakeMultiBatch opens a batch session of n copies of the multi-agent environment
// name with a JSON configuration (nil for its defaults), stepped on the server by
// workers goroutines (0 or 1: one). A single-agent environment is an error wrapping
// ErrMismatch (MakeBatch steps it); so is an agent whose actions are not Discrete
// (ErrInvalidArgument, from the server).
func (c *EnvClient) MakeMultiBatch(ctx context.Context, name string, config []byte, n, workers int) (*MultiBatchEnv, error) {
	var resp *pb.MakeBatchResponse
	err := c.c.call(ctx, methodMakeBatch, "environment "+name, func(ctx context.Context) error {
		var err error
		resp, err = c.api.MakeBatch(ctx, &pb.MakeBatchRequest{Env: name, Config: string(config), NumEnvs: int64(n), Workers: int64(workers), MultiAgent: true})
		return err
	})
	if err != nil {
		return nil, err
	}
	b := &MultiBatchEnv{c: c, name: name, session: resp.GetSession(), n: n}
	specs, err := c.specs(resp.GetSpec())
	switch {
	case err != nil:
	case !resp.GetMultiAgent():
		err = fmt.Errorf("%w: %s at %s is a single-agent environment: MakeBatch steps it", ErrMismatch, name, c.c.addr)
	case len(specs) == 0 || resp.GetNumEnvs() != int64(n):
		err = fmt.Errorf("%w: batch of %s at %s: %d agents and %d copies, want 1 or more and %d", ErrMismatch, name, c.c.addr, len(specs), resp.GetNumEnvs(), n)
	}
	if err != nil {
		_ = b.close(ctx)
		return nil, err
	}
	b.specs = specs
	a := len(specs)
	b.groups = make([]BatchGroup, a)
	b.copies, b.obs, b.masks = make([][]int64, a), make([][]float32, a), make([][]bool, a)
	for j, s := range specs {
		b.groups[j] = BatchGroup{Agent: s.Name, Index: j}
		b.copies[j] = make([]int64, n)
		b.obs[j] = make([]float32, n*s.ObservationSpace.FlatDim())
		if s.MaskLen > 0 {
			b.masks[j] = make([]bool, n*s.MaskLen)
		}
	}
	b.actions, b.acting, b.ended, b.seen = make([]int64, n), make([]int64, n), make([]bool, n), make([]bool, n)
	b.rewards, b.spans, b.term, b.trunc = make([]float64, n*a), make([]int64, n*a), make([]bool, n*a), make([]bool, n*a)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = b.close(ctx)
		return nil, fmt.Errorf("%w: the client is closed", ErrConfig)
	}
	if c.batches == nil {
		c.batches = map[batchCloser]struct{}{}
	}
	c.batches[b] = struct{}{}
	c.mu.Unlock()
	return b, nil
}

// Session returns the session's id.
func (b *MultiBatchEnv) Session() string { return b.session }

// Len returns the number of copies.
func (b *MultiBatchEnv) Len() int { return b.n }

// Agents describes the environment's agents, in its order: agent j's is Groups()[j],
// and column j of Rewards, Spans, Terminated and Truncated.
func (b *MultiBatchEnv) Agents() []env.Spec { return b.specs }

// Groups returns each agent's group, in the order of Agents.
func (b *MultiBatchEnv) Groups() []BatchGroup { return b.groups }

// Acting returns the index of the agent acting in each copy.
func (b *MultiBatchEnv) Acting() []int64 { return b.acting }

// Rewards returns the rewards of the last step, N rows of one column per agent.
func (b *MultiBatchEnv) Rewards() []float64 { return b.rewards }

// Spans returns the ticks of the rewards' decisions, laid out as Rewards.
func (b *MultiBatchEnv) Spans() []int64 { return b.spans }

// Terminated returns which agents were reported terminated in each copy, laid out as
// Rewards.
func (b *MultiBatchEnv) Terminated() []bool { return b.term }

// Truncated returns which agents were reported truncated in each copy, laid out as
// Rewards.
func (b *MultiBatchEnv) Truncated() []bool { return b.trunc }

// Ended returns which copies' episodes ended in the last step (and were reset).
func (b *MultiBatchEnv) Ended() []bool { return b.ended }

// Reset resets every copy, copy i with vector.EpisodeSeed(seed, i, 0), and regroups.
func (b *MultiBatchEnv) Reset(ctx context.Context, seed uint64) error {
	var resp *pb.BatchTurn
	err := b.c.c.call(ctx, methodResetBatch, b.target(), func(ctx context.Context) error {
		var err error
		resp, err = b.c.api.ResetBatch(ctx, &pb.ResetBatchRequest{Session: b.session, Seed: seed})
		return err
	})
	if err != nil {
		return err
	}
	return b.read(resp)
}

// Step steps every copy with the action of its row in its agent's group (the
// groups' Actions) and regroups. An action outside its agent's space, or masked, is
// an error wrapping ErrInvalidArgument that names the copy and the agent, and
// changes nothing. It is never retried: a step that timed out may have happened.
func (b *MultiBatchEnv) Step(ctx context.Context) error {
	b.buf = int64Bytes(b.actions, b.buf)
	req := &pb.StepBatchRequest{Session: b.session, Actions: setTensor(&b.act, pb.DType_DTYPE_INT64, b.buf, int64(b.n))}
	var resp *pb.BatchTurn
	err := b.c.c.call(ctx, methodStepBatch, b.target(), func(ctx context.Context) error {
		var err error
		resp, err = b.c.api.StepBatch(ctx, req)
		return err
	})
	if err != nil {
		return err
	}
	return b.read(resp)
}

func (b *MultiBatchEnv) target() string { return "batch of " + b.name + " " + shortID(b.session) }

// groupTurn is one group of a BatchTurn, decoded.
type groupTurn struct {
	copies []int64
	obs    []float32
	masks  []bool
}

// read decodes a BatchTurn of a multi-agent session into the buffers, checking every
// tensor's dtype and shape and that the groups hold every copy once; a bad turn
// changes nothing.
func (b *MultiBatchEnv) read(t *pb.BatchTurn) error {
	n, a := int64(b.n), int64(len(b.specs))
	bad := func(fe *FieldError) error {
		return fmt.Errorf("%w: %s from %s: %w", ErrMismatch, fe.Field, b.c.c.addr, fe)
	}
	gs := t.GetGroups()
	if int64(len(gs)) != a {
		return bad(fieldErrorf("groups", "%d groups, want one per agent (%d)", len(gs), a))
	}
	dec := make([]groupTurn, a)
	clear(b.seen)
	total := int64(0)
	for j, g := range gs {
		s, field := b.specs[j], fmt.Sprintf("groups[%d]", j)
		if g.GetAgent() != s.Name {
			return bad(fieldErrorf(field+".agent", "%q, want %q", g.GetAgent(), s.Name))
		}
		shape := g.GetCopies().GetShape()
		if len(shape) != 1 || shape[0] < 0 || shape[0] > n-total {
			return bad(fieldErrorf(field+".copies.shape", "%s, want [k] with k from 0 to %d", shapeString(shape), n-total))
		}
		k := shape[0]
		copies, fe := decodeInt64(field+".copies", g.GetCopies(), nil, []int64{k})
		if fe != nil {
			return bad(fe)
		}
		for r, i := range copies {
			if i < 0 || i >= n || b.seen[i] || (r > 0 && i <= copies[r-1]) {
				return bad(fieldErrorf(field+".copies.data", "element %d is %d: want ascending copies from 0 to %d, each in one group", r, i, n-1))
			}
			b.seen[i] = true
		}
		total += k
		d := int64(s.ObservationSpace.FlatDim())
		obs, fe := decodeFloat32Any(field+".observations", g.GetObservations(), nil, []int64{k, d})
		if fe != nil {
			return bad(fe)
		}
		dec[j] = groupTurn{copies: copies, obs: obs}
		if m := int64(s.MaskLen); m > 0 {
			if dec[j].masks, fe = decodeBool(field+".masks", g.GetMasks(), []int64{k, m}); fe != nil {
				return bad(fe)
			}
		}
	}
	if total != n {
		return bad(fieldErrorf("groups", "%d copies in the groups, want %d", total, n))
	}
	r := t.GetRewards()
	if _, fe := checkTensor("rewards", r, pb.DType_DTYPE_FLOAT64, []int64{n, a}); fe != nil {
		return bad(fe)
	}
	spans, fe := decodeInt64("spans", t.GetSpans(), nil, []int64{n, a})
	if fe != nil {
		return bad(fe)
	}
	term, fe := decodeBool("terminated", t.GetTerminated(), []int64{n, a})
	if fe != nil {
		return bad(fe)
	}
	trunc, fe := decodeBool("truncated", t.GetTruncated(), []int64{n, a})
	if fe != nil {
		return bad(fe)
	}
	ended, fe := decodeBool("ended", t.GetEnded(), []int64{n})
	if fe != nil {
		return bad(fe)
	}
	off := 0
	for j := range dec {
		g, k := &b.groups[j], len(dec[j].copies)
		copy(b.copies[j], dec[j].copies)
		copy(b.obs[j], dec[j].obs)
		g.Copies, g.Obs = b.copies[j][:k], b.obs[j][:len(dec[j].obs)]
		if b.masks[j] != nil {
			copy(b.masks[j], dec[j].masks)
			g.Masks = b.masks[j][:len(dec[j].masks)]
		}
		g.Actions = b.actions[off : off+k : off+k]
		off += k
		for _, i := range dec[j].copies {
			b.acting[i] = int64(j)
		}
	}
	for i, data := 0, r.GetData(); i < len(b.rewards); i++ {
		b.rewards[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	copy(b.spans, spans)
	copy(b.term, term)
	copy(b.trunc, trunc)
	copy(b.ended, ended)
	return nil
}

// Close ends the session on the server. The client's Close closes the sessions still
// open.
func (b *MultiBatchEnv) Close(ctx context.Context) error {
	b.c.mu.Lock()
	delete(b.c.batches, b)
	b.c.mu.Unlock()
	return b.close(ctx)
}

func (b *MultiBatchEnv) close(ctx context.Context) error {
	return b.c.closeSession(ctx, b.target(), b.session)
}
