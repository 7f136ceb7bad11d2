// Package vector steps many copies of an environment in lockstep, so that a batched
// policy (a neural network, a remote agent server) makes one call per tick for all of
// them, and a trainer reads their results from contiguous buffers.
//
// What you touch here: call New and NewMulti to step copies of your environment (with
// options such as WithWorkers), and implement BatchPolicy (or wrap a function in
// BatchPolicyFunc) for a policy that acts for all copies in one call.
//
// # Single-agent vectors
//
// Env holds N copies of an env.Env, made by a factory func(i int) (env.Env, error).
// Reset and Step fill buffers the Env owns, one row per copy, in copy order:
//
//	Obs         [N × ObsDim]float32   the copies' current observations
//	Masks       [N × MaskLen]bool     their action masks (nil without a mask)
//	Rewards     [N]float64            the rewards of the last step
//	Terminated  [N]bool               which episodes terminated in the last step
//	Truncated   [N]bool               which were truncated
//	FinalObs    [N × ObsDim]float32   the last observation of each episode that ended
//	FinalInfo   [N]any                its Info, with WithFinalInfo(true)
//	Seeds, Episodes [N]               each copy's current episode seed and index
//
// The buffers are allocated once, by New, and stay the same slices for the Env's life,
// so a trainer (or an Arrow writer) can hold them and read them after every Step
// without copying. WithBuffers gives New the caller's buffers instead, memory that
// the vector writes into for its whole life: Python's fast lane (baton.vector) passes
// numpy arrays this way, so that a step's results land where the trainer reads them,
// with no copy. Rewards are float64, as env.Step, env.Report and Gymnasium's vector
// environments have them: the exact value each copy returned, in the type of the
// activity log's reward column; a trainer on float32 converts once per batch.
//
// A loop:
//
//	v, err := vector.New(64, func(int) (env.Env, error) { return cartpole.NewEnv(cartpole.Config{}) })
//	...
//	actions := make([]agent.RawAction, v.Len())
//	err = v.Reset(ctx, seed)
//	for err == nil {
//		if err = policy.ActBatch(ctx, v.Batch(), actions); err == nil {
//			err = v.Step(ctx, actions)
//		}
//		// v.Rewards(), v.Terminated(), v.Truncated(), v.FinalObs(), v.Obs() ...
//	}
//
// For a Discrete action space, a DiscretePolicy writes the actions as integers (a
// policy network's output) and StepDiscrete takes them. When every copy also
// implements env.DiscreteStepper (the cart-pole does), the vector steps them with it,
// found once by New: each copy writes its observation and mask straight into its rows,
// with no env.Step in between and no copy, which brings a vector of cheap environments
// close to a hand-written loop (BenchmarkVectorCartPole). A wrapped copy (TimeLimit,
// Stats) is stepped with Step; the results are the same.
//
// # Kernels
//
// An environment can go further and step a whole run of its copies in one call: when
// copy 0 implements Batcher (the cart-pole does), New asks it once for a Kernel over
// all the copies, and StepDiscrete hands the Kernel runs of up to 256 copies (a
// worker's chunk with workers), auto-resets included, instead of making one interface
// call per copy. The Kernel writes observations, rewards and flags straight into the
// vector's buffers (the caller's, with WithBuffers) and keeps the copies' state where
// it can stream it: the cart-pole's Kernel holds every copy's state in one contiguous
// array. Its results are those of the copies' own StepDiscrete and Reset, bit for
// bit; Step with raw actions and Reset still go through each copy, on the same state.
// A vector with WithFinalInfo(true) steps each copy on its own (it must take each
// ended copy's Info before the reset).
//
// # Auto-reset
//
// A copy whose episode ends in a step is reset in that same step: Gymnasium 1.x's
// AutoresetMode.SAME_STEP, not its default NEXT_STEP. After Step, for a copy i with
// Terminated[i] or Truncated[i] (Done(i)):
//
//   - Rewards[i], Terminated[i] and Truncated[i] are those of the final step;
//   - FinalObs row i is the episode's last observation (and FinalInfo[i] its Info, with
//     WithFinalInfo(true)), taken before the reset;
//   - Obs and Masks row i are the first observation and mask of the next episode, reset
//     with the copy's next episode seed; Episodes[i] and Seeds[i] say which.
//
// For the other copies FinalObs rows keep what they held; read them only where Done(i).
// The next Step's action for copy i acts in the new episode.
//
// Why same-step: under next-step auto-reset every ended copy costs a dummy tick, in
// which the batched policy computes an action that the vector throws away and the
// trainer must mask out (a step with reward 0 whose observation is the reset one).
// Same-step keeps every row of every batch useful, which is what a batched policy and
// a rollout buffer want: the transition of copy i is (obs before, action, Rewards[i],
// Terminated[i], Truncated[i], FinalObs row i if Done(i) else Obs row i), and a
// learner bootstraps from FinalObs after a truncation and not at all after a
// termination. It is also what the multi-agent vector needs: a hierarchical episode
// ends in the middle of other copies' episodes, and each copy's next acting agent must
// be known at once to batch by name. The cost is one extra buffer (FinalObs).
//
// # Seeds
//
// Reset(ctx, seed) starts copy i's episode 0 with EpisodeSeed(seed, i, 0); its k-th
// auto-reset uses EpisodeSeed(seed, i, k). The seeds depend on the base seed, the copy
// index and the episode index only (see EpisodeSeed for the formula), never on the
// number of workers or on timing: the same seed and the same actions give the same
// buffers, tick by tick, synchronously or with any number of workers, and copy i of a
// vector of any size replays the same episodes.
//
// # Workers
//
// By default a vector is synchronous: Step steps the copies one after the other in the
// calling goroutine. WithWorkers(w) spreads them over w workers, each owning a
// contiguous range of about N/w copies (its rows of the buffers; the bounds are
// rounded to multiples of 8 copies when each worker has 8 or more, so that workers do
// not share the cache lines of a []float64): the goroutine that calls Step is worker
// 0 and works on its own range, and w-1 goroutines, started once by the constructor,
// do the others. Close stops them and waits for them; a vector with workers must be
// closed.
//
// A Step is one fan-out and one fan-in, with no goroutine started, no allocation and
// no lock: the caller publishes a new epoch in an atomic counter and works; each
// worker, which spins on the counter, works; the caller spins until all is done.
// Spinning rather than blocking on a channel is what makes workers pay off: waking a
// sleeping thread takes tens of microseconds (more in a virtual machine), as long as a
// whole tick of a thousand cart-poles. The spins are bounded: a worker that sees no
// tick for a quarter of a millisecond (the caller runs a policy network, a trainer
// updates its model) goes to sleep on a channel and is woken by the next Step.
//
// Working is claiming chunks of 64 copies from a range's atomic cursor and stepping
// them, from one's own range first, then from the others'. So each worker steps its
// own range when all goes well, and the others finish the range of a worker that the
// scheduler, or a loaded machine, keeps waiting. Each copy is stepped by exactly one
// goroutine and writes only its own rows, so the results are the synchronous ones,
// bit for bit, whoever steps which copy.
//
// Workers pay off when a tick has more work than it costs to hand it out and to move
// the actions and results between CPUs, and when the machine has CPUs to spare (on a
// loaded machine, spinning takes turns from work). For environments as cheap as the
// cart-pole (about 40 ns a step) that is from several hundred copies; Env.StepDiscrete
// takes Discrete actions as integers, 8 bytes a copy to move where an agent.RawAction
// takes 56. A Multi moves more per copy (the observations gathered into groups, the
// copies' turns), so it needs dearer steps or more copies still.
//
// # Errors
//
// An error of one copy (its Reset or Step failed, it returned an observation of the
// wrong length, it panicked) comes as a *CopyError naming the copy and the operation
// (OpReset, OpStep), wrapping the cause, which errors.Is and errors.As reach; a panic
// is recovered into a *PanicError with its value and stack. Every copy is stepped even
// when another fails, and the errors of several copies are joined in copy order, so
// the same inputs give the same error whatever the number of workers.
//
// A failed Step is not undone: the copies that succeeded have stepped (and their rows
// hold their new results), the failed copy stays as its environment leaves a failed
// step (env.Env and env.MultiAgent promise: as it was), and the rows of failed copies
// hold stale values. So after a failure, Step returns ErrNotReset until Reset, which
// resets every copy. The same holds for a Step cut short by ctx: the workers check ctx
// before each copy and stop when it is done, leaving the rest unstepped, and Step
// returns an error wrapping ctx.Err(). A ctx already done when Step or Reset is called
// changes nothing: it returns ctx.Err() and the vector can go on. Errors of the
// arguments (ErrActions) and of policies change nothing either.
//
// # Batched policies
//
// A BatchPolicy chooses the actions of a Batch (rows of observations and masks, with
// the copy index of each row) in one call; BatchPolicyFunc adapts a function, and
// DiscretePolicy and DiscretePolicyFunc are the same for integer actions. PerCopy
// turns per-copy agent.Policy values into a BatchPolicy (row r asks the policy of copy
// Batch.Copies[r]), and RandomPerCopy builds random per-copy policies, each with its
// own seeded generator.
//
// # Hierarchical and multi-agent vectors
//
// Multi holds N copies of an env.MultiAgent, such as an hrl.Runtime. In a hierarchical
// environment different agents act in different copies at the same tick (the strategy
// agent in one, the motion agent in another), with different observation spaces, so
// Multi batches per agent name: after each Reset and Step, Groups holds one Group per
// agent, the copies it acts in (in copy order) with their acting agent ids and their
// observations and masks in contiguous rows. Act calls each acting agent's BatchPolicy
// once with its group, filling the group's Actions; Step steps every copy with the
// action at its row, auto-resets the copies whose episode is over and regroups:
//
//	err = m.Reset(ctx, seed)
//	for err == nil {
//		if err = m.Act(ctx, map[string]vector.BatchPolicy{"strategy": s, "motion": mo}); err == nil {
//			err = m.Step(ctx)
//		}
//		for i := range m.Len() {
//			for _, r := range m.Stepped(i).Reports { ... } // rewards, ends, spans, ids
//		}
//	}
//
// Per copy, Stepped(i) is the turn its Step returned (every agent reported in that
// step: rewards, terminated and truncated flags, spans, ids), Ended(i) whether the
// episode ended and the copy was reset, and Turn(i) where the copy now stands (after a
// reset, the new episode's first turn). The reports of an ended episode are copied out
// before the reset, so Stepped keeps them, but not the environment's typed
// observations: WithEpisodeEnd gives the caller the live final Turn, before the reset,
// to judge the episode (success, metrics) from them. All of these are views of buffers that the
// vector and the copies own, valid until the next Reset or Step: a trainer reads them
// without allocating. Auto-reset, seeds, workers and errors work as for Env.
//
// With workers, a Multi leaves little to the caller. The step phase counts, per chunk
// of copies, the copies each agent acts in; the caller turns those counts into each
// chunk's first row in each group (a pass over chunks and agents, not over copies);
// the gather, on the workers, gives every copy its row, in copy order, and copies its
// observation there. Act runs RandomPerCopy's policies (one generator per copy) on
// the workers too; any other BatchPolicy is the caller's. Spread runs a caller's own
// per-copy work (copying results into its buffers) on the workers, and Acting gives a
// copy's group and row. WithTiming measures the time of these phases: without
// workers, the rest of a tick is its serial fraction, which bounds what more workers
// can gain (Amdahl's law).
//
// # Concurrency and allocation
//
// Env and Multi are not safe for concurrent use: one goroutine calls their methods.
// Their workers are internal. In steady state Step allocates nothing when the copies
// and policies do not (Info aside, which WithFinalInfo calls and which may allocate);
// the package's tests assert it with testing.AllocsPerRun.
package vector
