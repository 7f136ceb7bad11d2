package models

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Registry is a Store that can wait for new versions. Versions put through the
// Registry wake waiters at once; versions other processes put into a shared store
// are seen at the next poll (WithPoll). A Registry is safe for concurrent use.
type Registry struct {
	Store
	poll time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed and replaced by every Put
}

// RegistryOption configures a Registry.
type RegistryOption func(*Registry)

// WithPoll makes Wait look at the store every d as well, to see versions that other
// processes put. Zero (the default) sees only versions put through this Registry.
func WithPoll(d time.Duration) RegistryOption { return func(r *Registry) { r.poll = d } }

// NewRegistry returns a Registry over s.
func NewRegistry(s Store, opts ...RegistryOption) *Registry {
	r := &Registry{Store: s, changed: make(chan struct{})}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Put implements Store, and wakes the waiters.
func (r *Registry) Put(ctx context.Context, meta Meta, data []byte) (Meta, error) {
	m, err := r.Store.Put(ctx, meta, data)
	if err == nil {
		r.mu.Lock()
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}
	return m, err
}

// Wait returns the metadata of name's newest version once it is newer than after,
// blocking until there is one or ctx ends. A name with no version yet is waited for
// too.
func (r *Registry) Wait(ctx context.Context, name string, after int) (Meta, error) {
	if err := CheckName(name); err != nil {
		return Meta{}, err
	}
	var tick <-chan time.Time
	if r.poll > 0 {
		t := time.NewTicker(r.poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		m, err := r.Stat(ctx, name, Latest)
		if err == nil && m.Version > after {
			return m, nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Meta{}, err
		}
		select {
		case <-ctx.Done():
			return Meta{}, ctx.Err()
		case <-changed:
		case <-tick:
		}
	}
}
