package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/batonrl/baton/agent"
	pb "github.com/batonrl/baton/remote/proto/baton/v1"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultSource is the reward source that marks, with a zero reward, the step of a
// client actor's agent whose action the client did not choose in time: the trial
// took the actor's default action instead.
const DefaultSource = "default"

// maxPendingWait bounds PendingRequest.wait_ms.
const maxPendingWait = 60 * time.Second

// clientActor is the policy of an agent played by a client of TrialService: each
// Interact publishes the agent's turn and waits for ClientAct, the timeout, the idle
// timeout, or the end of the trial. It is Attended: its trial holds no compute
// worker. It is safe for concurrent use by the trial and the handlers.
type clientActor struct {
	name     string
	timeout  time.Duration // 0: none
	idle     time.Duration // the trial stops after this long without an action; 0: never
	fallback int64
	policy   agent.Policy // acts for a late client instead of fallback; nil for none
	acts     chan clientAction
	over     chan struct{} // closed when the trial has finished

	mu      sync.Mutex
	turn    *clientTurn   // nil while the agent is not to act
	changed chan struct{} // closed, then replaced, when turn changes
	ended   bool
	acted   time.Time // the client's last action, or the actor's making
}

// clientTurn is a published turn of the agent.
type clientTurn struct {
	resp     *pb.PendingResponse // without State and Error
	space    spaces.Discrete
	deadline time.Time // zero without a timeout
}

// clientAction is an action of ClientAct, answered on reply.
type clientAction struct {
	tick  int64
	raw   int64
	msgs  []*pb.ClientMessage
	reply chan error
}

func newClientActor(name string, c *pb.ClientActor, policy agent.Policy, idle time.Duration) *clientActor {
	return &clientActor{
		name: name, timeout: time.Duration(c.GetTimeoutMs()) * time.Millisecond, idle: idle, fallback: c.GetDefaultAction(), policy: policy,
		acts: make(chan clientAction), over: make(chan struct{}), changed: make(chan struct{}), acted: time.Now(),
	}
}

// Attended reports true: the actor waits for a person (see runners.Attended).
func (c *clientActor) Attended() bool { return true }

// errIdle is the error that stops a trial whose client has not acted for idle.
func (c *clientActor) errIdle() error {
	return fmt.Errorf("remote: the client of agent %s has not acted for %v, its idle timeout (ClientActor.idle_timeout_ms; baton serve --client-idle-timeout): %w", c.name, c.idle, runners.ErrStopped)
}

// waiting says, while the agent's turn waits for its client, since when and until
// when; "" otherwise.
func (c *clientActor) waiting() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == nil {
		return ""
	}
	w := fmt.Sprintf("waiting for the client of agent %s (no action for %v", c.name, time.Since(c.acted).Round(time.Second))
	if c.idle > 0 {
		w += fmt.Sprintf("; the trial stops at %v", c.idle)
	}
	return w + ")"
}

// Act is never called by a trial (the actor is an Interactor); outside one there is
// no client to ask.
func (c *clientActor) Act(context.Context, []float32, []bool) (agent.RawAction, error) {
	return agent.RawAction{}, fmt.Errorf("remote: client actor %s: acts only inside a trial", c.name)
}

