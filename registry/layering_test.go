package registry_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// What environments' authors and sinks import stays below the code that runs trials:
// each package of the table depends, directly or not, on none of the packages it
// names (docs/development.md, "Packages and who imports whom").
func TestLayering(t *testing.T) {
	const mod = "github.com/batonrl/baton/"
	for _, tc := range []struct {
		pkg     string
		without []string
	}{
		{"registry", []string{"runners", "event", "datalog"}},
		{"event", []string{"runners", "registry", "datalog"}},
		{"datalog", []string{"runners", "registry", "replay"}},
		{"telemetry", []string{"runners", "registry"}},
		{"internal/fastlane", []string{"runners"}},
		// capi reaches runners for one thing: the curricula's rules (runners.Schedule),
		// which Python's baton.schedule calls through the fast lane.
		{"capi", []string{"replay", "remote", "cli"}},
		{"envs/maze", []string{"runners", "datalog"}},
		{"envs/cartpole", []string{"runners", "datalog"}},
		{"envs/rps", []string{"runners", "datalog"}},
		{"envs/webtest", []string{"runners", "datalog"}},
		{"envs/catalog", []string{"runners", "datalog"}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			deps := goListDeps(t, mod+tc.pkg)
			require.Contains(t, deps, mod+tc.pkg, "go list -deps lists the package itself")
			for _, w := range tc.without {
				require.False(t, slices.Contains(deps, mod+w), "%s depends on %s", tc.pkg, w)
			}
		})
	}
}

// goListDeps returns the packages pkg depends on, test files left out.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.Fields(string(out))
}
