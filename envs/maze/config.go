package maze

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/registry"
)

// Config describes a maze environment. The zero value is the reference maze with the
// reference defaults; JSON field names are given in the tags (`baton play maze
// --env-config '{"motion":{"max_steps":5}}'`).
type Config struct {
	// Map is the map text Parse reads; "" means the Reference map (or a generated one
	// when Generate is set).
	Map string `json:"map,omitempty"`
	// Generate, when set, draws a random map instead (Map must then be ""): one for
	// the configuration, or one per episode (GenerateConfig.PerEpisode).
	Generate *GenerateConfig `json:"generate,omitempty"`
	// ObsSide, when not 0, pads the map in both agents' observations to ObsSide x
	// ObsSide tiles with walls (the map at the top left, positions unchanged), so that
	// maps of different sizes give observations of one size: one network can train
	// across a curriculum of growing mazes. It must be at least the map's rows and
	// columns, and at most MaxSide. 0 observes the map as it is.
	ObsSide int `json:"obs_side,omitempty"`
	// Procedure replaces the motion agent by the Walk procedure.
	Procedure bool `json:"procedure,omitempty"`
	// Strategy and Motion configure the two agents.
	Strategy StrategyConfig `json:"strategy"`
	Motion   MotionConfig   `json:"motion"`
}

// GenerateConfig asks for a map drawn by Generate, Rows x Cols (odd, from 5 to
// MaxSide).
type GenerateConfig struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
	// Seed seeds the one map of the configuration.
	Seed uint64 `json:"seed,omitempty"`
	// PerEpisode draws a new map at every episode's reset, from the episode's seed
	// (the generator hrl passes InitialState), instead of one map seeded by Seed,
	// which must then be 0: the same episode seed gives the same map, so trials and
	// fast-lane copies stay deterministic, and a learner sees many maps of one size.
	PerEpisode bool `json:"per_episode,omitempty"`
}

// StrategyConfig configures the strategy agent.
type StrategyConfig struct {
	// MaxSteps is how many decisions the strategy makes before it is truncated; 0
	// means 20.
	MaxSteps int `json:"max_steps,omitempty"`
	// GoalReward rewards the decision that reaches the goal; nil means 1.0.
	GoalReward *float64 `json:"reward_for_reaching_goal,omitempty"`
}

// MotionConfig configures the motion agent.
type MotionConfig struct {
	// MaxSteps is how many moves the motion agent makes before it is truncated; 0
	// means 10.
	MaxSteps int `json:"max_steps,omitempty"`
	// RightReward rewards a forward move; nil means 1.0.
	RightReward *float64 `json:"reward_for_right_direction,omitempty"`
	// WrongReward rewards a backward move; nil means -0.1.
	WrongReward *float64 `json:"reward_for_wrong_direction,omitempty"`
	// ProgressReward, when set, replaces RightReward and WrongReward: a move earns
	// ProgressReward times the number of moves it takes off the shortest walk to the
	// goal (+ProgressReward a move closer, -ProgressReward a move away), so that a
	// walk's rewards add up to ProgressReward times the distance it covered towards
	// the goal, and stepping back and forth earns nothing. The reference rewards pay
	// every forward move, whichever way it leads: a motion agent (or a strategy that
	// sends it back the way it came) earns by walking a corridor to and fro.
	ProgressReward *float64 `json:"reward_for_progress,omitempty"`
}

// The reference defaults.
const (
	DefaultStrategyMaxSteps = 20
	DefaultGoalReward       = 1.0
	DefaultMotionMaxSteps   = 10
	DefaultRightReward      = 1.0
	DefaultWrongReward      = -0.1
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("maze: invalid configuration")

// ParseConfig reads a JSON configuration; unknown fields are errors. Empty input is the
// zero Config.
func ParseConfig(data []byte) (Config, error) {
	var cfg Config
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if err := registry.DecodeConfig(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	return cfg, cfg.withDefaults().validate()
}

func (c Config) withDefaults() Config {
	c.Strategy = c.Strategy.withDefaults()
	c.Motion = c.Motion.withDefaults()
	return c
}

func (c StrategyConfig) withDefaults() StrategyConfig {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultStrategyMaxSteps
	}
	if c.GoalReward == nil {
		c.GoalReward = ptr(DefaultGoalReward)
	}
	return c
}

func (c MotionConfig) withDefaults() MotionConfig {
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMotionMaxSteps
	}
	if c.RightReward == nil {
		c.RightReward = ptr(DefaultRightReward)
	}
	if c.WrongReward == nil {
		c.WrongReward = ptr(DefaultWrongReward)
	}
	return c
}

func ptr(v float64) *float64 { return &v }

func (c Config) validate() error {
	var errs []error
	if c.Strategy.MaxSteps < 0 {
		errs = append(errs, fmt.Errorf("%w: strategy.max_steps is %d; want 1 or more", ErrConfig, c.Strategy.MaxSteps))
	}
	if c.Motion.MaxSteps < 0 {
		errs = append(errs, fmt.Errorf("%w: motion.max_steps is %d; want 1 or more", ErrConfig, c.Motion.MaxSteps))
	}
	if c.Map != "" && c.Generate != nil {
		errs = append(errs, fmt.Errorf("%w: give map or generate, not both", ErrConfig))
	}
	if g := c.Generate; g != nil {
		if err := checkSides(g.Rows, g.Cols); err != nil && g.PerEpisode {
			errs = append(errs, fmt.Errorf("%w: generate: %w", ErrConfig, err)) // else Generate says so
		}
		if g.PerEpisode && g.Seed != 0 {
			errs = append(errs, fmt.Errorf("%w: generate.seed is %d: per_episode draws each map from its episode's seed; leave seed out", ErrConfig, g.Seed))
		}
	}
	if c.ObsSide < 0 || c.ObsSide > MaxSide {
		errs = append(errs, fmt.Errorf("%w: obs_side is %d; want 0 (the map as it is) or up to %d", ErrConfig, c.ObsSide, MaxSide))
	}
	return errors.Join(errs...)
}

// build returns the configuration's map, nil when each episode draws its own.
func (c Config) build() (*Maze, error) {
	switch {
	case c.Generate != nil && c.Generate.PerEpisode:
		return nil, nil
	case c.Generate != nil:
		g := c.Generate
		return Generate(rand.New(rand.NewPCG(g.Seed, g.Seed)), g.Rows, g.Cols)
	case c.Map != "":
		return Parse(c.Map)
	default:
		return Parse(Reference)
	}
}

// observed returns the size of the map in the agents' observations for a map of
// rows x cols: ObsSide on both sides, or the map's own.
func (c Config) observed(rows, cols int) (int, int, error) {
	if c.ObsSide == 0 {
		return rows, cols, nil
	}
	if c.ObsSide < rows || c.ObsSide < cols {
		return 0, 0, fmt.Errorf("%w: obs_side is %d, smaller than the map's %d x %d", ErrConfig, c.ObsSide, rows, cols)
	}
	return c.ObsSide, c.ObsSide, nil
}
