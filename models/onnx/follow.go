package onnx

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/runners"
)

// Source is where a Follower finds versions: a *models.Registry, or a
// *remote.ModelClient for a model server.
type Source interface {
	Get(ctx context.Context, name string, version int) (models.Meta, []byte, error)
	Wait(ctx context.Context, name string, after int) (models.Meta, error)
}

// loaded is one version of the followed model.
type loaded struct {
	meta   models.Meta
	policy *Policy
}

// Follower follows a model's newest version, as Cogment's actors do: it loads the
// newest version at once, then each newer one as the source announces it; the
// policies it hands out (Policy) act with the version they hold and take the newest
// loaded one between episodes, never in the middle of one. A version that does not
// load or fails check is skipped (Err reports the last such failure). A Follower is
// safe for concurrent use; Close stops it.
type Follower struct {
	cur    atomic.Pointer[loaded]
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// Follow loads name's newest version from src (check, when not nil, vets each
// version's metadata, e.g. its spaces) and follows it until ctx ends or Close. Each
// version loads with opts (New).
func Follow(ctx context.Context, src Source, name string, check func(models.Meta) error, opts ...Option) (*Follower, error) {
	first, err := load(ctx, src, name, models.Latest, check, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Follower{cancel: cancel, done: make(chan struct{})}
	f.cur.Store(first)
	go f.follow(ctx, src, name, check, opts)
	return f, nil
}

func load(ctx context.Context, src Source, name string, version int, check func(models.Meta) error, opts []Option) (*loaded, error) {
	meta, data, err := src.Get(ctx, name, version)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(meta); err != nil {
			return nil, err
		}
	}
	p, err := New(data, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", meta.Ref(), err)
	}
	return &loaded{meta: meta, policy: p}, nil
}

func (f *Follower) follow(ctx context.Context, src Source, name string, check func(models.Meta) error, opts []Option) {
	defer close(f.done)
	after := f.cur.Load().meta.Version
	for {
		meta, err := src.Wait(ctx, name, after)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			f.setErr(err)
			return
		}
		after = meta.Version
		l, err := load(ctx, src, name, meta.Version, check, opts)
		if err != nil {
			f.setErr(err)
			continue
		}
		f.cur.Store(l)
	}
}

func (f *Follower) setErr(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// Err returns the last version that could not be followed, or nil.
func (f *Follower) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Latest returns the metadata of the newest version loaded.
func (f *Follower) Latest() models.Meta { return f.cur.Load().meta }

// Close stops following and waits for the follower's goroutine to end.
func (f *Follower) Close() error {
	f.cancel()
	<-f.done
	return nil
}

// Policy returns a policy for one trial: it acts with the version it holds and takes
// the newest loaded version when an episode ends (it is a runners.Learner, told of
// the ends). Use one per trial (runners.PerTrial); it is not safe for concurrent use.
func (f *Follower) Policy() *FollowingPolicy {
	return &FollowingPolicy{f: f, cur: f.cur.Load()}
}

// FollowingPolicy is a trial's view of a Follower.
type FollowingPolicy struct {
	f   *Follower
	cur *loaded
}

var (
	_ agent.Policy    = (*FollowingPolicy)(nil)
	_ runners.Learner = (*FollowingPolicy)(nil)
)

// Act implements agent.Policy with the version held.
func (p *FollowingPolicy) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	return p.cur.policy.Act(ctx, obs, mask)
}

// Learn implements runners.Learner: at an episode's end it takes the newest version.
func (p *FollowingPolicy) Learn(_ context.Context, o *runners.Outcome) error {
	if o.Kind == runners.OutcomeEpisodeEnd {
		p.cur = p.f.cur.Load()
	}
	return nil
}

// Version returns the version held.
func (p *FollowingPolicy) Version() models.Meta { return p.cur.meta }