// Interact publishes the agent's turn and returns the client's action, or the
// default one when the timeout passes first.
func (c *clientActor) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	spec := x.Spec()
	d, ok := spec.ActionSpace.(spaces.Discrete)
	if p, isPtr := spec.ActionSpace.(*spaces.Discrete); isPtr && p != nil {
		d, ok = *p, true
	}
	if !ok {
		return agent.RawAction{}, fmt.Errorf("remote: client actor %s: the agent acts in %v; a client plays Discrete spaces only", c.name, spec.ActionSpace)
	}
	resp := &pb.PendingResponse{
		Acting: true, AgentId: x.AgentID(), Episode: int64(x.Episode()), Tick: int64(x.Tick()),
		Observation: append([]float32(nil), obs...),
	}
	f := x.Frame()
	resp.Frame = &pb.Frame{Text: f.Text, Svg: f.SVG}
	if f.Scene != nil {
		if b, err := json.Marshal(f.Scene); err == nil {
			resp.Frame.SceneJson = string(b)
		}
	}
	firstAllowed := int64(-1)
	for i := range d.N {
		raw := d.Start + i
		allowed := mask == nil || int64(len(mask)) > i && mask[i]
		if allowed && firstAllowed < 0 {
			firstAllowed = raw
		}
		resp.Actions = append(resp.Actions, &pb.ActionChoice{Raw: raw, Name: x.ActionName(agent.Discrete(raw)), Allowed: allowed})
	}
	for _, m := range x.Inbox() {
		resp.Inbox = append(resp.Inbox, &pb.ClientMessage{From: m.From, Payload: string(m.Payload)})
	}
	resp.Receivers = x.Receivers()
	if r, ok := x.LastReward(); ok {
		resp.LastReward = &r
	}
	turn := &clientTurn{resp: resp, space: d}
	var timeout, idle <-chan time.Time
	if c.timeout > 0 {
		turn.deadline = time.Now().Add(c.timeout)
		t := time.NewTimer(c.timeout)
		defer t.Stop()
		timeout = t.C
	}
	if c.idle > 0 {
		c.mu.Lock()
		left := c.idle - time.Since(c.acted)
		c.mu.Unlock()
		if left <= 0 {
			return agent.RawAction{}, c.errIdle()
		}
		t := time.NewTimer(left)
		defer t.Stop()
		idle = t.C
	}
	c.publish(turn)
	withdrawn := false
	defer func() {
		if !withdrawn {
			c.publish(nil)
		}
	}()
	for {
		select {
		case a := <-c.acts:
			if a.tick != resp.Tick {
				a.reply <- status.Errorf(codes.FailedPrecondition, "agent %s acts at tick %d, not %d", c.name, resp.Tick, a.tick)
				continue
			}
			if err := sendAll(x, a.msgs); err != nil {
				a.reply <- err
				continue
			}
			// The turn is withdrawn before the client hears its action was taken, so
			// a Pending that follows the answer never sees the taken turn again.
			c.mu.Lock()
			c.acted = time.Now()
			c.mu.Unlock()
			c.publish(nil)
			withdrawn = true
			a.reply <- nil
			return agent.Discrete(a.raw), nil
		case <-timeout:
			if err := x.RewardAs(DefaultSource, x.AgentID(), 0); err != nil {
				return agent.RawAction{}, err
			}
			if c.policy != nil {
				if in, ok := c.policy.(runners.Interactor); ok {
					return in.Interact(ctx, x, obs, mask)
				}
				return c.policy.Act(ctx, obs, mask)
			}
			raw := c.fallback
			if !turn.allows(raw) {
				raw = firstAllowed
			}
			if raw < 0 {
				return agent.RawAction{}, fmt.Errorf("remote: client actor %s: the mask allows no action at tick %d", c.name, resp.Tick)
			}
			return agent.Discrete(raw), nil
		case <-idle:
			return agent.RawAction{}, c.errIdle()
		case <-ctx.Done():
			return agent.RawAction{}, ctx.Err()
		}
	}
}

// sendAll sends a client's messages, all or none: a bad receiver is
// INVALID_ARGUMENT, and then no message is sent.
func sendAll(x *runners.Exchange, msgs []*pb.ClientMessage) error {
	if err := checkReceivers(x.Receivers(), msgs); err != nil {
		return err
	}
	for i, m := range msgs {
		if err := x.Send(m.GetTo(), []byte(m.GetPayload())); err != nil {
			return invalid(fieldErrorf(fmt.Sprintf("messages[%d].to", i), "%v", err))
		}
	}
	return nil
}

// checkReceivers checks the receivers of a client's messages against those of the
// trial; the first bad one is INVALID_ARGUMENT naming them.
func checkReceivers(receivers []string, msgs []*pb.ClientMessage) error {
	for i, m := range msgs {
		if !slices.Contains(receivers, m.GetTo()) {
			return invalid(fieldErrorf(fmt.Sprintf("messages[%d].to", i), "%q is not a receiver of the trial's messages (receivers: %s); no message was sent and the action was not taken", m.GetTo(), strings.Join(receivers, ", ")))
		}
	}
	return nil
}

