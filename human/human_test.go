package human_test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/human"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/spaces"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The oracle's way through the reference maze, as the strategy agent's directions.
var oracleWay = []string{"LEFT", "DOWN", "LEFT", "UP", "UP", "LEFT", "UP"}

// strategySpec is the maze's strategy agent.
func strategySpec(t *testing.T) env.Spec {
	t.Helper()
	m, err := runtimeOf(nil)
	require.NoError(t, err)
	return m.Agents()[0]
}

// runtimeOf returns a runtime of the maze of config (nil: the reference maze).
func runtimeOf(config []byte) (env.MultiAgent, error) {
	reg := registry.New()
	if err := maze.Register(reg); err != nil {
		return nil, err
	}
	entry, err := reg.Lookup("maze")
	if err != nil {
		return nil, err
	}
	f, err := entry.Open(config)
	if err != nil {
		return nil, err
	}
	return f.NewEnv(registry.EnvOptions{})
}

// play runs one trial of the maze, the strategy agent played by a person typing
// input, and returns the trial's result and what the person saw.
func play(t *testing.T, ctx context.Context, in io.Reader) (runners.Result, string) {
	t.Helper()
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	c, err := runners.NewController(reg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	var out bytes.Buffer
	input := human.NewInput(in)
	defer input.Close()
	p, err := human.New(strategySpec(t), input, &out)
	require.NoError(t, err)
	id, err := c.Start(ctx, runners.Spec{Env: "maze", Seed: 1, Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(p),
		maze.MotionName:   runners.Named("forward"),
	}})
	require.NoError(t, err)
	res, err := c.Wait(context.Background(), id)
	require.NoError(t, err)
	return res, out.String()
}

// prompts counts the times the choices are offered in out.
func prompts(out string) int {
	return strings.Count(out, "choice [") + strings.Count(out, "press Enter (or type ")
}

// refusals counts the lines refused in out.
func refusals(out string) int {
	return strings.Count(out, " is not a choice") + strings.Count(out, " is not allowed now") +
		strings.Count(out, "arrow keys are not actions")
}

func TestPlay(t *testing.T) {
	defer goleak.VerifyNone(t)
	// The first turn: UP and LEFT allowed.
	first := "position [4 9] heading LEFT, goal [0 4]\n  1) UP\n  2) RIGHT (not allowed now)\n  3) DOWN (not allowed now)\n  4) LEFT\nchoice [1, 4]: "
	blocked := "RIGHT is not allowed now (allowed: UP, LEFT)\n"
	tests := []struct {
		name  string
		input string
		state event.State
		// prompts counts the times the choices are offered, refused the lines
		// refused; rejected holds reasons given.
		prompts, refused int
		rejected         []string
	}{
		{name: "by name", input: strings.Join(oracleWay, "\n") + "\n", state: event.Ended, prompts: 7},
		{name: "any case, numbers as the page's, blanks, no final newline", input: "left\n 3 \nLeft\nuP\n1\nleft\nup", state: event.Ended, prompts: 7},
		{name: "arrow keys", input: "\x1b[D\n\x1b[B\n\x1bOD\n\x1b[A\n\x1b[A\n\x1b[D\n\x1b[A\n", state: event.Ended, prompts: 7},
		{name: "bad input re-prompts", input: "LEFT\n\n7\n0\nnorth\nUP\n1\n\x1b[H\nDOWN\nLEFT\nUP\nUP\nLEFT\nUP\n", state: event.Ended, prompts: 14, refused: 7,
			rejected: []string{
				`"" is not a choice: type a number of [2-4] or an action's name`, `"7" is not a choice`, `"0" is not a choice`, `"north" is not a choice`,
				"UP is not allowed now (allowed: RIGHT, DOWN, LEFT)\n  1) UP (not allowed now)\n  2) RIGHT\n  3) DOWN\n  4) LEFT\nchoice [2-4]: ",
				"that key is not a choice: type a number of [2-4] or an action's name",
			}},
		{name: "blocked by name, number or arrow", input: "right\n2\n\x1b[C\n" + strings.Join(oracleWay, "\n") + "\n", state: event.Ended, prompts: 10, refused: 3,
			rejected: []string{"RIGHT is not allowed now (allowed: UP, LEFT)\n" + first[strings.Index(first, "  1)"):], blocked, blocked, blocked}},
		{name: "end of input", input: "LEFT\nDOWN\n", state: event.Stopped, prompts: 3},
		{name: "no input", input: "", state: event.Stopped, prompts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, out := play(t, t.Context(), strings.NewReader(tt.input))
			assert.Equal(t, tt.state, res.State, "%v", res.Err)
			assert.Equal(t, tt.prompts, prompts(out), out)
			assert.Equal(t, tt.refused, refusals(out), out)
			for _, r := range tt.rejected {
				// A reason listed k times is given at least k times.
				k := len(slices.DeleteFunc(slices.Clone(tt.rejected), func(x string) bool { return x != r }))
				assert.GreaterOrEqual(t, strings.Count(out, r), k, r)
			}
			assert.Contains(t, out, "strategy_0 to act at tick 0:\n")
			assert.Contains(t, out, first, "the map, then every direction numbered as the page numbers them")
			require.Len(t, res.Episodes, 1)
			if tt.state == event.Ended {
				assert.True(t, res.Episodes[0].Success)
				assert.Equal(t, 20, res.Episodes[0].Ticks, "the oracle's way, whatever was rejected on it")
				assert.Contains(t, out, "strategy_0: reward +")
				assert.Contains(t, out, ", terminated\n")
				assert.Contains(t, out, "episode 0 over after 20 ticks\n")
				return
			}
			require.ErrorIs(t, res.Err, human.ErrQuit)
			require.ErrorIs(t, res.Err, runners.ErrStopped)
			assert.False(t, res.Episodes[0].Complete)
		})
	}
}

