package vector

import "github.com/batonrl/baton/env"

// EpisodeSeed returns the seed of episode k (0 for the episode Reset starts, then 1,
// 2, ... for the auto-resets) of copy i of a vector reset with seed:
//
//	s_i  = env.DeriveSeed(seed, i+1) = mix(seed + (i+1)·γ)
//	s_ik = env.DeriveSeed(s_i, k+1)  = mix(s_i + (k+1)·γ)
//
// where γ = 0x9E3779B97F4A7C15 and mix is SplitMix64's finaliser, all modulo 2^64 (see
// env.DeriveSeed). It depends on nothing else (not on the number of copies nor of
// workers), so copy i of a vector of any size replays the same episodes, and nearby
// seeds, copies and episodes give unrelated seeds.
func EpisodeSeed(seed uint64, i, k int) uint64 {
	return env.DeriveSeed(env.DeriveSeed(seed, i+1), k+1)
}
