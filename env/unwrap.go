package env

import "maps"

// As finds the first environment in the chain that starts at e and follows Unwrap
// methods (Unwrap() Env, Unwrap() MultiAgent or Unwrap() Parallel, as this package's
// wrappers, View and Sequential have), whose type is T, the way errors.As finds an error.
// It reports false when no environment in the chain is a T.
//
//	stats, ok := env.As[*env.Stats](wrapped)
//	rt, ok := env.As[*hrl.Runtime[maze.State, maze.Action]](view)
func As[T any](e any) (T, bool) {
	for e != nil {
		if t, ok := e.(T); ok {
			return t, true
		}
		switch u := e.(type) {
		case interface{ Unwrap() Env }:
			e = u.Unwrap()
		case interface{ Unwrap() MultiAgent }:
			e = u.Unwrap()
		case interface{ Unwrap() Parallel }:
			e = u.Unwrap()
		default:
			e = nil
		}
	}
	var zero T
	return zero, false
}

// InfoKeyEnv is the key under which a wrapper that adds entries to Info keeps an inner
// Info that is not a map[string]any.
const InfoKeyEnv = "env"

// infoMap returns a map to which a wrapper adds its Info entries, as Gymnasium's
// wrappers add keys to the info dict: a copy of inner if it is a map[string]any, else a
// new map holding inner (when not nil) under InfoKeyEnv.
func infoMap(inner any) map[string]any {
	switch in := inner.(type) {
	case map[string]any:
		if out := maps.Clone(in); out != nil {
			return out
		}
		return map[string]any{}
	case nil:
		return map[string]any{}
	default:
		return map[string]any{InfoKeyEnv: inner}
	}
}
