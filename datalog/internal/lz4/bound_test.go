package lz4

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ContentBound bounds what a frame decodes to, for stored and compressed blocks and
// concatenated frames, and refuses frames cut short or not frames at all.
func TestContentBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 3*blockMax+100)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	zeros := make([]byte, 2*blockMax+7)
	var e Encoder
	for _, tc := range []struct {
		name  string
		frame []byte
		n     int
	}{
		{"empty", e.AppendFrame(nil, nil, 0), 0},
		{"stored", AppendStored(nil, random), len(random)},
		{"random", e.AppendFrame(nil, random, 0), len(random)},
		{"zeros", e.AppendFrame(nil, zeros, 0), len(zeros)},
		{"zeros by rows", e.AppendFrame(nil, zeros, 64), len(zeros)},
		{"two frames", e.AppendFrame(AppendStored(nil, random[:10]), zeros, 0), 10 + len(zeros)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bound, err := ContentBound(tc.frame)
			require.NoError(t, err)
			require.GreaterOrEqual(t, bound, int64(tc.n))
			require.LessOrEqual(t, bound, int64(255*len(tc.frame)+blockMax))
			dst := make([]byte, tc.n)
			require.NoError(t, NewReader().ReadFull(tc.frame, dst))
			for cut := 1; cut < len(tc.frame); cut += 1 + len(tc.frame)/50 {
				_, err := ContentBound(tc.frame[:cut])
				require.Error(t, err, "cut at %d", cut)
			}
		})
	}
	_, err := ContentBound(bytes.Repeat([]byte{1}, 16))
	require.ErrorContains(t, err, "magic")
}
