package vector

// gamma is the golden-ratio increment of SplitMix64.
const gamma = 0x9e3779b97f4a7c15

// mix is the SplitMix64 finaliser (Steele, Lea and Flood), a bijection of uint64 that
// scatters nearby inputs.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// EpisodeSeed returns the seed of episode k (0 for the episode Reset starts, then 1,
// 2, ... for the auto-resets) of copy i of a vector reset with seed:
//
//	s_i  = mix(seed + (i+1)·γ)
//	s_ik = mix(s_i + (k+1)·γ)
//
// where γ = 0x9E3779B97F4A7C15 and mix is SplitMix64's finaliser, all modulo 2^64. It
// depends on nothing else (not on the number of copies nor of workers), so copy i of a
// vector of any size replays the same episodes, and nearby seeds, copies and episodes
// give unrelated seeds.
func EpisodeSeed(seed uint64, i, k int) uint64 {
	return mix(mix(seed+uint64(i+1)*gamma) + uint64(k+1)*gamma)
}
