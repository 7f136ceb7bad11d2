package maze

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

// FlatName is the name of the flat maze's single agent.
const FlatName = "walker"

// DefaultFlatMaxSteps is the flat maze's default step limit: as many moves as the
// hierarchy's motion agent can make in an episode (DefaultStrategyMaxSteps decisions of
// DefaultMotionMaxSteps moves).
const DefaultFlatMaxSteps = DefaultStrategyMaxSteps * DefaultMotionMaxSteps

// ErrEpisodeOver is returned by Flat's Step before the first Reset and after an
// episode ended, until the next Reset.
var ErrEpisodeOver = errors.New("maze: no episode running; call Reset")

// FlatConfig describes a flat maze: the map of Config (Map, or Generate, or the
// Reference map), a step limit and the goal's reward. The zero value is the reference
// map with DefaultFlatMaxSteps and DefaultGoalReward.
type FlatConfig struct {
	Map      string          `json:"map,omitempty"`
	Generate *GenerateConfig `json:"generate,omitempty"`
	// MaxSteps truncates an episode after this many moves; 0 means
	// DefaultFlatMaxSteps.
	MaxSteps int `json:"max_steps,omitempty"`
	// GoalReward rewards the move onto the goal; nil means DefaultGoalReward.
	GoalReward *float64 `json:"reward_for_reaching_goal,omitempty"`
	// ProgressReward, when set, adds to each move ProgressReward times the number of
	// moves it takes off the shortest walk to the goal, as MotionConfig's does in the
	// hierarchy: the same shaping for both, which stepping back and forth cannot earn.
	ProgressReward *float64 `json:"reward_for_progress,omitempty"`
}

