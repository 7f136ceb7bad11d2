package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   []fn
		err    string
	}{
		{name: "functions sorted, others left out", header: `
#include <stdint.h>
extern size_t _GoStringLen(_GoString_ s);
extern int64_t baton_live(void);
extern int32_t baton_reset(int64_t h, uint64_t seed, char* errbuf, int64_t errlen);
extern int32_t baton_view_reset(int64_t h, _Bool fresh, void** obs, uintptr_t fn);
`, want: []fn{
			{name: "baton_live", result: "int64_t"},
			{name: "baton_reset", result: "int32_t", params: [][2]string{{"int64_t", "h"}, {"uint64_t", "seed"}, {"char*", "errbuf"}, {"int64_t", "errlen"}}},
			{name: "baton_view_reset", result: "int32_t", params: [][2]string{{"int64_t", "h"}, {"_Bool", "fresh"}, {"void**", "obs"}, {"uintptr_t", "fn"}}},
		}},
		{name: "a type ctypes is not told", header: "extern int32_t baton_x(GoString s, int64_t n);\n", err: `baton_x: parameter s: type "GoString"`},
		{name: "a struct result", header: "extern struct baton_x_return baton_x(int64_t n);\n", err: "baton_x: result"},
		{name: "no functions", header: "extern int64_t other(void);\n", err: "no baton_* function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse([]byte(tt.header))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRenderIsPython(t *testing.T) {
	src := string(render([]fn{{name: "baton_live", result: "int64_t"}, {name: "baton_close", result: "int32_t", params: [][2]string{{"int64_t", "h"}}}}))
	assert.Contains(t, src, `"baton_live": ("int64_t", ()),`)
	assert.Contains(t, src, "    \"baton_close\": (\"int32_t\", (\n        (\"int64_t\", \"h\"),\n    )),\n")
	assert.Contains(t, src, "``declare``")
	assert.NotContains(t, src, "@@")
}
