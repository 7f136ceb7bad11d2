package hrl_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pure core: no I/O, no clock, no logging, no global random source, and none of
// the edge's dependencies (gRPC, Arrow), directly or indirectly.
var corePackages = []string{
	"github.com/batonrl/baton/spaces",
	"github.com/batonrl/baton/agent",
	"github.com/batonrl/baton/transitions",
	"github.com/batonrl/baton/env",
	"github.com/batonrl/baton/hrl",
}

// TestEnvBelowHRL keeps the layers pointing one way: env defines the multi-agent
// contract and hrl builds on it, so env never depends on hrl.
func TestEnvBelowHRL(t *testing.T) {
	for _, dep := range goList(t, "-deps", "-f", "{{.ImportPath}}", "github.com/batonrl/baton/env") {
		assert.NotEqual(t, "github.com/batonrl/baton/hrl", dep, "env depends on hrl")
	}
}

// forbiddenImport reports why the core may not import path directly, or "".
func forbiddenImport(path string) string {
	for _, root := range []string{"os", "net", "time", "log"} {
		if path == root || strings.HasPrefix(path, root+"/") {
			return "I/O, clocks and logging stay outside the core"
		}
	}
	if path == "math/rand" {
		return "math/rand has a global source; use math/rand/v2 with a generator the caller passes"
	}
	return ""
}

// forbiddenDep reports why the core may not depend on path at all, or "".
func forbiddenDep(path string) string {
	for _, root := range []string{"google.golang.org/grpc", "github.com/apache/arrow"} {
		if path == root || strings.HasPrefix(path, root+"/") || strings.HasPrefix(path, root+"-") {
			return "the core never reaches the edge's dependencies"
		}
	}
	return ""
}

// goList runs go list in the module and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(gobin, append([]string{"list"}, args...)...)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestPureCore(t *testing.T) {
	// .Imports lists the packages' own imports, test files left out.
	lines := goList(t, append([]string{"-f", `{{.ImportPath}} {{join .Imports " "}}`}, corePackages...)...)
	require.Len(t, lines, len(corePackages))
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		assert.NotEmpty(t, imports, "%s imports nothing? go list said %q", pkg, line)
		for _, imp := range imports {
			if why := forbiddenImport(imp); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
			if why := forbiddenDep(imp); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}

	deps := goList(t, append([]string{"-deps", "-f", "{{.ImportPath}}"}, corePackages...)...)
	require.Contains(t, deps, "github.com/batonrl/baton/hrl")
	require.Contains(t, deps, "go.uber.org/multierr", "go list -deps lists third-party dependencies")
	for _, dep := range deps {
		if why := forbiddenDep(dep); why != "" {
			t.Errorf("the core depends on %s: %s", dep, why)
		}
	}
}

// TestPurityRules checks the rules themselves, so that a typo cannot make the test pass.
func TestPurityRules(t *testing.T) {
	for _, path := range []string{"os", "os/exec", "net", "net/http", "time", "log", "log/slog", "math/rand"} {
		assert.NotEmpty(t, forbiddenImport(path), path)
	}
	for _, path := range []string{"fmt", "errors", "math/rand/v2", "osx", "netip", "timeline", "logic", "slices"} {
		assert.Empty(t, forbiddenImport(path), path)
	}
	for _, path := range []string{
		"google.golang.org/grpc", "google.golang.org/grpc/status", "github.com/apache/arrow/go/v15/arrow",
		"github.com/apache/arrow-go/v18/arrow", "github.com/apache/arrow-go/v18/arrow/ipc",
	} {
		assert.NotEmpty(t, forbiddenDep(path), path)
	}
	for _, path := range []string{"go.uber.org/multierr", "google.golang.org/protobuf", "github.com/apache/thrift"} {
		assert.Empty(t, forbiddenDep(path), path)
	}
}
