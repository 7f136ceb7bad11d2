package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot"
)

// labels returns the labelled ticks' labels.
func labels(ts []plot.Tick) []string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// TestPlotTicks checks the axes of baton inspect --plot: episodes in whole numbers,
// and values labelled with the decimals that tell them apart.
func TestPlotTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		want   []string
	}{
		{"one episode", integerTicks{}, 0, 2, []string{"0", "1", "2"}},
		{"ten episodes", integerTicks{}, 0, 11, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}},
		{"many episodes", integerTicks{}, 0, 301, []string{"0", "100", "200", "300"}},
		{"returns near 6", distinctTicks{}, 5.89, 6.02, []string{"5.90", "5.95", "6.00"}},
		{"returns of a unit range", distinctTicks{}, -0.5, 0.5, []string{"-0.5", "0.0", "0.5"}},
		{"whole returns", distinctTicks{}, 0, 30, []string{"0", "10", "20", "30"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := labels(tc.ticker.Ticks(tc.lo, tc.hi))
			assert.Equal(t, tc.want, got)
			seen := map[string]bool{}
			for _, l := range got {
				assert.False(t, seen[l], "label %q twice", l)
				seen[l] = true
			}
		})
	}
}