// TestCancel checks that a cancelled trial stops a person who has not answered.
func TestCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	r, w := io.Pipe()
	defer w.Close() // ends the reading goroutine
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		// The first line is read, the trial goes on, and the person is asked again.
		_, _ = w.Write([]byte("LEFT\n"))
		cancel()
	}()
	res, out := play(t, ctx, r)
	assert.Equal(t, event.Stopped, res.State)
	require.ErrorIs(t, res.Err, context.Canceled)
	assert.Contains(t, out, "choice [1, 4]: ")
}

func TestNew(t *testing.T) {
	box := spaces.Must(spaces.NewBox([]int{2}, -1, 1))
	in := human.NewInput(strings.NewReader(""))
	defer in.Close()
	_, err := human.New(env.Spec{Name: "arm", ActionSpace: box}, in, io.Discard)
	require.ErrorIs(t, err, human.ErrActionSpace)
	assert.ErrorContains(t, err, "agent arm")
	_, err = human.New(env.Spec{Name: "none", ActionSpace: spaces.Discrete{N: 0}}, in, io.Discard)
	require.Error(t, err)
	_, err = human.New(env.Spec{Name: "d", ActionSpace: spaces.Discrete{N: 3}}, nil, io.Discard)
	require.Error(t, err)
	_, err = human.New(env.Spec{Name: "d", ActionSpace: &spaces.Discrete{N: 3, Start: 1}}, in, io.Discard)
	require.NoError(t, err)
}

