// Package bench measures what the framework costs: each benchmark runs a framework
// path next to a hand-written loop that does the same work, so that the ratio of the
// two, the framework's overhead, can be read off. It is internal: the baton command
// runs it as "baton bench", and it is no API of its own.
//
// What you touch here: run it (go test -bench, or baton bench) and add a benchmark
// beside its hand-written baseline; it is internal and no program imports it.
//
// # Running
//
//	go test -run XXX -bench . -benchmem -count 5 ./internal/bench
//
// Compare medians (or feed the output to benchstat); on a loaded machine single runs
// are noisy. A CPU profile of one benchmark:
//
//	go test -run XXX -bench 'MazeStep/ref' -cpuprofile cpu.out ./internal/bench
//	go tool pprof -top bench.test cpu.out
//
// # The maze
//
// BenchmarkMazeStep steps the hrl runtime over maze.NewEnv (strategy and motion agents,
// the reference defaults); BenchmarkMazeBaseline steps MazeLoop, the same dynamics
// written by hand without hrl. Both have the sub-benchmarks ref (the 10 x 10 reference
// map, observations of 106 and 104 floats) and gen101 (a generated 101 x 101 map,
// 10,207 floats, where copying the map into the observation dominates).
//
// One benchmark iteration is one step: one action of the acting agent, drawn uniformly
// from its valid actions, applied, and the new observation and mask written; when the
// episode ends, the iteration also resets. Both sides draw the action with the same
// driver: one agent.Random per agent on generators seeded alike, called through
// agent.Policy and chosen by the acting agent's name; the loop takes the raw action's
// Int. The benchmarks thus differ in the environment alone.
// Both report allocations and steps/s. TestBaselineMatchesRuntime plays both in
// lockstep and checks that every report agrees (ids, observations, masks, rewards,
// terminated, truncated, spans, episode ends), so the loop is known to do the work the
// runtime does; TestMazeStepAllocs asserts that the runtime's step path, resets
// included, allocates nothing (skipped under the race detector, which allocates).
//
// The project's targets: 0 allocations per step, and the runtime at 70% or more of
// the hand-written loop's steps/s (aiming for 90%).
package bench
