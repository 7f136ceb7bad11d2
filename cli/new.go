package cli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// batonModule is baton's module path, which a starter module requires.
const batonModule = "github.com/batonrl/baton"

// starterFiles are the templates of a starter module (text/template, named FILE.tmpl;
// path elements NAME and libNAME take the module's name; gitignore is .gitignore).
//
//go:embed starter
var starterFiles embed.FS

func newNew() *cobra.Command {
	var o starterOptions
	cmd := &cobra.Command{
		Use:   "new DIR --module PATH",
		Short: "Write a starter module: an environment of your own, its test, command line, library and training script",
		Long: `new writes a Go module into DIR (a new or empty folder) that builds and passes its
tests at once: a small hierarchical environment (a planner that picks the key, the door
or the exit of a room, and a walker that walks there: two typed agents, a switching
machine, masks and rewards at both levels, how people see it, a text and SVG renderer),
its test (hrltest's contracts, the rules, the command line), cmd/NAME (baton's command
line over it), cmd/libNAME (the fast lane's library for Python), train.py (PPO from
Python) and a README. The root package is named after the module path's last element
(lower-cased, letters, digits and underscores kept; --name to choose another) and
exports Register(*registry.Registry) error, which both mains call; the environment is
registered under that name.

The module requires baton: the released version of this baton, or a checkout of baton
that go.mod replaces it with: --replace BATON_DIR, or else, for a development build of
baton, the checkout above the working directory. With a checkout, go.mod and go.sum
list baton's own requirements, so that the module builds from Go's module cache without
the network.`,
		Example: "  baton new ~/keydoor --module example.com/keydoor\n" +
			"  baton new ~/keydoor --module example.com/keydoor --replace ~/src/baton",
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("new needs the folder to write the module into (baton new DIR --module PATH)")
			case len(args) > 1:
				return usagef("new takes one folder, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			info, _ := debug.ReadBuildInfo()
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			s, err := planStarter(o, info, wd)
			if err != nil {
				return err
			}
			return s.write(cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&o.module, "module", "", "the new module's `PATH` (example.com/keydoor)")
	fl.StringVar(&o.replace, "replace", "", "the folder of a baton checkout, `BATON_DIR`, for go.mod to replace baton with")
	fl.StringVar(&o.name, "name", "", "the root package's `NAME`, and its environment's and commands' (default: from the module path)")
	return cmd
}

// starterOptions are baton new's arguments.
type starterOptions struct {
	dir, module, replace, name string
}

// starter is a module that baton new writes: the templates' data and what it requires.
type starter struct {
	Dir    string // the module's folder, absolute
	Module string // its module path
	Name   string // its root package's name, its environment's and its commands'
	named  string // how Name came about, for people

	version  string // the baton version required: a release, or the replaced checkout's placeholder
	replace  string // the baton checkout that go.mod replaces baton with; "" for a release
	why      string // how replace was found, for people
	batonGo  []byte // the checkout's go.mod and go.sum, when replace is set
	batonSum []byte

	files map[string][]byte // the files to write, by slash-separated path in Dir
}

// planStarter checks baton new's arguments and renders every file in memory: nothing
// is written before every check passed. info is the baton program's build information
// (its version) and wd the working directory (where a development build looks for its
// checkout).
func planStarter(o starterOptions, info *debug.BuildInfo, wd string) (*starter, error) {
	if o.module == "" {
		return nil, usagef("new needs --module PATH, the new module's path (example.com/keydoor)")
	}
	if err := module.CheckImportPath(o.module); err != nil {
		return nil, usagef("--module %q is not a module path: %v", o.module, err)
	}
	if o.module == batonModule || strings.HasPrefix(o.module, batonModule+"/") {
		return nil, usagef("--module %q is baton's own path; name a module of your own (example.com/keydoor)", o.module)
	}
	s := &starter{Module: o.module}
	if err := s.setName(o.name); err != nil {
		return nil, err
	}
	dir, err := emptyDir(o.dir, wd)
	if err != nil {
		return nil, err
	}
	s.Dir = dir
	if err := s.setBaton(o.replace, info, wd); err != nil {
		return nil, err
	}
	if err := s.render(); err != nil {
		return nil, err
	}
	return s, nil
}

// setName sets the package name: given, or derived from the module path's last element
// (the one before a major version suffix), lower-cased with every character but ASCII
// letters, digits and underscores left out.
func (s *starter) setName(given string) error {
	if given != "" {
		s.Name, s.named = given, "--name"
		if reason := badPackageName(given); reason != "" {
			return usagef("--name %q %s", given, reason)
		}
		return nil
	}
	prefix, _, ok := module.SplitPathVersion(s.Module)
	if !ok {
		prefix = s.Module
	}
	elem := path.Base(prefix)
	var b strings.Builder
	for _, r := range strings.ToLower(elem) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		}
	}
	s.Name = b.String()
	s.named = fmt.Sprintf("from the module path's last element %q", elem)
	if s.Name != elem {
		s.named += ", lower-cased, letters, digits and underscores kept"
	}
	if reason := badPackageName(s.Name); reason != "" {
		return usagef("the package name %q (%s) %s; pass --name NAME", s.Name, s.named, reason)
	}
	return nil
}