// ParseFlatConfig reads a flat maze's JSON configuration; unknown fields are errors.
// Empty input is the zero FlatConfig.
func ParseFlatConfig(data []byte) (FlatConfig, error) {
	var cfg FlatConfig
	if err := registry.DecodeConfig(data, &cfg); err != nil {
		return FlatConfig{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return cfg, cfg.withDefaults().validate()
}

func (c FlatConfig) withDefaults() FlatConfig {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultFlatMaxSteps
	}
	if c.GoalReward == nil {
		c.GoalReward = ptr(DefaultGoalReward)
	}
	return c
}

func (c FlatConfig) validate() error {
	var errs []error
	if c.MaxSteps < 0 {
		errs = append(errs, fmt.Errorf("%w: max_steps is %d; want 1 or more", ErrConfig, c.MaxSteps))
	}
	if c.Map != "" && c.Generate != nil {
		errs = append(errs, fmt.Errorf("%w: give map or generate, not both", ErrConfig))
	}
	if g := c.Generate; g != nil && g.PerEpisode {
		if err := checkSides(g.Rows, g.Cols); err != nil {
			errs = append(errs, fmt.Errorf("%w: generate: %w", ErrConfig, err))
		}
		if g.Seed != 0 {
			errs = append(errs, fmt.Errorf("%w: generate.seed is %d: per_episode draws each map from its episode's seed; leave seed out", ErrConfig, g.Seed))
		}
	}
	return errors.Join(errs...)
}

// Flat is the maze without a hierarchy, an env.Env of one agent (FlatName) that moves
// one tile a step: UP, RIGHT, DOWN or LEFT (Discrete(4), the Direction values), masked
// to the walkable directions. It observes what the strategy agent does (the map, its
// position and the four-entry direction mask), is rewarded GoalReward for the move
// onto the goal, where it terminates, and is truncated after MaxSteps moves. A move
// into a wall is an error, as in the hierarchy.
//
// Reset and Step allocate nothing; the observation and mask they return belong to the
// Flat and stay valid until its next Reset or Step. A Flat is not safe for concurrent
// use.
type Flat struct {
	cfg   FlatConfig
	maze  *Maze
	spec  env.Spec
	pos   Pos
	head  Direction
	steps int
	live  bool
	obs   []float32
	mask  [4]bool
}

var (
	_ env.Env             = (*Flat)(nil)
	_ env.DiscreteStepper = (*Flat)(nil)
	_ env.Renderer        = (*Flat)(nil)
)

// NewFlat builds the flat maze a configuration describes; it needs a Reset before its
// first Step.
func NewFlat(cfg FlatConfig) (*Flat, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m, err := Config{Map: cfg.Map, Generate: cfg.Generate}.build()
	if err != nil {
		return nil, err
	}
	rows, cols := cfg.sides(m)
	obs := obsSpace(rows, cols, 4)
	return &Flat{
		cfg:  cfg,
		maze: m,
		spec: env.Spec{Name: FlatName, ObservationSpace: obs, ActionSpace: spaces.Discrete{N: 4}, MaskLen: 4},
		obs:  make([]float32, obs.FlatDim()),
	}, nil
}

// sides returns the size of the map m, or, when each episode draws its map (m nil),
// of the maps drawn.
func (c FlatConfig) sides(m *Maze) (rows, cols int) {
	if m == nil {
		return c.Generate.Rows, c.Generate.Cols
	}
	return m.rows, m.cols
}

// perEpisode reports whether each episode draws its map.
func (c FlatConfig) perEpisode() bool { return c.Generate != nil && c.Generate.PerEpisode }

// sibling returns a new Flat of f's map and agent spec, which it shares, with cfg,
// whose map must be f's.
func (f *Flat) sibling(cfg FlatConfig) *Flat {
	return &Flat{cfg: cfg.withDefaults(), maze: f.maze, spec: f.spec, obs: make([]float32, len(f.obs))}
}

// Config returns the configuration with its defaults filled in.
func (f *Flat) Config() FlatConfig { return f.cfg }

// Maze returns the map: the episode's when each episode draws its map
// (GenerateConfig.PerEpisode), nil before the first Reset.
func (f *Flat) Maze() *Maze { return f.maze }

// Spec describes the agent: FlatName, the observation Box, Discrete(4), a mask of 4.
func (f *Flat) Spec() env.Spec { return f.spec }

// Reset puts the agent on the start tile, heading LEFT (as the hierarchy starts). The
// moves have no randomness: with one map every seed gives the same episode; when each
// episode draws its map (GenerateConfig.PerEpisode), the seed draws it, the same seed
// the same map.
func (f *Flat) Reset(seed uint64) (env.Step, error) {
	if f.cfg.perEpisode() {
		g := f.cfg.Generate
		m, err := Generate(rand.New(rand.NewPCG(seed, seed)), g.Rows, g.Cols)
		if err != nil {
			return env.Step{}, err
		}
		f.maze = m
	}
	f.pos, f.head, f.steps, f.live = f.maze.start, Left, 0, true
	f.observe(f.obs, f.mask[:])
	return env.Step{Obs: f.obs, Mask: f.mask[:]}, nil
}

// Step moves one tile in the direction a.Int. It returns an error and changes nothing
// for an action outside Discrete(4) (wrapping spaces.ErrOutside), a direction into a
// wall (wrapping ErrWall), and ErrEpisodeOver before the first Reset or after the
// episode ended.
func (f *Flat) Step(a agent.RawAction) (env.Step, error) {
	if err := a.Check(f.spec.ActionSpace); err != nil {
		return env.Step{}, fmt.Errorf("maze: flat: action %v: %w", a, err)
	}
	r, term, trunc, err := f.StepDiscrete(a.Int, f.obs, f.mask[:])
	if err != nil {
		return env.Step{}, err
	}
	return env.Step{Obs: f.obs, Mask: f.mask[:], Reward: r, Terminated: term, Truncated: trunc}, nil
}

// StepDiscrete is Step(agent.Discrete(action)) with the observation and mask written
// into obs and mask (env.DiscreteStepper), which must have the Spec's lengths.
func (f *Flat) StepDiscrete(action int64, obs []float32, mask []bool) (reward float64, terminated, truncated bool, err error) {
	switch {
	case !f.live:
		return 0, false, false, ErrEpisodeOver
	case uint64(action) > 3:
		return 0, false, false, fmt.Errorf("maze: flat: action %d: %w", action, agent.Discrete(action).Check(f.spec.ActionSpace))
	}
	d := Direction(action)
	next := f.pos.Move(d)
	if !f.maze.Walkable(next) {
		return 0, false, false, fmt.Errorf("%w: moving %s from %v", ErrWall, d, f.pos)
	}
	if p := f.cfg.ProgressReward; p != nil {
		reward = progress(*p, f.maze, f.pos, next)
	}
	f.pos, f.head = next, d
	f.steps++
	if f.pos == f.maze.goal {
		reward, terminated = reward+*f.cfg.GoalReward, true
	}
	truncated = !terminated && f.steps >= f.cfg.MaxSteps
	f.live = !terminated && !truncated
	f.observe(obs, mask)
	return reward, terminated, truncated, nil
}

func (f *Flat) observe(obs []float32, mask []bool) {
	s := State{Maze: f.maze, Pos: f.pos, Heading: f.head}
	directionMask(s, mask)
	encode(obs, f.maze.rows, f.maze.cols, f.maze, f.pos, mask)
}

// Render draws the flat maze as the hierarchy's State draws itself (Flat implements
// env.Renderer): the map as text, as a Scene and as an SVG picture, the agent an
// arrow along the heading of its last move. Before the first Reset it draws nothing.
func (f *Flat) Render() env.Frame {
	if !f.live && f.steps == 0 {
		return env.Frame{}
	}
	return State{Maze: f.maze, Pos: f.pos, Heading: f.head}.Render()
}

// Info describes the state as the hierarchy's Info does: the position and the heading
// of the last move (LEFT at the start).
func (f *Flat) Info() any {
	return Info{Position: [2]int{f.pos.Row, f.pos.Col}, Heading: f.head.String()}
}
