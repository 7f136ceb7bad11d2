package human

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
)

// Errors of the package.
var (
	// ErrQuit: the person's input ended. It wraps runners.ErrStopped, so that the
	// trial stops rather than fails.
	ErrQuit = fmt.Errorf("human: input ended: %w", runners.ErrStopped)
	// ErrActionSpace: the agent's action space is not one a person chooses from by
	// name (only Discrete is).
	ErrActionSpace = errors.New("human: a person chooses among the actions of a Discrete space only")
	// ErrNoAction: the mask allows no action, so there is nothing to choose.
	ErrNoAction = errors.New("human: the mask allows no action")
)

// Input is the lines a person types, read from an io.Reader on a goroutine of its
// own, so that a cancelled context interrupts a person who has not answered. The
// policies of the agents one person plays share one Input. Create it with NewInput.
type Input struct {
	r     io.Reader
	start sync.Once
	lines chan line
	done  chan struct{}
	close sync.Once
}

// NewInput returns the input of a person who types into r. Its goroutine starts with
// the first line asked for and ends when r returns an error (io.EOF: close the writing
// end of a pipe) or, after Close, when its current Read returns.
func NewInput(r io.Reader) *Input {
	return &Input{r: r, lines: make(chan line), done: make(chan struct{})}
}

// Close lets the reading goroutine end after its current Read returns; the policies
// must not ask for more lines after it. It returns nil.
func (in *Input) Close() error {
	in.close.Do(func() { close(in.done) })
	return nil
}

// line is a line read, or the error that ended the input.
type line struct {
	text string
	err  error
}

// next returns the next line, or the error that ended the input, or ctx's.
func (in *Input) next(ctx context.Context) line {
	in.start.Do(func() { go in.read() })
	select {
	case <-ctx.Done():
		return line{err: fmt.Errorf("human: %w", context.Cause(ctx))}
	case l := <-in.lines:
		return l
	}
}

// read runs on the input's goroutine: it sends each line read, then the error that
// ended the input.
func (in *Input) read() {
	r := bufio.NewReader(in.r)
	for {
		text, err := r.ReadString('\n')
		if err == nil || (err == io.EOF && text != "") {
			select {
			case in.lines <- line{text: strings.TrimRight(text, "\r\n")}:
			case <-in.done:
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				err = ErrQuit
			} else {
				err = fmt.Errorf("human: reading the person's choice: %w", err)
			}
			// Every later call is told, not only the first.
			for {
				select {
				case in.lines <- line{err: err}:
				case <-in.done:
					return
				}
			}
		}
	}
}

// Policy is a person choosing an agent's actions through text; see the package
// documentation. Create it with New.
type Policy struct {
	spec  env.Spec
	space spaces.Discrete
	in    *Input
	out   io.Writer

	choices []choice // the current turn's, reused
}

// choice is an action offered to the person: every action of the space, numbered
// from 1 in the order of the raw actions (the page of baton serve ui numbers them so),
// allowed or not by the mask.
type choice struct {
	raw     int64
	name    string
	allowed bool
}

// New returns the policy by which a person plays the agent of spec, reading choices
// from in and writing to out. It returns an error wrapping ErrActionSpace when the
// agent's action space is not Discrete.
func New(spec env.Spec, in *Input, out io.Writer) (*Policy, error) {
	d, ok := spec.ActionSpace.(spaces.Discrete)
	if p, isPtr := spec.ActionSpace.(*spaces.Discrete); isPtr && p != nil {
		d, ok = *p, true
	}
	if !ok {
		return nil, fmt.Errorf("%w: agent %s acts in %v", ErrActionSpace, spec.Name, spec.ActionSpace)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("human: agent %s: %w", spec.Name, err)
	}
	if in == nil {
		return nil, fmt.Errorf("human: agent %s: nil Input", spec.Name)
	}
	return &Policy{spec: spec, space: d, in: in, out: out}, nil
}

// Act asks the person for an action without a trial to draw: it shows the
// observation and offers the actions as "action N", N the raw action.
func (p *Policy) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	return p.ask(ctx, nil, obs, mask)
}

// Interact asks the person for an action: it shows the trial's environment drawn
// (x.Frame) and offers the actions the mask allows by number and name
// (x.ActionName).
func (p *Policy) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	return p.ask(ctx, x, obs, mask)
}

