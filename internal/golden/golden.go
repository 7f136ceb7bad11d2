// Package golden compares what a test produced with golden files under testdata, and
// rewrites them when the test binary runs with -update (`go test ./envs/maze
// -run TestRender -update`). A package whose tests import it must not define an
// -update flag of its own.
package golden

import (
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/batonrl/baton/env"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// File checks that the file at path holds got; with -update it writes got there first.
func File(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test -update writes the golden files")
	assert.Equal(t, string(want), got, path)
}

// Frame checks the forms of a drawn state against testdata/NAME.txt (the text),
// NAME.json (the scene as JSON, with a final newline) and NAME.svg. The SVG is checked
// when the frame has one or when NAME.svg exists, so a drawing that goes missing
// fails.
func Frame(t testing.TB, name string, f env.Frame) {
	t.Helper()
	scene, err := json.Marshal(f.Scene)
	require.NoError(t, err)
	base := filepath.Join("testdata", name)
	File(t, base+".txt", f.Text)
	File(t, base+".json", string(scene)+"\n")
	svg := base + ".svg"
	if _, err := os.Stat(svg); f.SVG != "" || !errors.Is(err, fs.ErrNotExist) {
		File(t, svg, f.SVG)
	}
}
