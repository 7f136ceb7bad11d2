// Package models is baton's model registry: trained models kept by name and version,
// each one bytes (an ONNX graph, a checkpoint) with metadata that says what it is for
// (the environment and agent, their spaces, the training run and its figures, a
// learning curve).
//
// What you touch here: call OpenDir (or NewRegistry over a Store of your own) to keep
// and fetch models; implement Store for another storage.
//
// # Storage
//
// A Store keeps versions; Dir, the default, keeps them under a directory, one folder
// per name and one per version:
//
//	DIR/maze-strategy/v000001/model    the bytes
//	DIR/maze-strategy/v000001/meta.json
//
// A version is written into a hidden temporary folder beside the others, synced, and
// renamed into place in one step, so a writer killed at any moment leaves every earlier
// version intact and no half-written one visible; two writers (in one process or
// several) never get the same version number. Every read checks the bytes against the
// SHA-256 recorded in the metadata and refuses corrupt ones with ErrCorrupt. A
// retention rule (WithKeep) deletes all but the newest versions of a name after each
// Put.
//
// # The registry
//
// A Registry wraps a Store and adds waiting for new versions (Wait), which the model
// service streams to watchers and acting policies follow to swap to a new version
// between episodes. References name a version as NAME@VERSION, NAME@latest or NAME
// (latest); ParseRef reads them.
//
// # Errors
//
// Bad input is an error naming what was wrong: ErrNotFound for a name or version the
// store does not have, ErrCorrupt for bytes whose checksum does not match, ErrInvalid
// for a malformed name, reference or metadata, and a *SpaceError when a model's spaces
// differ from the agent's it is meant for, naming both.
package models
