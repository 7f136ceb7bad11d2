// Package maze is baton's reference environment: a hierarchical maze in which a
// strategy agent picks directions and a motion agent walks them. It is the full-size
// example of an hrl.HierarchicalEnv, with action masks, typed observations, an
// optional hook, a procedure variant and a configuration read from JSON.
//
// # The map
//
// A map is text of tiles separated by blanks, one row a line: 0 a wall, 1 a corridor,
// 2 the start, 3 the goal (Parse reads it; Reference is the reference 10 x 10 map).
// Generate draws a random map with odd sides from 5 to MaxSide, seeded by the caller's
// generator. A Maze is immutable and safe for concurrent use.
//
// # The agents and the switching machine
//
// The strategy agent (Strategy, "strategy") observes the map, its position and the
// walkable directions, and chooses a Direction (Discrete(4), masked to the walkable
// ones). Each choice hands control to the motion agent (Motion, "motion"), which takes
// the chosen heading (its OnTakesControl hook) and moves forward or backward
// (Discrete(2), masked) until it stands on an intersection or faces a wall, when its
// sub-episode ends and control returns to the strategy, which is then rewarded for the
// whole walk. The strategy is rewarded on reaching the goal and truncated after
// StrategyConfig.MaxSteps decisions; the motion agent earns a reward per move, positive
// forward and negative backward, and is truncated after MotionConfig.MaxSteps moves.
// The episode ends with the strategy's sub-episode. In the procedure variant
// (Config.Procedure) there is no motion agent: Walk, a non-learned procedure, walks the
// chosen direction within the strategy's step.
//
// # The flat maze
//
// Flat is the same maze without a hierarchy, for comparing with it: an env.Env of one
// agent (FlatName, "walker") that moves one tile a step in one of the four directions
// (masked to the walkable ones), observes what the strategy agent observes, is
// rewarded on reaching the goal and truncated after FlatConfig.MaxSteps moves, by
// default as many as the hierarchy's motion agent may make in an episode.
// RegisterFlat adds it to a registry as "maze-flat".
//
// # Configuration and registration
//
// Config is the environment's JSON configuration (ParseConfig, or `baton run maze
// --env-config`); its zero value is the reference maze with the reference rewards and
// limits. NewEnv builds the environment; hrl.New makes a runtime of it. Register adds
// it to a runners.Registry under the name "maze", with its policies (NewOracle's
// shortest paths and a random walk for the strategy; a random walk and AlwaysForward
// for the motion agent) and its success (Reached): what `baton run maze`, `play`,
// `envs` and `graph` use.
//
// # Concurrency
//
// Env holds configuration only and is safe for concurrent use; each runtime holds its
// own state. Oracle is safe for concurrent use and allocates nothing per call.
package maze
