// Package replay re-runs the trials of an activity log and compares them with it:
// baton replay. It joins the two packages it sits on: datalog reads the log and
// compares each replayed step with its row (datalog.Compare), and runners runs the
// trials, each agent playing its logged actions. Keeping it apart keeps the log
// format free of the runner: datalog imports neither runners nor registry.
//
// # What a user may touch
//
// Run is the whole API: a log's directory and the registry of its environments in,
// a datalog.ReplayReport out, with datalog's options (datalog.WithAllocator,
// datalog.WithMaxMismatches). Another runner can replay a log the same way by handing
// datalog.Compare a datalog.PlayFunc of its own.
//
// # Concurrency
//
// Run may be called from several goroutines at once; each call runs its trials on a
// goroutine of its own and leaves none behind when it returns.
package replay
