package models

// SetBeforeCommit sets the hook that runs before a version is renamed into place.
func SetBeforeCommit(f func(tmp string)) { beforeCommit = f }
