// Command baton plays baton's hierarchical environments from the command line.
//
// # Play
//
//	baton play ENV [--policy AGENT=POLICY]... [--seed N] [--env-config JSON|@FILE]
//	               [--max-ticks N] [--json]
//
// runs one episode of the environment ENV (for now: maze) and prints every agent reported
// in every step. Each agent of the environment plays a named policy; --policy picks one
// (the maze: strategy=oracle|random, default oracle; motion=random|forward, default
// random). --seed seeds the environment's reset and every random policy (the policy of
// the agent at index k draws from rand.NewPCG(seed, k)), so the same flags print the same
// episode. --env-config configures the environment with JSON (for the maze, the fields of
// maze.Config: map, generate, procedure, strategy, motion), given inline or, with a
// leading @, read from a file. --max-ticks truncates the episode after that many
// environment steps (0: only the environment's own limits).
//
// # Text output
//
// One line per reported agent per step: the tick, the agent that acted and its action
// (named by the environment: LEFT, FORWARD), the agent reported, its reward, the span of
// the decision that reward scores in ticks, its status (start, terminated, truncated, or
// - while its sub-episode goes on) and the environment's description of the state after
// the step (the maze: position [row col] and heading). The reset is tick 0 with no
// acting agent. Then the return of every agent id and every agent name, and a last line
// "episode over after N ticks: ID terminated|truncated" naming the root agent.
//
// # JSON output
//
// With --json, stdout holds one JSON object per line, one per reported agent per step,
// and nothing else:
//
//	tick             environment steps since the reset (0 for the reset's report)
//	acting_agent_id  the agent that acted in this step; null for the reset
//	agent_id         the agent reported, "<name>_<k>"
//	agent            its name
//	parent_agent_id  the agent whose action started its sub-episode, or null
//	action           the raw action this report's reward scores, or null: the agent's own
//	                 action when it is the acting agent; for a parent settled when its
//	                 child's sub-episode ends, the action that handed control down
//	                 (span_ticks long); null on a start report. An integer for a Discrete
//	                 action space, an array otherwise.
//	reward           the reward for that action (0 on a start report)
//	span_ticks       the length of that decision in ticks (0 on a start report)
//	terminated       the sub-episode ended
//	truncated        the sub-episode was cut short (a step limit)
//	start            the agent's first observation of a sub-episode
//	info             the environment's description of the state, e.g.
//	                 {"position":[4,8],"heading":"LEFT"}
//
// Every action of an episode thus appears exactly once, on the report that settles it.
// No summary is printed in JSON mode.
//
// # Exit status
//
// 0 when the episode ran to its end; 2 for bad input (an unknown command, environment,
// agent or policy, a malformed flag, a bad --env-config), with one line on stderr that
// names the problem and the choices; 1 when the episode fails while it runs (a policy
// error, an action the environment rejects, an interrupt).
package main