// badPackageName says why name cannot name the root package, its environment and its
// commands, or "" when it can.
func badPackageName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case name[0] < 'a' || name[0] > 'z':
		return "does not start with a lower-case letter"
	case strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "":
		return "holds characters other than lower-case letters, digits and underscores"
	case token.IsKeyword(name):
		return "is a Go keyword"
	case name == "main":
		return "is the name of a program's package, which no package can import"
	case strings.HasSuffix(name, "_test"):
		return "ends in _test, as only a test package's name does"
	}
	return ""
}

// emptyDir returns dir, absolute, when it does not exist or is an empty folder.
func emptyDir(dir, wd string) (string, error) {
	if dir == "" {
		return "", usagef("new needs a folder to write the module into")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(wd, dir)
	}
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dir, nil
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", usagef("%s is a file, not a folder: name a new or empty folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	if len(entries) > 0 {
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		more := ""
		if len(entries) > 3 {
			more = fmt.Sprintf(" and %d more", len(entries)-3)
		}
		return "", usagef("%s is not empty (it holds %s%s): name a new or empty folder", dir, strings.Join(names, ", "), more)
	}
	return dir, nil
}

// setBaton decides which baton the module requires: the checkout replace names; else
// this program's released version (info); else, for a development build, the checkout
// above wd.
func (s *starter) setBaton(replace string, info *debug.BuildInfo, wd string) error {
	if replace != "" {
		if !filepath.IsAbs(replace) {
			replace = filepath.Join(wd, replace)
		}
		return s.useCheckout(filepath.Clean(replace), "--replace")
	}
	version := "(devel)"
	if info != nil && info.Main.Path == batonModule && info.Main.Version != "" {
		version = info.Main.Version
	}
	if released(version) {
		s.version = version
		return nil
	}
	for d := wd; ; d = filepath.Dir(d) {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modfile.ModulePath(data) == batonModule {
			return s.useCheckout(d, "the checkout above the working directory, as this baton is a development build ("+version+")")
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return usagef("this baton is a development build (%s) and no checkout of baton is above the working directory, "+
		"so the module has no baton to require: pass --replace BATON_DIR, the folder of a baton checkout", version)
}

// released reports whether v is a released version of a module: a semantic version,
// neither a pseudo-version nor a build of modified sources (+dirty).
func released(v string) bool {
	return semver.IsValid(v) && !module.IsPseudoVersion(v) && semver.Build(v) == ""
}

// useCheckout makes go.mod replace baton with the checkout in dir, whose go.mod and
// go.sum give the module's requirements.
func (s *starter) useCheckout(dir, why string) error {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return usagef("--replace %s: %v; want the folder of a baton checkout", dir, err)
	}
	if p := modfile.ModulePath(gomod); p != batonModule {
		return usagef("--replace %s: its go.mod is module %q, not %s; want the folder of a baton checkout", dir, p, batonModule)
	}
	gosum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		return usagef("--replace %s: %v; want the folder of a baton checkout", dir, err)
	}
	// The version of a replaced module without one, as go mod tidy writes it.
	s.version, s.replace, s.why, s.batonGo, s.batonSum = "v0.0.0-00010101000000-000000000000", dir, why, gomod, gosum
	return nil
}

// render executes the templates, formats the Go files, and writes go.mod and go.sum,
// into s.files.
func (s *starter) render() error {
	s.files = map[string][]byte{}
	err := fs.WalkDir(starterFiles, "starter", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := starterFiles.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, s); err != nil {
			return err
		}
		out := s.outPath(p)
		data := b.Bytes()
		if strings.HasSuffix(out, ".go") {
			if data, err = format.Source(data); err != nil {
				return fmt.Errorf("the starter's %s does not format: %w", out, err)
			}
			if err := s.checkImports(out, data); err != nil {
				return err
			}
		}
		s.files[out] = data
		return nil
	})
	if err != nil {
		return err
	}
	gomod, err := s.goMod()
	if err != nil {
		return err
	}
	s.files["go.mod"] = gomod
	if s.replace != "" {
		s.files["go.sum"] = s.batonSum
	}
	return nil
}

// outPath is where the template p goes in the module.
func (s *starter) outPath(p string) string {
	elems := strings.Split(strings.TrimSuffix(strings.TrimPrefix(p, "starter/"), ".tmpl"), "/")
	for i, e := range elems {
		switch e {
		case "NAME":
			elems[i] = s.Name
		case "libNAME":
			elems[i] = "lib" + s.Name
		case "gitignore":
			elems[i] = ".gitignore"
		}
	}
	return path.Join(elems...)
}

