package remote

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/batonrl/baton/env"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
)

const (
	methodMakeBatch  = "EnvService/MakeBatch"
	methodResetBatch = "EnvService/ResetBatch"
	methodStepBatch  = "EnvService/StepBatch"
)

// BatchEnv is a batch session of an environment server: N copies of a single-agent
// environment reset and stepped together, one call for all of them, as a local
// env/vector.Env (with the same results for the same seed and actions: see the
// EnvService contract). Its buffers (Obs, Masks, Rewards, Terminated, Truncated,
// FinalObs) are laid out as vector.Env's and overwritten by every Reset and Step.
// It is not safe for concurrent use; Close ends the session, as the client's Close
// does for the sessions still open.
type BatchEnv struct {
	c       *EnvClient
	name    string
	session string
	spec    env.Spec
	n       int

	obs, final []float32
	masks      []bool
	rewards    []float64
	term       []bool
	trunc      []bool
	buf        []byte
	act        pb.Tensor
}

// MakeBatch opens a batch session of n copies of the single-agent environment name
// with a JSON configuration (nil for its defaults), stepped on the server by workers
// goroutines (0 or 1: one).
func (c *EnvClient) MakeBatch(ctx context.Context, name string, config []byte, n, workers int) (*BatchEnv, error) {
	var resp *pb.MakeBatchResponse
	err := c.c.call(ctx, methodMakeBatch, "environment "+name, func(ctx context.Context) error {
		var err error
		resp, err = c.api.MakeBatch(ctx, &pb.MakeBatchRequest{Env: name, Config: string(config), NumEnvs: int64(n), Workers: int64(workers)})
		return err
	})
	if err != nil {
		return nil, err
	}
	specs, err := c.specs(resp.GetSpec())
	if err != nil {
		return nil, err
	}
	if len(specs) != 1 || resp.GetNumEnvs() != int64(n) {
		return nil, fmt.Errorf("%w: batch of %s at %s: %d agents and %d copies, want 1 and %d", ErrMismatch, name, c.c.addr, len(specs), resp.GetNumEnvs(), n)
	}
	s := specs[0]
	d, m := s.ObservationSpace.FlatDim(), s.MaskLen
	b := &BatchEnv{c: c, name: name, session: resp.GetSession(), spec: s, n: n,
		obs: make([]float32, n*d), final: make([]float32, n*d), masks: make([]bool, n*m),
		rewards: make([]float64, n), term: make([]bool, n), trunc: make([]bool, n)}
	if m == 0 {
		b.masks = nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%w: the client is closed", ErrConfig)
	}
	if c.batches == nil {
		c.batches = map[batchCloser]struct{}{}
	}
	c.batches[b] = struct{}{}
	return b, nil
}

// batchCloser is a batch session of either kind, which the client's Close closes.
type batchCloser interface {
	close(ctx context.Context) error
}

// Session returns the session's id.
func (b *BatchEnv) Session() string { return b.session }

// Len returns the number of copies.
func (b *BatchEnv) Len() int { return b.n }

// Spec describes the copies' agent.
func (b *BatchEnv) Spec() env.Spec { return b.spec }

// Obs returns the copies' observations, N rows of the observation's length.
func (b *BatchEnv) Obs() []float32 { return b.obs }

// Masks returns their action masks, N rows, or nil without a mask.
func (b *BatchEnv) Masks() []bool { return b.masks }

// Rewards returns the rewards of the last step.
func (b *BatchEnv) Rewards() []float64 { return b.rewards }

// Terminated returns which episodes terminated in the last step.
func (b *BatchEnv) Terminated() []bool { return b.term }

// Truncated returns which episodes were truncated in the last step.
func (b *BatchEnv) Truncated() []bool { return b.trunc }

// FinalObs returns the last observations of the episodes that ended in the last step,
// at their copies' rows; read row i only where Terminated[i] or Truncated[i].
func (b *BatchEnv) FinalObs() []float32 { return b.final }

// Reset resets every copy, copy i with vector.EpisodeSeed(seed, i, 0).
func (b *BatchEnv) Reset(ctx context.Context, seed uint64) error {
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

// Step steps copy i with actions[i], for every copy. It is never retried: a step
// that timed out may have happened.
func (b *BatchEnv) Step(ctx context.Context, actions []int64) error {
	if len(actions) != b.n {
		return fmt.Errorf("%w: %d actions for %d copies", ErrMismatch, len(actions), b.n)
	}
	b.buf = int64Bytes(actions, b.buf)
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

func (b *BatchEnv) target() string { return "batch of " + b.name + " " + shortID(b.session) }

// read decodes a BatchTurn into the buffers, checking every tensor's dtype and shape.
func (b *BatchEnv) read(t *pb.BatchTurn) error {
	n, d, m := int64(b.n), int64(len(b.obs)/max(b.n, 1)), int64(len(b.masks)/max(b.n, 1))
	bad := func(fe *FieldError) error {
		return fmt.Errorf("%w: %s from %s: %w", ErrMismatch, fe.Field, b.c.c.addr, fe)
	}
	obs, fe := decodeFloat32("observations", t.GetObservations(), nil, []int64{n, d})
	if fe != nil {
		return bad(fe)
	}
	term, fe := decodeBool("terminated", t.GetTerminated(), []int64{n})
	if fe != nil {
		return bad(fe)
	}
	trunc, fe := decodeBool("truncated", t.GetTruncated(), []int64{n})
	if fe != nil {
		return bad(fe)
	}
	r := t.GetRewards()
	if _, fe := checkTensor("rewards", r, pb.DType_DTYPE_FLOAT64, []int64{n}); fe != nil {
		return bad(fe)
	}
	if m > 0 {
		masks, fe := decodeBool("masks", t.GetMasks(), []int64{n, m})
		if fe != nil {
			return bad(fe)
		}
		copy(b.masks, masks)
	}
	k := int64(0)
	for i := range b.n {
		if term[i] || trunc[i] {
			k++
		}
	}
	final, fe := decodeFloat32("final_observations", t.GetFinalObservations(), nil, []int64{k, d})
	if fe != nil {
		return bad(fe)
	}
	copy(b.obs, obs)
	copy(b.term, term)
	copy(b.trunc, trunc)
	for i, data := 0, r.GetData(); i < b.n; i++ {
		b.rewards[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	row := int64(0)
	for i := range b.n {
		if term[i] || trunc[i] {
			copy(b.final[int64(i)*d:int64(i+1)*d], final[row*d:(row+1)*d])
			row++
		}
	}
	return nil
}

// Close ends the session on the server. The client's Close closes the sessions still
// open.
func (b *BatchEnv) Close(ctx context.Context) error {
	b.c.mu.Lock()
	delete(b.c.batches, b)
	b.c.mu.Unlock()
	return b.close(ctx)
}

func (b *BatchEnv) close(ctx context.Context) error {
	return b.c.closeSession(ctx, b.target(), b.session)
}
