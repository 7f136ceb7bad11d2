package maze

import (
	"fmt"
	"math/rand/v2"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/spaces"
)

// Register adds the maze to a registry under the name "maze", configured by the JSON
// that ParseConfig reads. Its agents and policies:
//
//	strategy  oracle (default): NewEnvOracle's shortest paths (reading each
//	          episode's map from the observation when maps are drawn per episode);
//	          random: uniform over the walkable directions
//	motion    random (default): uniform over the walkable moves; forward: AlwaysForward
//
// An episode succeeds when the strategy agent reaches the goal (it terminates). The
// procedure variant ({"procedure": true}) has no motion agent. People see the
// strategy's actions as directions (LEFT, UP), the motion agent's as moves (FORWARD,
// BACKWARD), the state in one line as the position [row col] and the heading
// ("[4 8] LEFT"), and drawn as State.Render draws it: the map with the agent on it.
// A configuration from the network (registry.Registry.Remote) asks for at most
// maze.side rows and columns, and obs_side (LimitSide).
func Register(r *registry.Registry) error {
	return r.Register(registry.Entry{
		Name:        "maze",
		Description: "the reference maze: a strategy agent picks directions, a motion agent walks them",
		Config:      Config{},
		Open:        openFactory,
		OpenRemote: func(config []byte, o registry.Remote) (registry.Factory, error) {
			cfg, err := ParseConfig(config)
			if err != nil {
				return nil, err
			}
			if err := checkRemoteSides(o, cfg.Map, cfg.Generate, cfg.ObsSide); err != nil {
				return nil, err
			}
			return openFactory(config)
		},
		Limits: []registry.Limit{{Name: LimitSide, Description: "rows or columns of a map, and obs_side", Default: DefaultRemoteSide}},
		Agents: []registry.AgentEntry{
			{Name: StrategyName, Default: "oracle", Policies: []registry.PolicyEntry{
				{Name: "oracle", Description: "shortest paths to the goal", New: oraclePolicy},
				{Name: "random", Description: "uniform over the walkable directions", New: randomPolicy(StrategyName)},
			}},
			{Name: MotionName, Default: "random", Policies: []registry.PolicyEntry{
				{Name: "random", Description: "uniform over the walkable moves", New: randomPolicy(MotionName)},
				{Name: "forward", Description: "always forward", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
					return AlwaysForward(), nil
				}},
			}},
		},
		Success: Reached,
		Look:    registry.Look{Action: actionName, Info: describe, Render: registry.RenderState[State, Action]()},
	})
}

// The limit on configurations from the network (registry.Limit): maze.side and
// maze-flat.side.
const (
	// LimitSide names the limit on the rows and the columns of a map, and on
	// Config.ObsSide, that a configuration from the network asks for.
	LimitSide = "side"
	// DefaultRemoteSide is its default: a 41 x 41 map observes 6,731 floats, so that
	// the observations of 256 copies (twice over: StepBatch's final observations)
	// fit one message of remote.DefaultMaxMessageSize.
	DefaultRemoteSide = 41
)

// checkRemoteSides checks the sides a configuration from the network asks for
// against the limit LimitSide: the generated map's, the map text's, and the observed
// side. A map text that does not parse is left for the configuration's own checks.
func checkRemoteSides(o registry.Remote, text string, g *GenerateConfig, obsSide int) error {
	side := obsSide
	if g != nil {
		side = max(side, g.Rows, g.Cols)
	}
	if text != "" {
		if m, err := Parse(text); err == nil {
			side = max(side, m.rows, m.cols)
		}
	}
	return o.Check(LimitSide, int64(side))
}

// actionName names a direction of the strategy agent and a move of the motion agent.
func actionName(_ env.Turn, acting *env.Report, raw agent.RawAction) string {
	switch acting.Agent {
	case StrategyName:
		return Direction(raw.Int).String()
	case MotionName:
		return Move(raw.Int).String()
	}
	return ""
}

// describe shows the position [row col] and the heading of an Info.
func describe(info any) string {
	if in, ok := info.(Info); ok {
		return fmt.Sprintf("[%d %d] %s", in.Position[0], in.Position[1], in.Heading)
	}
	return (registry.Look{}).Describe(info)
}

// Reached reports whether the episode ending with final reached the goal: the strategy
// agent terminated, which it does on the goal only. It is the maze's success.
func Reached(final env.Turn) bool {
	for i := range final.Reports {
		if r := &final.Reports[i]; r.Agent == StrategyName && r.Terminated {
			return true
		}
	}
	return false
}

// factory is the registry.Factory of one maze configuration: the environment, which
// holds configuration only, and the oracle, planned once (nil when each episode draws
// its map, and each trial gets an oracle of its own); both are safe for concurrent
// use.
type factory struct {
	env    *Env
	oracle *Oracle
}

func openFactory(config []byte) (registry.Factory, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	e, err := NewEnv(cfg)
	if err != nil {
		return nil, err
	}
	f := &factory{env: e}
	if e.Maze() != nil {
		f.oracle = NewEnvOracle(e)
	}
	return f, nil
}

// Size estimates the memory of the map and its oracle (some 30 bytes a tile,
// measured), and of each runtime (its observations and, when maps are drawn per
// episode, its map: some 10 bytes a tile), with room to spare.
func (f *factory) Size() (shared, each int64) {
	tiles := int64(f.env.rows * f.env.cols)
	return 64*tiles + 4096, 16*tiles + 1024
}

// NewEnv returns a runtime of the maze with the tick limit.
func (f *factory) NewEnv(o registry.EnvOptions) (env.MultiAgent, error) {
	return hrl.New(hrl.HierarchicalEnv[State, Action](f.env), hrl.Config{MaxTicks: o.MaxTicks})
}

