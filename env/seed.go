package env

// DeriveSeed returns the k-th seed of a deterministic sequence derived from seed: seed
// itself for k = 0, then SplitMix64's output for the state seed + k·γ,
//
//	DeriveSeed(seed, 0) = seed
//	DeriveSeed(seed, k) = mix(seed + k·γ)
//
// where γ = 0x9E3779B97F4A7C15 and mix is SplitMix64's finaliser (Steele, Lea and
// Flood), all modulo 2^64: nearby seeds and indexes give unrelated seeds, and the
// sequences of nearby seeds do not overlap in practice.
//
// It is baton's one derivation of seeds, and logs are replayed from the seeds it
// gives, so its values never change: View.Reset seeds its k-th underlying reset with
// DeriveSeed(seed, k); a runners trial of seed s resets episode e with DeriveSeed(s, e),
// and a campaign of seed s gives trial i the seed DeriveSeed(s, i) (so the first
// episode of the first trial of seed s resets with s, as `baton play --seed s` does);
// package vector gives episode k of copy i of a vector reset with seed the seed
// DeriveSeed(DeriveSeed(seed, i+1), k+1) (vector.EpisodeSeed).
func DeriveSeed(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	z := seed + uint64(k)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
