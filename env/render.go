package env

// Frame is an environment's state drawn for people, in the forms displays need: Text
// for a terminal, Scene as data that a page draws, and SVG for an environment that
// draws a picture. The zero Frame draws nothing.
type Frame struct {
	// Text draws the state for a terminal: lines ending in "\n", plain text or
	// box-drawing characters, no escape sequences.
	Text string
	// Scene is the state as data that a page draws from its JSON: a value that
	// encoding/json encodes (a struct with JSON tags), with a "kind" field that names
	// what it shows ("maze", "page", "cartpole"); nil when there is none.
	Scene any
	// SVG draws the state as a standalone SVG document; "" when there is none.
	SVG string
}

// IsZero reports whether f draws nothing: no Text, no Scene and no SVG.
func (f Frame) IsZero() bool { return f.Text == "" && f.Scene == nil && f.SVG == "" }

// Renderer is an optional interface of an environment (an Env, a MultiAgent, a
// Parallel, or the state of a hierarchical environment) that draws its current state
// for people. Displays look for it with As, so that wrappers and adapters that unwrap
// (Sequential, registry.SingleAgent) pass it on. Render is called between steps, never
// during Reset or Step; it may allocate and is not meant for the step path. It returns
// the zero Frame when there is nothing to draw (before the first Reset).
type Renderer interface {
	Render() Frame
}
