package remote

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// budget accounts what each key holds in an environment server's sessions: how
// many sessions, and about how many bytes. Every caller of a server without keys is
// one key. It is safe for concurrent use; its lock is taken last.
type budget struct {
	maxSessions int   // per key
	maxSession  int64 // bytes of one session
	maxKey      int64 // bytes of one key's sessions together
	maxMsg      int64 // bytes of a message (a session's answers must fit)

	mu   sync.Mutex
	held map[string]*holding // by key (keyOf)
}

// holding is what one key holds.
type holding struct {
	sessions int
	bytes    int64
}

func newBudget(c *serverConfig) *budget {
	b := &budget{maxSessions: c.maxSessions, maxSession: c.maxSessionBytes, maxKey: c.maxKeyBytes, maxMsg: int64(c.maxMsg), held: map[string]*holding{}}
	if b.maxSession == 0 {
		b.maxSession = DefaultMaxSessionBytes
	}
	if b.maxKey == 0 {
		b.maxKey = DefaultMaxKeyBytes
	}
	return b
}

// cost is what a session of an environment takes: its memory and its largest answer.
type cost struct {
	// what describes the session for messages: "4096 copies of maze-flat".
	what string
	// bytes is the estimate of its memory: shared + copies × each.
	bytes, shared, each int64
	copies              int64
	// floats is the length of one copy's observations; held how many times the
	// session keeps them (a batch: the copy's own, the batch's and its final ones).
	floats, held int64
	// answer is the size of its largest answer (a Turn, a BatchTurn).
	answer int64
}

// sessionCost estimates the cost of a session of n copies (0 for a session of
// Make) of the environment name built by f, whose agents are specs: the factory's
// registry.Sizer estimate, or each copy's observations, and for a batch the
// observation buffers of the batch (the observations and the final ones).
func sessionCost(name string, f registry.Factory, specs []env.Spec, n int64) cost {
	var floats, masks int64
	for _, s := range specs {
		floats += int64(s.ObservationSpace.FlatDim())
		masks += int64(s.MaskLen)
	}
	c := cost{what: "a session of " + name, copies: 1, floats: floats, held: 1, each: 4 * floats}
	if s, ok := f.(registry.Sizer); ok {
		c.shared, c.each = s.Size()
		c.shared, c.each = max(c.shared, 0), max(c.each, 0)
	}
	// A Turn: each report's observation, mask and fields.
	c.answer = 4*floats + masks + 64*int64(len(specs)) + 64
	if n > 0 {
		c.what = fmt.Sprintf("%d copies of %s", n, name)
		c.copies, c.held = n, 3
		c.each += 2 * 4 * floats
		// A BatchTurn after a step where every copy ended: observations and final
		// observations, masks, rewards and end flags.
		c.answer = n*(2*4*floats+masks+8+2) + 256
	}
	c.bytes = c.shared + c.copies*c.each
	return c
}

// keyOf names the key of a call, for the budget: the names its key is the key of,
// "*" for the default key, "" for every call to a server without keys.
func keyOf(ctx context.Context) string {
	g := grantFrom(ctx)
	if g.open {
		return ""
	}
	var names []string
	for i, n := range g.keys.names {
		if g.matched[i] {
			names = append(names, n)
		}
	}
	if g.def {
		names = append(names, "*")
	}
	return strings.Join(names, ",")
}

// check refuses, with RESOURCE_EXHAUSTED, a session whose answers would not fit a
// message or whose memory passes the budget of a session. op is the method.
func (b *budget) check(op string, c cost) error {
	if c.bytes > b.maxSession {
		return status.Errorf(codes.ResourceExhausted, "%s: %s = %s exceeds the session budget of %s (--max-session-bytes)",
			op, c.describe(), byteSize(c.bytes), byteSize(b.maxSession))
	}
	if c.answer > b.maxMsg {
		return status.Errorf(codes.ResourceExhausted, "%s: %s: an answer would take %s, more than the message limit of %s (--max-message-bytes)",
			op, c.what, byteSize(c.answer), byteSize(b.maxMsg))
	}
	return nil
}

// describe says how the cost adds up.
func (c cost) describe() string {
	var sb strings.Builder
	if c.copies > 1 {
		fmt.Fprintf(&sb, "%d copies × %s", c.copies, byteSize(c.each))
	} else {
		sb.WriteString(byteSize(c.each))
	}
	fmt.Fprintf(&sb, " (%d observation floats", c.floats)
	if c.held > 1 {
		fmt.Fprintf(&sb, " held %d times", c.held)
	}
	sb.WriteString(", and the state)")
	if c.shared > 0 {
		fmt.Fprintf(&sb, " + %s shared", byteSize(c.shared))
	}
	return sb.String()
}

// reserve takes a session of cost c for the key who, or refuses it with
// RESOURCE_EXHAUSTED when the key holds as many sessions as a key may, or when c
// would take the key past its budget of bytes.
func (b *budget) reserve(op, who string, c cost) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.held[who]
	if h == nil {
		h = &holding{}
		b.held[who] = h
	}
	if h.sessions >= b.maxSessions {
		return status.Errorf(codes.ResourceExhausted, "%s: this key has %d sessions open, the most a key may have (--max-sessions): close some", op, h.sessions)
	}
	if h.bytes+c.bytes > b.maxKey {
		return status.Errorf(codes.ResourceExhausted, "%s: %s takes %s; with the %s this key's %d sessions hold, that exceeds the key's budget of %s (--max-key-bytes): close some",
			op, c.what, byteSize(c.bytes), byteSize(h.bytes), h.sessions, byteSize(b.maxKey))
	}
	h.sessions++
	h.bytes += c.bytes
	return nil
}

// release gives back a session of bytes held by who.
func (b *budget) release(who string, bytes int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.held[who]
	if h == nil {
		return
	}
	h.sessions--
	h.bytes -= bytes
	if h.sessions <= 0 {
		delete(b.held, who)
	}
}

// byteSize writes n bytes for people: "512 B", "40.0 KiB", "668 MiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	suffix := []string{"KiB", "MiB", "GiB", "TiB"}[i]
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, suffix)
	}
	return fmt.Sprintf("%.0f %s", v, suffix)
}
