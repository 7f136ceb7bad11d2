package cli

import (
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
)

// repoRoot is the folder of this checkout of baton.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// starterPaths are the files baton new writes for the package keydoor.
var starterPaths = []string{
	".gitignore", "README.md", "agents.go", "cmd/keydoor/main.go", "cmd/libkeydoor/main.go",
	"env.go", "env_test.go", "go.mod", "go.sum", "register.go", "render.go", "train.py",
}

// baton new writes the module's files, its Go files formatted as gofmt formats them,
// a go.mod that requires baton and replaces it with the checkout, and the checkout's
// go.sum; the module vets (its test file included) from the module cache alone.
func TestNewWritesAModuleThatVets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kd")
	root := repoRoot(t)
	r := runArgs(t, "new", dir, "--module", "example.com/Key-Door", "--replace", root)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `package keydoor (from the module path's last element "Key-Door", lower-cased, letters, digits and underscores kept), environment "keydoor"`)
	assert.Contains(t, r.stdout, "baton: replaced by "+root+" (--replace)")
	assert.Contains(t, r.stdout, "go run ./cmd/keydoor run keydoor")

	var got []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	}))
	slices.Sort(got)
	assert.Equal(t, starterPaths, got)
	for _, p := range got {
		data, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		assert.NotContains(t, string(data), "{{", p)
		if strings.HasSuffix(p, ".go") {
			formatted, err := format.Source(data)
			require.NoError(t, err, p)
			assert.Equal(t, string(formatted), string(data), "%s is not gofmt-clean", p)
		}
	}
	main, err := os.ReadFile(filepath.Join(dir, "cmd/keydoor/main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(main), "os.Exit(cli.Main(keydoor.Register))")
	lib, err := os.ReadFile(filepath.Join(dir, "cmd/libkeydoor/main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(lib), "capi.Use(keydoor.Register)")

	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	f, err := modfile.Parse("go.mod", gomod, nil)
	require.NoError(t, err)
	assert.Equal(t, "example.com/Key-Door", f.Module.Mod.Path)
	require.Len(t, f.Replace, 1)
	assert.Equal(t, batonModule, f.Replace[0].Old.Path)
	assert.Equal(t, root, f.Replace[0].New.Path)
	direct := map[string]bool{}
	for _, req := range f.Require {
		if !req.Indirect {
			direct[req.Mod.Path] = true
		}
	}
	assert.Equal(t, map[string]bool{batonModule: true, "github.com/stretchr/testify": true}, direct)
	own, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	require.NoError(t, err)
	assert.Equal(t, string(own), string(sum))

	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: the module written is not vetted")
	}
	vet := exec.Command(goTool, "vet", "./...")
	vet.Dir = dir
	// Offline, and go.mod as written: nothing may need adding.
	vet.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off")
	out, err := vet.CombinedOutput()
	require.NoError(t, err, "go vet ./... in the module written:\n%s", out)
}

// Refused arguments are bad input (exit status 2) that say why, and write nothing.
func TestNewRefuses(t *testing.T) {
	root := repoRoot(t)
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "notes.txt"), nil, 0o644))
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string // after "new"; DIR is a new folder unless given
		want string
	}{
		{"no folder", nil, "new needs the folder to write the module into"},
		{"two folders", []string{"a", "b", "--module", "example.com/x"}, `new takes one folder, got ["a" "b"]`},
		{"no module", []string{"DIR"}, "new needs --module PATH"},
		{"a bad module path", []string{"DIR", "--module", "example.com/key door"}, `--module "example.com/key door" is not a module path`},
		{"baton's own path", []string{"DIR", "--module", "github.com/batonrl/baton/mine"}, "is baton's own path"},
		{"a folder that is not empty", []string{full, "--module", "example.com/keydoor"}, "is not empty (it holds notes.txt)"},
		{"a file", []string{file, "--module", "example.com/keydoor"}, "is a file, not a folder"},
		{"a name of no letters", []string{"DIR", "--module", "example.com/--"},
			`the package name "" (from the module path's last element "--", lower-cased, letters, digits and underscores kept) is empty; pass --name NAME`},
		{"a name that starts with a digit", []string{"DIR", "--module", "example.com/2d"}, `the package name "2d" (from the module path's last element "2d") does not start with a lower-case letter`},
		{"a keyword", []string{"DIR", "--module", "example.com/Type"}, `the package name "type" (from the module path's last element "Type", lower-cased, letters, digits and underscores kept) is a Go keyword`},
		{"main", []string{"DIR", "--module", "example.com/main"}, "which no package can import"},
		{"a name beside an import of that name", []string{"DIR", "--module", "example.com/tools/cli"},
			`the package name "cli" (from the module path's last element "cli") is the name of github.com/batonrl/baton/cli, which`},
		{"a bad --name", []string{"DIR", "--module", "example.com/keydoor", "--name", "Key"}, `--name "Key" does not start with a lower-case letter`},
		{"--replace of another module", []string{"DIR", "--module", "example.com/keydoor", "--replace", other},
			`its go.mod is module "example.com/other", not github.com/batonrl/baton`},
		{"--replace of no module", []string{"DIR", "--module", "example.com/keydoor", "--replace", filepath.Join(root, "cli")}, "want the folder of a baton checkout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new")
			args := []string{"new"}
			for _, a := range tc.args {
				if a == "DIR" {
					a = dir
				}
				args = append(args, a)
			}
			r := runArgs(t, args...)
			assert.Equal(t, 2, r.code, r.stderr)
			assert.Contains(t, r.stderr, tc.want)
			assert.Empty(t, r.stdout)
			assert.NoDirExists(t, dir)
			entries, err := os.ReadDir(full)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "the folder that was not empty is as it was")
		})
	}
}

