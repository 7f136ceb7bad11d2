// Command baton runs baton's hierarchical environments from the command line.
//
//	baton run ENV     run a campaign of trials and print a summary (the main job)
//	baton play ENV    play one episode and print every step
//	baton envs        list the environments, their agents, spaces and policies
//	baton graph ENV   draw an environment's switching state machine
//	baton bench       run the benchmark suite against its hand-written baselines
//
// The environments are those registered in a runners.Registry that the command builds
// when it starts: maze (examples/maze) and cartpole (examples/cartpole). Each agent of
// an environment plays one of its registered policies; --policy AGENT=POLICY picks one
// (repeatable), and an agent left out plays its default (the maze: strategy=oracle|random,
// default oracle; motion=random|forward, default random; the cart-pole:
// cartpole=random|balance, default random). --env-config configures the environment
// with JSON (for the maze, the fields of maze.Config: map, generate, procedure, strategy,
// motion; for the cart-pole, those of cartpole.Config: max_steps,
// kinematics_integrator), given inline or, with a leading @, read from a file.
// --max-ticks truncates every episode after that many environment steps (0: only the
// environment's own limits). `baton envs` and `baton COMMAND --help` list the choices.
//
// # Run
//
//	baton run ENV [--trials N] [--workers N] [--episodes N] [--seed N]
//	              [--policy AGENT=POLICY]... [--max-ticks N] [--env-config JSON|@FILE] [--json]
//
// runs a campaign (runners.Campaign) of --trials trials (default 1000) of --episodes
// episodes each (default 1) on --workers goroutines (default 0: one per CPU, that is
// GOMAXPROCS). Trial i has the seed runners.DeriveSeed(seed, i) (--seed, default 1),
// from which its episodes' reset seeds and its policies' generators derive, so the
// same flags give the same summary, apart from the timing, whatever the number of
// workers; the first episode of trial 0 is `baton play ENV` with the same flags.
//
// While it runs, progress goes to stderr: a progress bar when stderr is a terminal,
// otherwise one line each time another tenth of the trials is done (each trial when
// there are fewer than ten):
//
//	run maze: 100/1000 trials (10%), 5,012 env steps, 0 failed, 0.0 s
//
// Then stdout gets the summary: the environment, seed and policies; the trials (ended,
// stopped, failed), complete episodes, environment steps, wall time and steps per
// second; the success rate where the environment defines success (the maze: the
// strategy agent reached the goal; the cart-pole: the pole stayed up to the time
// limit); and for each agent its episode returns: episodes, mean, standard deviation
// (population), minimum and maximum; then the failed trials with their reasons.
//
// With --json, stdout holds one JSON object and nothing else:
//
//	env               the environment's name
//	seed              the campaign's seed
//	policies          {"AGENT": "POLICY", ...}: the policy of every agent
//	trials            trials run (ended + stopped + failed; fewer than --trials when
//	                  interrupted)
//	ended, stopped, failed
//	episodes          complete episodes, over which returns and success are counted
//	env_steps         environment steps of every episode begun
//	wall_seconds      wall-clock time of the campaign
//	steps_per_second  env_steps / wall_seconds
//	successes         successful episodes       } only where the environment defines
//	success_rate      successes / episodes      } success; success_rate is null when
//	                                              no episode completed
//	agents            {"AGENT": {"mean", "std", "min", "max", "episodes"}, ...}: each
//	                  agent's episode returns
//	failures          [{"index", "trial", "reason"}, ...]: the failed trials
//	interrupted       true when an interrupt stopped the campaign
//
// Only wall_seconds and steps_per_second change from one run of the same flags to
// the next.
//
// # Play
//
//	baton play ENV [--policy AGENT=POLICY]... [--seed N] [--env-config JSON|@FILE]
//	               [--max-ticks N] [--json]
//
// runs one episode of ENV and prints every agent reported in every step. --seed
// (default 1) seeds the environment's reset and every random policy (the policy of the
// agent at index k draws from rand.NewPCG(seed, k), as in a trial of package runners),
// so the same flags print the same episode.
//
// In text, one line per reported agent per step: the tick, the agent that acted and
// its action (named by the environment: LEFT, FORWARD for the maze, LEFT, RIGHT for the
// cart-pole), the agent reported, its reward, the span of the decision that reward
// scores in ticks, its status (start, terminated, truncated, or - while its sub-episode
// goes on) and the environment's description of the state after the step (the maze:
// position [row col] and heading; other environments: their Info as JSON). The reset
// is tick 0 with no acting agent. Then the return of every agent id and every agent
// name, and a last line "episode over after N ticks: ID terminated|truncated" naming
// the root agent ("episode cut after N ticks by --max-ticks" for an environment that
// ignores the limit).
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
// # Envs
//
//	baton envs [ENV]... [--json]
//
// lists the registered environments (or those named): description, what --env-config
// takes, whether success is defined, and each agent with its observation and action
// spaces (built from the default configuration; spaces.Space's String) and its
// policies, the default marked. With --json, one JSON array of objects {"name",
// "description", "config", "defines_success", "agents": [{"name",
// "observation_space", "action_space", "mask_len", "policies": [{"name",
// "description", "default"}]}]}, the spaces in package spaces' JSON spec.
//
// # Graph
//
//	baton graph ENV [--dot] [--env-config JSON|@FILE]
//
// prints the switching state machine of ENV as configured (the maze's procedure
// variant has another machine) as a Mermaid state diagram, or with --dot in Graphviz's
// DOT language (transitions.Machine.Mermaid and DOT). An environment without a
// switching machine (the cart-pole) is bad input.
//
// # Bench
//
//	baton bench [--run REGEXP] [--benchtime DURATION] [--json]
//
// runs the cases of package bench (bench.Suite, the same as "go test -bench . ./bench")
// with testing.Benchmark and prints one table: per case its time and allocations per
// iteration (a step or a trial), its throughput, and that throughput as a share of the
// case it is compared with: the hand-written loop doing the same work, or the layer
// below (the campaign through the runner against the same trials driven by hand over
// the hrl runtime, and those against the hand-written maze). Progress goes to stderr.
//
// # Exit status
//
// Every command exits with
//
//	0    success
//	1    a failure while running: an episode of baton play fails (a policy error, an
//	     action the environment rejects), or some trial of baton run failed (the
//	     summary is printed all the same, and stderr names the first failure)
//	2    bad input: an unknown command, environment, agent or policy, a malformed or
//	     out-of-range flag, a bad --env-config, baton graph of an environment without a
//	     switching machine
//	130  interrupted (SIGINT, as Ctrl-C sends, or SIGTERM): baton run stops its trials
//	     promptly and prints the summary of what ran; baton play stops where it is
//
// Whenever the status is not 0, stderr ends with one line "baton: ..." that names the
// problem and, for bad input, the valid choices.
package main