// TestAct checks the policy outside a trial: raw action numbers, and masks.
func TestAct(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name  string
		input string
		mask  []bool
		want  int64
		err   error
		// says is what the person is told.
		says []string
	}{
		{name: "by number", input: "2\n", want: 11, says: []string{"  1) action 10\n  2) action 11\n  3) action 12\nchoice [1-3]: "}},
		{name: "by raw name", input: "Action 12\n", want: 12},
		{name: "numbered with the masked", input: "3\n", mask: []bool{true, false, true}, want: 12,
			says: []string{"  1) action 10\n  2) action 11 (not allowed now)\n  3) action 12\nchoice [1, 3]: "}},
		{name: "the only allowed, by Enter", input: "\n", mask: []bool{false, false, true}, want: 12,
			says: []string{"  3) action 12\npress Enter (or type 3) for action 12, the only allowed action: "}},
		{name: "the only allowed, by number", input: "1\n3\n", mask: []bool{false, false, true}, want: 12,
			says: []string{"action 10 is not allowed now (allowed: action 12)\n"}},
		{name: "the only allowed, bad input", input: "x\n \n", mask: []bool{false, false, true}, want: 12,
			says: []string{`"x" is not a choice: type 3 or action 12 (the only allowed action), or press Enter`}},
		{name: "masked name refused", input: "action 10\naction 12\n", mask: []bool{false, true, true}, want: 12,
			says: []string{"action 10 is not allowed now (allowed: action 11, action 12)\n", "choice [2, 3]: "}},
		{name: "arrow keys are not actions here", input: "\x1b[A\n1\n", want: 10,
			says: []string{"the arrow keys are not actions here: type a number of [1-3] or an action's name\n"}},
		{name: "nothing allowed", input: "1\n", mask: []bool{false, false, false}, err: human.ErrNoAction},
		{name: "bad mask", input: "1\n", mask: []bool{true}, err: spaces.ErrMaskLength},
		{name: "end of input", input: "x\n", err: human.ErrQuit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			in := human.NewInput(strings.NewReader(tt.input))
			defer in.Close()
			p, err := human.New(env.Spec{Name: "d", ActionSpace: spaces.Discrete{N: 3, Start: 10}}, in, &out)
			require.NoError(t, err)
			raw, err := p.Act(t.Context(), []float32{0.5}, tt.mask)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, agent.Discrete(tt.want), raw)
			assert.Contains(t, out.String(), "d to act, observing [0.5]\n")
			for _, s := range tt.says {
				assert.Contains(t, out.String(), s)
			}
		})
	}
}

// responder is a person at a terminal: it reads what the policies write and, at each
// prompt, answers for the agent asked: FORWARD for the motion agent, the next
// direction of way for the strategy agent.
type responder struct {
	mu   sync.Mutex
	seen strings.Builder
	way  []string
	w    *io.PipeWriter
	wg   sync.WaitGroup
}

func (r *responder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen.Write(p)
	if !bytes.Contains(p, []byte("choice [")) && !bytes.Contains(p, []byte("press Enter (or type ")) {
		return len(p), nil
	}
	s := r.seen.String()
	asked := s[strings.LastIndex(s, "to act at tick")-len("strategy_0 "):]
	answer := "forward"
	if strings.HasPrefix(asked, "strategy_") {
		answer, r.way = r.way[0], r.way[1:]
	}
	r.wg.Add(1)
	go func() { // the input is read on the Input's goroutine
		defer r.wg.Done()
		_, _ = io.WriteString(r.w, answer+"\n")
	}()
	return len(p), nil
}

// TestBothAgents checks that a person plays two agents through one Input.
func TestBothAgents(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	c, err := runners.NewController(reg)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()

	pr, pw := io.Pipe()
	resp := &responder{way: slices.Clone(oracleWay), w: pw}
	input := human.NewInput(pr)
	m, err := runtimeOf(nil)
	require.NoError(t, err)
	actors := map[string]runners.Actor{}
	for _, spec := range m.Agents() {
		p, err := human.New(spec, input, resp)
		require.NoError(t, err)
		actors[spec.Name] = runners.Value(p)
	}
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Seed: 1, Actors: actors})
	require.NoError(t, err)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	require.NoError(t, input.Close())
	require.NoError(t, pw.Close())
	resp.wg.Wait()

	assert.Equal(t, event.Ended, res.State, "%v", res.Err)
	assert.True(t, res.Episodes[0].Success)
	assert.Equal(t, 20, res.Episodes[0].Ticks)
	assert.Empty(t, resp.way)
	out := resp.seen.String()
	assert.Equal(t, 20, prompts(out), "one prompt per tick")
	assert.Contains(t, out, "motion_0 to act at tick 1:")
	assert.Contains(t, out, "  1) BACKWARD (not allowed now)\n  2) FORWARD\npress Enter (or type 2) for FORWARD, the only allowed action: ")
}
