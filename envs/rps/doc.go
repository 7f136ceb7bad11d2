// Package rps is rock-paper-scissors between two players as a simultaneous-move baton
// environment (env.Parallel), after PettingZoo's rps_v2: every round both players
// show a hand at once.
//
// What you touch here: call Register (or New) to use it; read it as the example of an
// env.Parallel environment. It is an example, not API to build on.
//
// # Agents and spaces
//
// The players are "player_0" and "player_1" (ids "player_0_0" and "player_1_0": one
// sub-episode each per episode).
//
//	observation  Box(0, 1, (4,), float32): the other player's last hand, one-hot over
//	             rock, paper, scissors and none (before the first round)
//	action       Discrete(3): Rock (0), Paper (1), Scissors (2); no mask
//
// # Episodes
//
// A round rewards its winner 1 and its loser -1 (0 each on a draw). Nothing terminates
// an episode: it is truncated, for both players, after Config.MaxCycles rounds (0
// means DefaultMaxCycles, rps_v2's 15). Reset takes a seed for the interface's sake:
// the game has no randomness of its own.
//
// # Errors
//
// Step returns an error wrapping ErrAction, and changes nothing, for a number of
// actions other than the live players' or a hand outside Discrete(3); ErrNotReset
// before the first Reset and after the end of an episode. ParseConfig's errors wrap
// ErrConfig.
//
// # Registry
//
// Register adds it to a registry.Registry as "rps" (env.Sequential presents the rounds
// turn by turn), with the policies random (default) and rock for each player.
package rps