// allows reports whether raw is in the turn's space and allowed by its mask.
func (t *clientTurn) allows(raw int64) bool {
	i := raw - t.space.Start
	return i >= 0 && i < int64(len(t.resp.Actions)) && t.resp.Actions[i].Allowed
}

// publish sets the current turn (nil: none) and wakes the waiters.
func (c *clientActor) publish(t *clientTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turn = t
	close(c.changed)
	c.changed = make(chan struct{})
}

// finish marks the trial finished.
func (c *clientActor) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.ended = true
		close(c.over)
	}
}

// current returns the turn and the channel closed at its next change.
func (c *clientActor) current() (*clientTurn, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turn, c.changed
}

// pending waits up to wait for the agent's turn and returns it (nil when there is
// none: the wait passed or the trial finished).
func (c *clientActor) pending(ctx context.Context, wait time.Duration) (*clientTurn, error) {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	for {
		turn, changed := c.current()
		if turn != nil || wait <= 0 {
			return turn, nil
		}
		select {
		case <-changed:
		case <-c.over:
			return nil, nil
		case <-timer:
			return nil, nil
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}

// choose reads the action of req against the turn: a name or raw value outside the
// agent's actions, or masked, is INVALID_ARGUMENT naming why.
func (t *clientTurn) choose(req *pb.ClientActRequest) (int64, error) {
	var allowed []string
	for _, a := range t.resp.Actions {
		if a.Allowed {
			allowed = append(allowed, a.Name)
		}
	}
	switch a := req.GetAction().(type) {
	case *pb.ClientActRequest_Name:
		for _, c := range t.resp.Actions {
			if strings.EqualFold(c.Name, strings.TrimSpace(a.Name)) {
				if !c.Allowed {
					return 0, invalid(fieldErrorf("name", "%s is masked at tick %d (allowed: %s)", c.Name, t.resp.Tick, strings.Join(allowed, ", ")))
				}
				return c.Raw, nil
			}
		}
		return 0, invalid(fieldErrorf("name", "%q is not an action of %s (actions: %s)", a.Name, t.resp.AgentId, strings.Join(names(t.resp.Actions), ", ")))
	case *pb.ClientActRequest_Raw:
		i := a.Raw - t.space.Start
		if i < 0 || i >= t.space.N {
			return 0, invalid(fieldErrorf("raw", "%d is outside the action space of %s (%d to %d)", a.Raw, t.resp.AgentId, t.space.Start, t.space.Start+t.space.N-1))
		}
		if c := t.resp.Actions[i]; !c.Allowed {
			return 0, invalid(fieldErrorf("raw", "%d (%s) is masked at tick %d (allowed: %s)", a.Raw, c.Name, t.resp.Tick, strings.Join(allowed, ", ")))
		}
		return a.Raw, nil
	}
	return 0, invalid(fieldErrorf("action", "sets neither name nor raw"))
}

func names(cs []*pb.ActionChoice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// act hands the client's action to the waiting trial and returns once it took it
// (or refused it).
func (c *clientActor) act(ctx context.Context, req *pb.ClientActRequest) error {
	turn, changed := c.current()
	if turn == nil {
		return status.Errorf(codes.FailedPrecondition, "agent %s of trial %s is not to act now (ask Pending)", c.name, req.GetTrial())
	}
	if req.GetTick() != turn.resp.Tick {
		return status.Errorf(codes.FailedPrecondition, "agent %s acts at tick %d, not %d", c.name, turn.resp.Tick, req.GetTick())
	}
	raw, err := turn.choose(req)
	if err != nil {
		return err
	}
	if err := checkReceivers(turn.resp.Receivers, req.GetMessages()); err != nil {
		return err
	}
	a := clientAction{tick: req.GetTick(), raw: raw, msgs: req.GetMessages(), reply: make(chan error, 1)}
	select {
	case c.acts <- a:
	case <-changed:
		return status.Errorf(codes.FailedPrecondition, "the turn of agent %s at tick %d has passed", c.name, req.GetTick())
	case <-c.over:
		return status.Errorf(codes.FailedPrecondition, "trial %s has finished", req.GetTrial())
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	return <-a.reply
}