// checkImports refuses a name that a file importing the module's root package imports
// under that name too (a package named cli beside baton's cli).
func (s *starter) checkImports(name string, src []byte) error {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
	if err != nil {
		return fmt.Errorf("the starter's %s does not parse: %w", name, err)
	}
	var others []string
	mine := false
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == s.Module {
			mine = true
			continue
		}
		local := path.Base(p)
		if prefix, _, ok := module.SplitPathVersion(p); ok && prefix != p {
			local = path.Base(prefix)
		}
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == s.Name {
			others = append(others, p)
		}
	}
	if mine && len(others) > 0 {
		return usagef("the package name %q (%s) is the name of %s, which %s imports beside it; pass --name NAME",
			s.Name, s.named, others[0], name)
	}
	return nil
}

// goRelease finds the language version (1.26) in a Go release's name (go1.26.8).
var goRelease = regexp.MustCompile(`\bgo(1\.[0-9]+)`)

// goMod returns the module's go.mod: baton required (and replaced by the checkout),
// with the checkout's go version and its requirements, so that go build needs nothing
// beyond the module cache; go mod tidy later drops those the module does not use.
func (s *starter) goMod() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "module %s\n\n", modfile.AutoQuote(s.Module))
	if s.replace == "" {
		// The language version of the Go that built this baton, which builds baton.
		if m := goRelease.FindStringSubmatch(runtime.Version()); m != nil {
			fmt.Fprintf(&b, "go %s\n\n", m[1])
		}
		fmt.Fprintf(&b, "require %s %s\n", batonModule, s.version)
		return b.Bytes(), nil
	}
	f, err := modfile.Parse(filepath.Join(s.replace, "go.mod"), s.batonGo, nil)
	if err != nil {
		return nil, usagef("--replace %s: its go.mod does not parse: %v", s.replace, err)
	}
	if f.Go != nil {
		fmt.Fprintf(&b, "go %s\n\n", f.Go.Version)
	}
	direct := []string{batonModule + " " + s.version}
	var indirect []string
	for _, r := range f.Require {
		line := modfile.AutoQuote(r.Mod.Path) + " " + r.Mod.Version
		if r.Mod.Path == "github.com/stretchr/testify" { // the starter's test imports it
			direct = append(direct, line)
		} else {
			indirect = append(indirect, line+" // indirect")
		}
	}
	slices.Sort(direct)
	slices.Sort(indirect)
	for _, block := range [][]string{direct, indirect} {
		b.WriteString("require (\n")
		for _, l := range block {
			b.WriteString("\t" + l + "\n")
		}
		b.WriteString(")\n\n")
	}
	fmt.Fprintf(&b, "replace %s => %s\n", batonModule, modfile.AutoQuote(s.replace))
	return b.Bytes(), nil
}

// write writes the files into s.Dir (made if missing) and tells w what it did and what
// comes next. A failure removes what it wrote.
func (s *starter) write(w io.Writer) (err error) {
	made := false
	if _, statErr := os.Stat(s.Dir); errors.Is(statErr, fs.ErrNotExist) {
		made = true
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range s.files {
			if !yield(n) {
				return
			}
		}
	})
	var written []string
	defer func() {
		if err == nil {
			return
		}
		if made {
			os.RemoveAll(s.Dir)
			return
		}
		for _, n := range slices.Backward(written) {
			os.Remove(filepath.Join(s.Dir, filepath.FromSlash(n)))
		}
	}()
	for _, n := range names {
		p := filepath.Join(s.Dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, s.files[n], 0o644); err != nil {
			return err
		}
		written = append(written, n)
	}
	fmt.Fprintf(w, "wrote module %s in %s: package %s (%s), environment %q\n", s.Module, s.Dir, s.Name, s.named, s.Name)
	if s.replace != "" {
		fmt.Fprintf(w, "baton: replaced by %s (%s)\n", s.replace, s.why)
	} else {
		fmt.Fprintf(w, "baton: %s %s\n", batonModule, s.version)
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintf(w, "next, in %s:\n", s.Dir)
	if s.replace == "" {
		fmt.Fprintf(w, "  go mod tidy                    # fetch baton %s and the test's testify, write go.sum\n", s.version)
	}
	cmds := [][2]string{
		{"go test ./...", "check the environment, its rules and its command line"},
		{fmt.Sprintf("go run ./cmd/%s run %s", s.Name, s.Name), "run a campaign of 1,000 trials"},
		{fmt.Sprintf("go run ./cmd/%s play %s", s.Name, s.Name), "play one episode, step by step"},
		{"python train.py", "train both agents with PPO (baton installed with its torch extra)"},
	}
	tw := newTable(w, 2)
	for _, c := range cmds {
		fmt.Fprintf(tw, "  %s\t# %s\n", c[0], c[1])
	}
	return tw.Flush()
}
