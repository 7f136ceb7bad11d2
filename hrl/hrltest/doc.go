// Package hrltest checks that a user's hierarchical environment keeps the contracts the
// runtime and the rest of baton rely on, in the spirit of Gymnasium's environment
// checker and testing/fstest.
//
// What you touch here: call Check from your environment's tests (or Run for the
// problems as one error); implement nothing.
//
// # What it checks
//
// Run plays seeded episodes with random policies that honour action masks and reports
// every problem found: observations outside their spaces, agent ids that break the
// "<name>_<k>" rule, parent ids that name no agent in control, rewards that are not
// finite, results that disagree with themselves (Next not reported, Over while an agent
// is still going), trajectories that differ for the same seed and actions, and invalid
// actions (from an agent not acting, outside the action space, after the end) that are
// accepted or that change what happens next. Actions an agent's mask rules out are tried
// too: the environment may accept them (a mask is advice), but one it rejects must
// change nothing. The switching machine must validate. A panic in the environment's
// code is recovered and reported with its stack, and ends the check.
//
// An agent must not take control already done: a sub-episode takes at least one
// action, so such an agent acts once anyway and its Done is asked again only after that
// action (a walker sent to the tile it stands on steps away and back). Run reports it,
// with Runtime.AgentDone, naming the agent, the tick and the action that handed it
// control, and the remedies: the parent refuses that action in its DecodeAction (and
// masks it), or the agent returns control at once (agent.AtOnceReturner). The initial
// agent done at reset is reported too; it always acts, whatever it implements. Like
// every check here, this one sees only the states the random policies reach: give it
// enough episodes (the zero Options play 20).
//
// # Using it
//
// Check runs Run from a test and reports its problems as test errors:
//
//	func TestMyEnv(t *testing.T) {
//		hrltest.Check(t, func() hrl.HierarchicalEnv[State, Action] { return newMyEnv() }, hrltest.Options{})
//	}
//
// newEnv is called twice per episode (a second environment plays the same episode
// without the invalid actions, and both must agree), and each call must build an equal
// environment. The first is stepped with hrl.Config.NoInPlace, through the agents'
// Agent methods and the environment's Step, the second through what they implement of
// agent.InPlace, agent.StepperMaker and hrl.InPlaceStepper, so that any of those that
// disagrees with the methods shows. Options'
// zero value means defaults: 20 episodes of at most 10000 ticks, seeds 0, 1, ...
//
// # Concurrency
//
// Run and Check start no goroutine; distinct calls may run at once when the
// environments newEnv builds share no mutable state.
package hrltest