func oraclePolicy(f registry.Factory, _ *rand.Rand) (agent.Policy, error) {
	mf, ok := f.(*factory)
	if !ok {
		return nil, fmt.Errorf("maze: the oracle needs the maze's factory, not %T", f)
	}
	if mf.oracle == nil { // each episode draws its map: an oracle per trial reads it
		return NewEnvOracle(mf.env), nil
	}
	return mf.oracle, nil
}

func randomPolicy(name string) registry.PolicyFactory {
	return func(f registry.Factory, rng *rand.Rand) (agent.Policy, error) {
		mf, ok := f.(*factory)
		if !ok {
			return nil, fmt.Errorf("maze: the random %s policy needs the maze's factory, not %T", name, f)
		}
		for _, b := range mf.env.Agents() {
			if b.Name() == name {
				return agent.Random(b.ActionSpace(), rng)
			}
		}
		return nil, fmt.Errorf("maze: no %s agent in this configuration", name)
	}
}

// RegisterFlat adds the flat maze (Flat) to a registry under the name "maze-flat",
// configured by the JSON that ParseFlatConfig reads, as a multi-agent environment of
// one agent (registry.SingleAgent; its id is "walker_0"). Its policies:
//
//	walker  oracle (default): NewOracle's shortest paths, a tile a step; random:
//	        uniform over the walkable directions
//
// An episode succeeds when the agent reaches the goal (it terminates). People see the
// actions as directions and the state as the position and the last move's heading.
// A configuration from the network asks for at most maze-flat.side rows and columns
// (LimitSide). Its factory builds copies that share the map and the agent's spec.
func RegisterFlat(r *registry.Registry) error {
	return r.Register(registry.Entry{
		Name:        "maze-flat",
		Description: "the reference maze without a hierarchy: one agent moves a tile a step",
		Config:      FlatConfig{},
		Open:        openFlatFactory,
		OpenRemote: func(config []byte, o registry.Remote) (registry.Factory, error) {
			cfg, err := ParseFlatConfig(config)
			if err != nil {
				return nil, err
			}
			if err := checkRemoteSides(o, cfg.Map, cfg.Generate, 0); err != nil {
				return nil, err
			}
			return openFlatFactory(config)
		},
		Limits: []registry.Limit{{Name: LimitSide, Description: "rows or columns of a map", Default: DefaultRemoteSide}},
		Agents: []registry.AgentEntry{{Name: FlatName, Default: "oracle", Policies: []registry.PolicyEntry{
			{Name: "oracle", Description: "shortest paths to the goal", New: func(f registry.Factory, _ *rand.Rand) (agent.Policy, error) {
				ff, ok := f.(*flatFactory)
				if !ok {
					return nil, fmt.Errorf("maze: the oracle needs the flat maze's factory, not %T", f)
				}
				if ff.oracle == nil { // each episode draws its map: an oracle per trial reads it
					rows, cols := ff.cfg.sides(nil)
					return newObservedOracle(rows, cols), nil
				}
				return ff.oracle, nil
			}},
			{Name: "random", Description: "uniform over the walkable directions", New: func(_ registry.Factory, rng *rand.Rand) (agent.Policy, error) {
				return agent.Random(spaces.Discrete{N: 4}, rng)
			}},
		}}},
		Success: Terminated,
		Look: registry.Look{
			Action: func(_ env.Turn, _ *env.Report, raw agent.RawAction) string { return Direction(raw.Int).String() },
			Info:   describe,
		},
	})
}

// Terminated reports whether an agent ended the episode with final terminated: in the
// flat maze, the agent reached the goal. It is the flat maze's success.
func Terminated(final env.Turn) bool {
	for i := range final.Reports {
		if final.Reports[i].Terminated {
			return true
		}
	}
	return false
}

// flatFactory is the registry.Factory of one flat maze configuration: the
// configuration, checked, the first Flat built (whose map and agent spec, both
// immutable, every Flat of the factory shares) and the oracle of its map.
type flatFactory struct {
	cfg    FlatConfig
	first  *Flat
	oracle *Oracle
}

func openFlatFactory(config []byte) (registry.Factory, error) {
	cfg, err := ParseFlatConfig(config)
	if err != nil {
		return nil, err
	}
	f, err := NewFlat(cfg)
	if err != nil {
		return nil, err
	}
	ff := &flatFactory{cfg: cfg, first: f}
	if m := f.Maze(); m != nil {
		ff.oracle = NewOracle(m)
	}
	return ff, nil
}

// Size estimates the memory of the map, its oracle and the agent's spec (some 38
// bytes a tile, measured), and of each Flat (its observation, and its map when each
// episode draws one), with room to spare.
func (f *flatFactory) Size() (shared, each int64) {
	rows, cols := f.cfg.sides(f.first.maze)
	tiles := int64(rows * cols)
	each = 4*int64(len(f.first.obs)) + 256
	if f.cfg.perEpisode() { // each Flat holds its episode's map
		each += 64 * tiles
	}
	return 64*tiles + 4096, each
}

// NewEnv returns a flat maze whose step limit is the configuration's, or the trial's
// tick limit when lower.
func (f *flatFactory) NewEnv(o registry.EnvOptions) (env.MultiAgent, error) {
	cfg := f.cfg
	if o.MaxTicks > 0 && (cfg.MaxSteps == 0 || o.MaxTicks < cfg.MaxSteps) {
		cfg.MaxSteps = o.MaxTicks
	}
	return registry.SingleAgent(f.first.sibling(cfg)), nil
}
