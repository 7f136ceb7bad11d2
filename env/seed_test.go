package env_test

import (
	"fmt"
	"testing"

	"github.com/batonrl/baton/env"
	"github.com/stretchr/testify/assert"
)

// TestDeriveSeedPinned pins values of the sequence: logs are replayed from the seeds it
// gives, so a change of the formula would make every recorded run unreplayable.
func TestDeriveSeedPinned(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		k    int
		want uint64
	}{
		{0, 0, 0x0},
		{0, 1, 0xe220a8397b1dcdaf}, // SplitMix64's first output for state 0
		{0, 2, 0x6e789e6aa1b965f4},
		{0, 3, 0x6c45d188009454f},
		{1, 0, 0x1},
		{1, 1, 0x910a2dec89025cc1},
		{1, 2, 0xbeeb8da1658eec67},
		{1, 3, 0xf893a2eefb32555e},
		{42, 0, 0x2a},
		{42, 1, 0xbdd732262feb6e95},
		{42, 2, 0x28efe333b266f103},
		{42, 3, 0x47526757130f9f52},
	} {
		t.Run(fmt.Sprintf("seed=%d/k=%d", tc.seed, tc.k), func(t *testing.T) {
			assert.Equal(t, tc.want, env.DeriveSeed(tc.seed, tc.k))
		})
	}
}

func TestDeriveSeedDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for seed := range uint64(50) {
		for k := range 50 {
			seen[env.DeriveSeed(seed, k)] = true
		}
	}
	assert.Len(t, seen, 50*50, "no two (seed, k) pairs collide here")
}