// Without --replace, the module requires the released version of this baton; a
// development build (or a pseudo-version, or a build of modified sources) replaces
// baton with the checkout above the working directory, and without one asks for
// --replace.
func TestNewFindsBaton(t *testing.T) {
	root := repoRoot(t)
	build := func(version string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: batonModule, Version: version}}
	}
	opts := starterOptions{module: "example.com/keydoor", dir: filepath.Join(t.TempDir(), "kd")}

	s, err := planStarter(opts, build("v1.4.2"), t.TempDir())
	require.NoError(t, err)
	gomod := string(s.files["go.mod"])
	assert.Contains(t, gomod, "\nrequire github.com/batonrl/baton v1.4.2\n")
	assert.NotContains(t, gomod, "replace")
	assert.NotContains(t, s.files, "go.sum", "go mod tidy fetches the sums of a release")
	f, err := modfile.Parse("go.mod", s.files["go.mod"], nil)
	require.NoError(t, err, gomod)
	assert.Regexp(t, `^1\.[0-9]+$`, f.Go.Version)

	for _, v := range []string{"(devel)", "v0.0.0-20260101000000-abcdefabcdef", "v1.4.2+dirty", ""} {
		s, err := planStarter(opts, build(v), filepath.Join(root, "cli", "testdata"))
		require.NoError(t, err, v)
		assert.Equal(t, root, s.replace, v)
		assert.Contains(t, s.why, "the checkout above the working directory", v)
		assert.Contains(t, string(s.files["go.mod"]), "replace github.com/batonrl/baton => "+root+"\n", v)

		_, err = planStarter(opts, build(v), t.TempDir())
		require.Error(t, err, v)
		assert.True(t, isUsage(err))
		assert.Contains(t, err.Error(), "pass --replace BATON_DIR, the folder of a baton checkout")
	}
	s, err = planStarter(opts, nil, filepath.Join(root, "cli"))
	require.NoError(t, err, "no build information: a development build")
	assert.Equal(t, root, s.replace)
}
