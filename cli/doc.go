// Package cli is baton's command line as a library: Main runs every command over a
// registry of environments, so that a program of the user's own module is the whole
// baton command over its own environments, as caddycmd.Main is Caddy's:
//
//	package main // example.com/keydoor/cmd/keydoor
//
//	import (
//		"os"
//
//		"example.com/keydoor"
//		"github.com/batonrl/baton/cli"
//	)
//
//	func main() { os.Exit(cli.Main(keydoor.Register)) }
//
// What you touch here: call Main from your own main package with your register
// functions (and Run from its tests); implement nothing. The commands and their flags
// are this package's; an environment describes itself through its registry entry
// (package runners), not here.
//
// Main(catalog.Register, keydoor.Register) adds the user's environments to those baton
// ships; Main() alone, baton's own cmd/baton, has the shipped ones. A register function
// is what an environment's package exports for every tool (func(*registry.Registry)
// error, as maze.Register): its registry entry is the one place the environment
// describes itself (agents, policies, configuration, how people see it, success,
// metrics). A name registered twice is an error naming both registrations. Run runs
// one command line in the process, for a program's tests.
//
// The commands:
//
//	baton run ENV     run a campaign of trials and print a summary (the main job)
//	baton play ENV    play one episode and print every step
//	baton envs        list the environments, their agents, spaces and policies
//	baton graph ENV   draw an environment's switching state machine
//	baton bench       run the benchmark suite against its hand-written baselines
//	                  (only over the shipped environments)
//	baton new DIR     write a starter module: an environment of one's own, its test,
//	                  its command line, its fast lane library and a training script
//	                  (only over the shipped environments)
//	baton inspect DIR sum up an activity log: rows, episodes, returns, success rate
//	baton replay DIR  replay a log's trials and report every step that differs
//	baton log recover DIR  rewrite the parts a killed writer left without a footer
//	baton serve agent|env|trials  serve agents, environments or trials over gRPC,
//	                  and the same calls over HTTP/1.1 in Connect (JSON and
//	                  binary) and gRPC-Web (package remote; baton serve --help)
//	baton serve ui    serve trials and a page where people play, reward and watch
//	                  them (package webui)
//
// A program of the user's takes the same commands under its own name. The environments
// are those of the registry: with the shipped catalog, maze and maze-flat
// (envs/maze), cartpole (envs/cartpole), webtest (envs/webtest) and rps
// (envs/rps). Each agent of an environment plays one of its registered
// policies; --policy AGENT=POLICY picks one (repeatable), and an agent left out plays
// its default (the maze: strategy=oracle|random, default oracle; motion=random|forward,
// default random; the flat maze: walker=oracle|random, default oracle; the cart-pole:
// cartpole=random|balance, default random; webtest: strategy=heuristic|random, default
// heuristic; motion=scripted|random, default scripted; rps: player_0=random|rock and
// player_1=random|rock, default random). --env-config configures the environment with
// JSON (for the maze, the fields of maze.Config: map, generate, obs_side, procedure,
// strategy, motion; for the flat maze, those of maze.FlatConfig: map, generate,
// max_steps, reward_for_reaching_goal; for the cart-pole, those of cartpole.Config:
// max_steps, kinematics_integrator; for webtest, those of webtest.Config: site,
// site_file, generate, strategy, motion; for rps, max_cycles), given inline or, with a
// leading @, read from a file. "baton envs" lists them all, with each agent's spaces.
// --max-ticks truncates every episode after that many environment steps (0: only the
// environment's own limits). `baton envs` and `baton COMMAND --help` list the choices.
//
// # Run
//
//	baton run ENV [--trials N] [--workers N] [--episodes N] [--seed N]
//	              [--policy AGENT=POLICY]... [--max-ticks N] [--env-config JSON|@FILE] [--json]
//	              [--log DIR [--log-compression none|lz4|zstd] [--log-shard NAME]]
//	              [--first K] [--results FILE] [--from-results FILE]...
//	baton run --schedule FILE [--trials N] [--workers N] [--episodes N] [--seed N]
//	              [--max-ticks N] [--json] [--log DIR ...]
//
// runs a campaign (runners.Campaign) of --trials trials (default 1000) of --episodes
// episodes each (default 1) on --workers goroutines (default 0: one per CPU, that is
// GOMAXPROCS; at most 4 per CPU, or 256 where that is more: a larger count is a usage
// error, as it is for baton serve trials and ui). Trial i has the seed env.DeriveSeed(seed, i) (--seed, default 1),
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
// (population), minimum and maximum; the same figures for each metric the
// environment defines (registry.Entry.Metrics; webtest: coverage and defects found);
// then the failed trials with their reasons.
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
//	metrics           {"METRIC": {"mean", "std", "min", "max", "episodes"}, ...}: the
//	                  environment's metrics, over the episodes that measured them;
//	                  only where it defines some
//	failures          [{"index", "trial", "reason"}, ...]: the failed trials
//	interrupted       true when an interrupt stopped the campaign
//	log               only with --log: {"dir", "compression", "rows", "parts",
//	                  "bytes"}: the step rows written, the files and their size
//
// Only wall_seconds and steps_per_second (and the log's bytes, which hold the
// version of baton) change from one run of the same flags to the next.
//
// With --log DIR, every step of every trial goes to an activity log in DIR (package
// datalog): an Apache Arrow dataset of IPC files, one folder per agent
// (DIR/agent=NAME/part-NNNNN.arrow, one row per agent reported in a step), the tables
// _trials and _episodes, and _rewards when a trial received retroactive rewards, which
// pyarrow.dataset.dataset(DIR,
// format="arrow", partitioning="hive"), polars and the python/ package read. Each
// worker writes its own parts. DIR is created; one that already holds a log is bad
// input (a second campaign would reuse the trial ids). --log-compression compresses
// the record batches with LZ4 (the default), Zstandard or not at all (none). The log is closed when the
// campaign ends, also when it is interrupted or some trial failed, so that every part
// has its footer; the text summary then ends with the line
//
//	log            DIR: 25,631 rows in 8 parts, 468.3 KiB (compression lz4)
//
// A campaign can be shared out by ranges of trial indices (python -m baton.ray does, on
// a Ray cluster): --first K runs trials K to K+N-1 (N from --trials), each exactly as
// in the whole campaign (not with --schedule); --log-shard NAME names the parts
// part-NAME-NNNNN.arrow, apart from other runs' in one log; --results FILE writes each
// trial's result, a JSON object a line. `baton run ENV --trials N --from-results FILE
// ...`, with the campaign's flags, runs no trial and sums the files up, which must hold
// each of the N trials once, to the summary of the whole campaign, timing aside.
//
// # Schedules
//
// With --schedule FILE, the campaign plays the tasks of a schedule, a curriculum
// (runners.Schedule, read by runners.ParseSchedule), instead of one environment:
//
//	{
//	  "order": "success",              in_order, random or success
//	  "trials": 60,                    random and success: the trials (else --trials)
//	  "success": {"metric": "success", "min": 1},
//	  "promotion": {"window": 10, "threshold": 0.9, "demote_below": 0},
//	  "tasks": [
//	    {"name": "5x5", "env": "maze",
//	     "config": {"generate": {"rows": 5, "cols": 5, "per_episode": true}, "obs_side": 9},
//	     "policies": {"strategy": "oracle", "motion": "forward"},
//	     "trials": 10,                 in_order only: the task's trials
//	     "weight": 1}                  random only: its relative chance (0: 1)
//	  ]
//	}
//
// in_order plays each task for its trials; random draws each trial's task by weight
// from the trial's seed alone (runners.RandomTask); success begins with the first task
// and, after each window of "window" trials (by trial index, all of one task), moves
// to the next task when the window's success rate is at least "threshold" (back to the
// previous one when it is below "demote_below"). A trial succeeds when the mean of
// "metric" over its complete episodes is at least "min": the metric is success (the
// environment's, the default, with min 1), one of the environment's metrics, or
// return:AGENT. Because a window's task depends only on the windows before it, in
// trial order, the same flags give the same tasks whatever the number of workers.
// ENV, --env-config and --policy are left out (policies are registered names); a
// problem of the file is bad input naming the task and the field. The text summary
// adds a table of the tasks and the line "tasks taken  5x5 x10, 7x7 x10, 9x9 x40"; the
// JSON summary adds
//
//	schedule          {"file", "order", "success": {"metric", "min"},
//	                  "tasks": [{"name", "env", "config", "policies", "trials",
//	                  "successes", "success_rate", "episodes", "env_steps", "first",
//	                  "last"}, ...], "runs": [{"task", "first", "trials"}, ...]}:
//	                  each task (successes by the schedule's criterion; first and
//	                  last trial index, -1 when none ran) and the runs of consecutive
//	                  trials of one task, in trial order
//
// and env and policies are the first task's environment(s) and policies. The log's
// trials table names each trial's task (column task).
//
// # Play
//
//	baton play ENV [--policy AGENT=POLICY]... [--seed N] [--env-config JSON|@FILE]
//	               [--max-ticks N] [--json] [--human AGENT]... [--log DIR]
//
// runs one episode of ENV and prints every agent reported in every step. --seed
// (default 1) seeds the environment's reset and every random policy (the policy of the
// agent at index k draws from rand.NewPCG(seed, k), as in a trial of package runners),
// so the same flags print the same episode.
//
// In text, one line per reported agent per step: the tick, the agent that acted and
// its action (named by the environment's registry entry, registry.Look: LEFT, FORWARD
// for the maze, LEFT, RIGHT for the cart-pole, `link "Cart"`, back, type unicode for
// the web-testing environment; the raw action for an environment that names none), the
// agent reported, its reward, the span of the decision that reward scores in ticks, its
// status (start, terminated, truncated, or - while its sub-episode goes on) and the
// environment's description of the state after the step (the maze: position [row col]
// and heading; environments that describe none: their Info as JSON). The reset
// is tick 0 with no acting agent. Then the return of every agent id and every agent
// name, and a last line "episode over after N ticks: ID terminated|truncated" naming
// the root agent ("episode cut after N ticks by --max-ticks" for an environment that
// ignores the limit).
//
// With --human AGENT (repeatable), a person plays the agent at the terminal (package
// human), and the episode runs as a trial of package runners, the other agents
// playing their policies. At each turn of the person's agent, play writes the
// environment drawn for people (the registry entry's registry.Look: the maze's map
// with the agent on it, the web tester's page) and every action of the agent,
// numbered from 1 in the order of the raw actions (as the page of baton serve ui
// numbers them) and named, those the mask forbids marked "(not allowed now)", and
// reads a line from stdin: a number or a name, in any case; an arrow key (ESC [ A, B,
// C, D) for an action named UP, DOWN, RIGHT or LEFT; an empty line when one action
// alone is allowed ("press Enter (or type 2) for RIGHT, the only allowed action").
// Bad input is answered with why ("RIGHT is not allowed now (allowed: UP, LEFT)")
// and the choices again, and changes nothing. After each of
// the agent's steps it writes the reward. The episode ends with a line "trial ID
// ended: episode over after N ticks[, success|no success]", or "trial ID stopped
// after N ticks: the input ended|interrupted", and the return of each agent with its
// policy. The end of the input (Ctrl-D) stops the trial, exit status 0; Ctrl-C stops
// it too, exit status 130, with nothing written after that end. --log DIR (only with --human) writes the trial to an
// activity log, closed and readable however the trial ends; play then ends with
// "log: DIR, N rows". --json does not combine with --human.
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
//	action_name      what action means, as the text output names it ("UP"); null
//	                 where action is null
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
// runs the cases of package bench (bench.Suite, the same as "go test -bench . ./internal/bench")
// with testing.Benchmark and prints one table: per case its time and allocations per
// iteration (a step or a trial), its throughput, and that throughput as a share of the
// case it is compared with: the hand-written loop doing the same work, or the layer
// below (the campaign through the runner against the same trials driven by hand over
// the hrl runtime, and those against the hand-written maze). Progress goes to stderr.
//
// # New
//
//	baton new DIR --module PATH [--replace BATON_DIR] [--name NAME]
//
// writes a Go module of path PATH into DIR (a new or empty folder) that builds and
// passes its tests at once, to be edited into one's own environment:
//
//	env.go, agents.go    a small hierarchical environment: in a room split by a wall,
//	                     a planner picks the key, the door or the exit, and a walker
//	                     walks there a tile a tick (two typed agents, a switching
//	                     machine with an action trigger and an on-done table, masks
//	                     and rewards at both levels, a JSON configuration whose
//	                     defaults are the reward constants, a room drawn per episode)
//	register.go          Register(*registry.Registry) error: its name, policies,
//	                     success and registry.Look
//	render.go            the room drawn as text and SVG (env.Renderer)
//	env_test.go          hrltest.Check, the rules, and the command line run in the
//	                     process (cli.Run)
//	cmd/NAME/main.go     os.Exit(cli.Main(NAME.Register)): this command line over it
//	cmd/libNAME/main.go  capi.Use(NAME.Register): the fast lane's library for Python
//	train.py             builds that library (baton.build) and trains both agents with
//	                     baton.ppo, against random policies
//	README.md, go.mod, go.sum, .gitignore
//
// NAME names the root package, the environment and both commands: the module path's
// last element (before a major version suffix such as /v2), lower-cased, with every
// character but letters, digits and underscores left out (example.com/Key-Door gives
// keydoor), or --name. A name that is empty, does not start with a letter, is a Go
// keyword or main, ends in _test, or is the name of a package that a file of the
// module imports beside its own (cli, capi, hrl), is bad input, as are a module path
// that is not one, a DIR that is a file or holds anything, and a --replace folder that
// is not a checkout of baton; nothing is written then.
//
// go.mod requires baton. With --replace BATON_DIR it replaces baton with that checkout
// and lists the checkout's requirements, and go.sum is the checkout's: the module
// builds from Go's module cache, without the network (go mod tidy later drops what it
// does not use). Without --replace, a baton built at a released version requires that
// version (then go mod tidy, which downloads it, writes go.sum); a development build
// (or one of a pseudo-version or of modified sources) replaces baton with the checkout
// found in the working directory or above it, and says so, and without one asks for
// --replace. new prints the files it wrote and the commands to run next.
//
// # Inspect
//
//	baton inspect DIR [--plot FILE.png] [--json]
//
// reads the log in DIR and prints its parts and their size (and how many lack a
// footer, their writer killed), the environments, the trials (ended, stopped, failed,
// and unfinished: cut off by a kill), the complete episodes, the step rows, the success
// rate where the environment defines success, and a table with, per agent (in the
// environment's order), its rows, its complete episodes and its episode return over
// them: mean, standard deviation (population), minimum and maximum. An episode's return
// is the sum of every reward of the agent's reports in the episode, every source and
// the retroactive rewards included: the episodes table's returns, plus the
// retroactive rewards that arrived in a later episode. The episodes are taken in the
// order of their trials in the campaign, so the figures are those of the summary of
// the baton run that wrote the log, to the last bit. Where the environment defines
// metrics of an episode (webtest: coverage, defects_found), a second table gives each
// metric's complete episodes that measured it, and its mean, standard deviation, minimum
// and maximum over them, as baton run's summary does. For a log of baton run
// --schedule, a last table gives each task (by its first trial) its trials, their
// complete episodes, their success rate and the first and last trial index.
//
// --plot FILE.png draws, with gonum.org/v1/plot, one panel per agent (their scales
// differ): its episode returns over the episodes in trial order as dots, and their
// moving mean (over a twentieth of the episodes, at most 100) as a line; then one
// panel per metric, drawn the same way.
//
// With --json, stdout holds one JSON object:
//
//	dir               the log's directory
//	envs              the environments of its trials
//	trials, ended, stopped, failed, unfinished
//	episodes          complete episodes
//	rows              step rows, every agent's
//	parts, bytes      the files of the log and their size
//	successes         successful episodes       } null where no trial's environment
//	success_rate      successes / episodes      } defines success; success_rate also
//	                                              when no episode completed
//	agents            {"AGENT": {"rows", "episodes", "return": {"mean", "std", "min",
//	                  "max"}}, ...}
//	metrics           {"METRIC": {"episodes", "mean", "std", "min", "max"}, ...}: the
//	                  environment's metrics ({} where it defines none)
//	tasks             only for a log with tasks (baton run --schedule): [{"name",
//	                  "trials", "episodes", "successes", "success_rate", "first",
//	                  "last"}, ...]; successes and success_rate null where the
//	                  environment defines no success
//
// # Replay
//
//	baton replay DIR [--max-mismatches N] [--json]
//
// re-runs every trial of the log from its logged environment, configuration, seed,
// episodes and tick limit, each agent playing its logged actions (replay.Run, with
// the environments registered here), and compares each step with the log:
// observation, action mask, the environment's reward, end flags, span and order. It
// prints one line per difference,
//
//	trial maze-1 episode 0 tick 2 motion_0: reward: logged 1, replayed 2
//
// then one line listing the trials whose log is incomplete, if any (a killed writer
// lost their last rows or their end record: each is replayed as far as its rows go,
// which is no difference),
//
//	2 trials incomplete (the log lost their last rows or end record; replayed as far as their rows go): maze-938 (rows stop at episode 0 tick 12 strategy_0), maze-941 (no end record)
//
// then "replayed N trials, N steps: no mismatch" (or "N mismatches in N trials",
// followed by "; N trials incomplete" when some are), and exits 1 when there is any
// difference, 0 otherwise. --max-mismatches N stops comparing a trial after N
// differences (0, the default: no limit). With --json: {"trials", "steps", "skipped"
// (trials rejected before they ran), "diverged" (the trials with a mismatch),
// "incomplete": [{"trial", "state" (its latest state in the log: "running" without
// an end record), "episode", "tick", "agent_id" (where its rows stop; null episode
// and tick when it lacks only its end record)}], "mismatches": [{"trial", "episode",
// "tick", "index", "agent_id", "field", "element" (the first differing element of an
// observation or mask, else null), "logged", "replayed"}]}.
//
// # Log recover
//
//	baton log recover DIR [--json]
//
// rewrites each part of the log that has no footer (its writer was killed: baton
// reads such parts as they are, other Arrow readers do not) as a proper IPC file with
// its complete record batches, and deletes a part with none (datalog.Recover). It
// prints per part what it did,
//
//	agent=motion/part-00001.arrow: rewritten with its footer: 1 batch, 4,096 rows kept (cut: unexpected EOF)
//
// then "recovered N parts: N rows kept", or "nothing to recover: every part has its
// footer". With --json: {"parts": [{"path", "batches", "rows", "removed", "cut"}],
// "rows"}. No process may be writing the log meanwhile.
//
// # Exit status
//
// Every command exits with
//
//	0    success
//	1    a failure while running: an episode of baton play fails (a policy error, an
//	     action the environment rejects), some trial of baton run failed (the
//	     summary is printed all the same, and stderr names the first failure), the
//	     log could not be written or read, or baton replay found a mismatch (the
//	     report is printed all the same)
//	2    bad input: an unknown command, environment, agent or policy, a malformed or
//	     out-of-range flag, a bad --env-config, baton graph of an environment without a
//	     switching machine, a bad --log-compression, --log into a directory that holds
//	     a log, a log directory that is missing or holds no log (or one of a format
//	     this baton does not read), baton replay of a log whose environment is not
//	     registered here
//	130  interrupted (SIGINT, as Ctrl-C sends, or SIGTERM): baton run stops its trials
//	     promptly and prints the summary of what ran; baton play stops where it is
//	     (with --human, the trial is stopped and its log closed)
//
// Whenever the status is not 0, stderr ends with one line "baton: ..." that names the
// problem and, for bad input, the valid choices.
package cli
