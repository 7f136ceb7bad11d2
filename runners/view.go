package runners

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// FrameWindow is how long one call of Controller.Frame keeps a trial drawing its
// environment after each step: people who watch a trial ask again within it.
const FrameWindow = 2 * time.Second

// MaxFramePace bounds the wait Controller.Frame asks a watched trial to make after
// each step it draws.
const MaxFramePace = 2 * time.Second

// TrialFrame is a trial's environment as it was drawn last for people who watch it
// (Controller.Frame): after its latest step while it was watched.
type TrialFrame struct {
	// Seq counts the frames the trial drew; 0 means none yet.
	Seq uint64
	// Episode and Tick are where the trial was when it drew the frame.
	Episode, Tick int
	// Text and SVG are the frame's forms (env.Frame); "" when the environment draws
	// none.
	Text, SVG string
	// Scene is the frame's Scene as JSON; nil when there is none. It must not be
	// modified.
	Scene []byte
}

// viewing is the part of a trial that people watch: the controller asks for frames
// (until, pace), the trial draws them between its steps (last).
type viewing struct {
	until atomic.Int64 // Unix nanoseconds until which the trial draws; 0: not watched
	pace  atomic.Int64 // the wait after each step drawn, in nanoseconds
	mu    sync.Mutex
	last  TrialFrame
}

// Frame returns the trial's environment as it drew it last for people, and asks the
// trial to draw it after each step for the next FrameWindow, waiting pace after each
// step meanwhile (0: no wait; at most MaxFramePace), so that people watch it at the
// speed they choose. A trial nobody watches draws nothing and waits for nothing; a
// watched one holds its worker for the waits. The frame of a trial never watched
// while it ran has Seq 0. It returns an error wrapping ErrUnknownTrial for an id the
// controller does not hold, and one wrapping ErrInvalidSpec for a pace out of range.
func (c *Controller) Frame(id string, pace time.Duration) (TrialFrame, error) {
	if pace < 0 || pace > MaxFramePace {
		return TrialFrame{}, fmt.Errorf("%w: frame pace %v: want 0 to %v", ErrInvalidSpec, pace, MaxFramePace)
	}
	rec, err := c.get(id)
	if err != nil {
		return TrialFrame{}, err
	}
	v := &rec.view
	v.pace.Store(int64(pace))
	v.until.Store(time.Now().Add(FrameWindow).UnixNano())
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last, nil
}

// watched draws the trial's environment for the people who watch it, when they do,
// and waits the pace they asked for. It is called between steps, after a successful
// Reset or Step; it costs an atomic load when nobody watches.
func (t *trial) watched() error {
	v := t.view
	if v == nil {
		return nil
	}
	until := v.until.Load()
	if until == 0 {
		return nil
	}
	if time.Now().UnixNano() > until {
		v.until.CompareAndSwap(until, 0)
		return nil
	}
	f := t.plan.open.entry.Look.Frame(t.env)
	tf := TrialFrame{Episode: t.episode, Tick: max(t.tick, 0), Text: f.Text, SVG: f.SVG}
	if f.Scene != nil {
		if b, err := json.Marshal(f.Scene); err == nil {
			tf.Scene = b
		}
	}
	v.mu.Lock()
	tf.Seq = v.last.Seq + 1
	v.last = tf
	v.mu.Unlock()
	if d := time.Duration(v.pace.Load()); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-t.done:
			return t.ctx.Err()
		}
	}
	return nil
}
