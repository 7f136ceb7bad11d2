// Package maze is baton's reference environment: a hierarchical maze in which a
// strategy agent picks directions and a motion agent walks them. It is the full-size
// example of an hrl.HierarchicalEnv, with action masks, typed observations, an
// optional hook, a procedure variant and a configuration read from JSON.
//
// What you touch here: call Register and the constructors to use the maze; read it as
// the model of a hierarchical environment (hrl.HierarchicalEnv, agents, masks, a
// procedure, a registry entry). It is an example, not API to build on.
//
// # The map
//
// A map is text of tiles separated by blanks, one row a line: 0 a wall, 1 a corridor,
// 2 the start, 3 the goal (Parse reads it; Reference is the reference 10 x 10 map).
// Generate draws a random map with odd sides from 5 to MaxSide, seeded by the caller's
// generator. A Maze is immutable and safe for concurrent use.
//
// # Mazes for curricula
//
// A configuration's "generate" draws one map ({"rows": R, "cols": C, "seed": S}) or,
// with "per_episode": true, a new map at every episode's reset from the episode's
// seed, so that a learner sees many maps and the same seeds give the same maps.
// "obs_side": N pads the map in the observations to N x N tiles with walls (the map at
// the top left, positions unchanged), so that the observations of mazes of different
// sizes have one size and one network can train on a curriculum of growing mazes (a
// schedule of tasks, runners.Schedule: envs/maze/curriculum.json). The oracle
// policy of such a configuration reads each episode's map from the observation
// (NewEnvOracle).
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
// it to a registry.Registry under the name "maze", with its policies (NewOracle's
// shortest paths and a random walk for the strategy; a random walk and AlwaysForward
// for the motion agent) and its success (Reached): what `baton run maze`, `play`,
// `envs` and `graph` use. A configuration that arrives over the network (a server's
// caller: registry.Registry.Remote) asks for a map of at most maze.side rows and
// columns, generated or given as text, and an obs_side of at most that (maze-flat.side
// for the flat maze; LimitSide, DefaultRemoteSide unless the server's operator raises
// it with `baton serve env --env-limit maze.side=N`). The copies of a flat maze of one
// configuration share its map and agent spec, so that a batch of copies costs about
// its observations.
//
// # Concurrency
//
// Env holds configuration only and is safe for concurrent use; each runtime holds its
// own state. An Oracle of a fixed map is safe for concurrent use and allocates
// nothing per call; one that reads per-episode maps serves one trial at a time. A
// per-episode map is drawn, and so allocated, at each reset.
package maze
