package datalog

import "errors"

// Errors of the package. Functions return them wrapped, with the names and values
// involved; match them with errors.Is.
var (
	// ErrOption: an option was given a value it does not take.
	ErrOption = errors.New("datalog: invalid option")
	// ErrClosed: a writer or dataset was used after Close.
	ErrClosed = errors.New("datalog: closed")
	// ErrEvent: an event does not fit the log: a step of an agent that the trial's
	// info does not describe, an observation or action of the wrong length, an action
	// space the log cannot hold.
	ErrEvent = errors.New("datalog: event does not fit the log")
	// ErrNotLog: a directory or file is not a baton log, or not one this package
	// reads (an unknown format version).
	ErrNotLog = errors.New("datalog: not a baton log")
	// ErrUnknownAgent: a log has no rows of the agent asked for.
	ErrUnknownAgent = errors.New("datalog: unknown agent")
	// ErrCorrupt: a part is damaged: its footer does not check or does not match its
	// batches, a batch's checksum differs, a length or offset reaches outside its
	// message. Its error names the file.
	ErrCorrupt = errors.New("datalog: corrupt part")
	// ErrLocked: the log's directory is being written by another writer (of the
	// same shard), or Recover met a writer; the error is a *LockedError.
	ErrLocked = errors.New("datalog: log is being written")
	// ErrUnlisted: a log's steps name trials that its trials table lacks (it was
	// truncated or lost), so Compare could not replay them.
	ErrUnlisted = errors.New("datalog: trials missing from the trials table")
	// ErrReplay: a trial of the log cannot be replayed (no environment of its name,
	// no trial info).
	ErrReplay = errors.New("datalog: cannot replay")
)