// Learn tells the person what the agent's last action earned, and when its
// sub-episode or the episode ends.
func (p *Policy) Learn(_ context.Context, o *runners.Outcome) error {
	var err error
	switch o.Kind {
	case runners.OutcomeStep:
		if o.Start {
			return nil
		}
		end := ""
		switch {
		case o.Terminated:
			end = ", terminated"
		case o.Truncated:
			end = ", truncated"
		}
		_, err = fmt.Fprintf(p.out, "%s: reward %+.3f over %d %s%s\n", o.AgentID, o.Reward, o.SpanTicks, plural(o.SpanTicks, "tick", "ticks"), end)
	case runners.OutcomeRetro:
		_, err = fmt.Fprintf(p.out, "%s: reward %+.3f for tick %d\n", o.AgentID, o.Reward, o.Tick)
	case runners.OutcomeEpisodeEnd:
		_, err = fmt.Fprintf(p.out, "episode %d over after %d %s\n", o.Episode, o.Tick, plural(o.Tick, "tick", "ticks"))
	}
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (p *Policy) ask(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	if mask != nil && int64(len(mask)) != p.space.N {
		return agent.RawAction{}, fmt.Errorf("human: agent %s: mask of %d for %d actions: %w", p.spec.Name, len(mask), p.space.N, spaces.ErrMaskLength)
	}
	p.choices = p.choices[:0]
	allowed := 0
	for i := range p.space.N {
		raw := p.space.Start + i
		name := "action " + strconv.FormatInt(raw, 10)
		if x != nil {
			name = x.ActionName(agent.Discrete(raw))
		}
		ok := mask == nil || mask[i]
		if ok {
			allowed++
		}
		p.choices = append(p.choices, choice{raw: raw, name: name, allowed: ok})
	}
	if allowed == 0 {
		return agent.RawAction{}, fmt.Errorf("%w (agent %s)", ErrNoAction, p.spec.Name)
	}
	var b strings.Builder
	if x != nil {
		fmt.Fprintf(&b, "\n%s to act at tick %d:\n%s", x.AgentID(), x.Tick(), x.Frame().Text)
	} else {
		fmt.Fprintf(&b, "\n%s to act, observing %v\n", p.spec.Name, obs)
	}
	p.list(&b)
	for {
		if _, err := io.WriteString(p.out, b.String()); err != nil {
			return agent.RawAction{}, fmt.Errorf("human: writing to the person: %w", err)
		}
		l := p.in.next(ctx)
		if l.err != nil {
			return agent.RawAction{}, l.err
		}
		c, why := p.parse(l.text)
		if why == "" {
			return agent.Discrete(c.raw), nil
		}
		b.Reset()
		b.WriteString(why + "\n")
		p.list(&b)
	}
}

// list writes the choices and the prompt.
func (p *Policy) list(b *strings.Builder) {
	for i, c := range p.choices {
		fmt.Fprintf(b, "  %d) %s", i+1, c.name)
		if !c.allowed {
			b.WriteString(" (not allowed now)")
		}
		b.WriteString("\n")
	}
	if c, only := p.only(); only {
		fmt.Fprintf(b, "press Enter (or type %d) for %s, the only allowed action: ", p.number(c), c.name)
		return
	}
	fmt.Fprintf(b, "choice [%s]: ", p.numbers())
}

// only returns the allowed choice when there is exactly one.
func (p *Policy) only() (choice, bool) {
	var one choice
	n := 0
	for _, c := range p.choices {
		if c.allowed {
			one, n = c, n+1
		}
	}
	return one, n == 1
}

// number is c's number in the list.
func (p *Policy) number(c choice) int64 { return c.raw - p.space.Start + 1 }

// numbers lists the numbers of the allowed choices, runs of three or more as
// ranges: "1-4", "1, 4", "2-4, 7".
func (p *Policy) numbers() string {
	var parts []string
	for i := 0; i < len(p.choices); {
		if !p.choices[i].allowed {
			i++
			continue
		}
		j := i
		for j+1 < len(p.choices) && p.choices[j+1].allowed {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d-%d", i+1, j+1))
		case j == i+1:
			parts = append(parts, strconv.Itoa(i+1), strconv.Itoa(j+1))
		default:
			parts = append(parts, strconv.Itoa(i+1))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// allowedNames lists the names of the allowed choices, for a refusal.
func (p *Policy) allowedNames() string {
	var names []string
	for _, c := range p.choices {
		if c.allowed {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}

// arrows are the actions that a terminal's arrow keys stand for, by the last byte
// of their escape sequence (ESC [ A, or ESC O A in a terminal's application mode).
var arrows = map[byte]string{'A': "UP", 'B': "DOWN", 'C': "RIGHT", 'D': "LEFT"}

// parse reads a choice by its number in the list, by its name in any case, by an
// arrow key where actions are named for directions, or, when one action alone is
// allowed, by an empty line. It returns the choice, or why the text is none.
func (p *Policy) parse(text string) (choice, string) {
	text = strings.TrimSpace(text)
	var found *choice
	switch {
	case text == "":
		if c, only := p.only(); only {
			return c, ""
		}
	case strings.ContainsRune(text, '\x1b'):
		dir, ok := "", len(text) == 3 && (text[1] == '[' || text[1] == 'O')
		if ok {
			dir, ok = arrows[text[2]]
		}
		if !ok {
			return choice{}, fmt.Sprintf("that key is not a choice: type %s", p.hint())
		}
		i := slices.IndexFunc(p.choices, func(c choice) bool { return strings.EqualFold(c.name, dir) })
		if i < 0 {
			return choice{}, fmt.Sprintf("the arrow keys are not actions here: type %s", p.hint())
		}
		found = &p.choices[i]
	default:
		if n, err := strconv.Atoi(text); err == nil {
			if n >= 1 && n <= len(p.choices) {
				found = &p.choices[n-1]
			}
			break
		}
		if i := slices.IndexFunc(p.choices, func(c choice) bool { return strings.EqualFold(c.name, text) }); i >= 0 {
			found = &p.choices[i]
		}
	}
	switch {
	case found == nil:
		return choice{}, fmt.Sprintf("%q is not a choice: type %s", text, p.hint())
	case !found.allowed:
		return choice{}, fmt.Sprintf("%s is not allowed now (allowed: %s)", found.name, p.allowedNames())
	}
	return *found, ""
}

// hint says what the person may type.
func (p *Policy) hint() string {
	if c, only := p.only(); only {
		return fmt.Sprintf("%d or %s (the only allowed action), or press Enter", p.number(c), c.name)
	}
	return fmt.Sprintf("a number of [%s] or an action's name", p.numbers())
}
