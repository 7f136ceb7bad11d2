// Command genabi writes python/baton/_lane/abi.py, the fast lane's C ABI as Python
// declares it, from the C header that cgo writes for package capi's exports (go tool
// cgo -exportheader): the Go signatures, with their cgo types, are the one place the
// ABI is written. Run from the module's root (scripts/generate runs it):
//
//	go run ./capi/internal/genabi          # writes the Python module
//	go run ./capi/internal/genabi -check   # fails when the committed module differs
//	go run ./capi/internal/genabi -header capi.h   # also keeps the header, for C callers
//
// Every exported function is named baton_*, and its parameter and result types are
// among the few the ctypes mapping knows (int32_t, int64_t, uint64_t, uintptr_t,
// _Bool, float, double and pointers); another type is an error here, not a surprise in
// Python.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const pkg = "github.com/batonrl/baton/capi"

func main() {
	out := flag.String("o", "python/baton/_lane/abi.py", "the Python module to write")
	check := flag.Bool("check", false, "write nothing; fail when the module differs from what would be written")
	header := flag.String("header", "", "also copy cgo's header to this file")
	flag.Parse()
	if err := run(*out, *check, *header); err != nil {
		fmt.Fprintln(os.Stderr, "genabi:", err)
		os.Exit(1)
	}
}

func run(out string, check bool, headerOut string) error {
	header, err := exportHeader()
	if err != nil {
		return err
	}
	if headerOut != "" {
		if err := os.WriteFile(headerOut, header, 0o644); err != nil {
			return err
		}
	}
	fns, err := parse(header)
	if err != nil {
		return err
	}
	src := render(fns)
	if !check {
		return os.WriteFile(out, src, 0o644)
	}
	old, err := os.ReadFile(out)
	if err != nil {
		return fmt.Errorf("%s: %w (run scripts/generate)", out, err)
	}
	if !bytes.Equal(old, src) {
		return fmt.Errorf("%s is not what package capi's exports declare (run scripts/generate)", out)
	}
	return nil
}

// exportHeader runs cgo on package capi's cgo files and returns the header it writes.
func exportHeader() ([]byte, error) {
	listed, err := exec.Command("go", "list", "-f", "{{.Dir}}{{range .CgoFiles}}\t{{.}}{{end}}", pkg).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w%s", pkg, err, stderr(err))
	}
	fields := strings.Split(strings.TrimSpace(string(listed)), "\t")
	if len(fields) < 2 {
		return nil, fmt.Errorf("go list %s: no cgo files", pkg)
	}
	tmp, err := os.MkdirTemp("", "genabi-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	h := filepath.Join(tmp, "capi.h")
	cmd := exec.Command("go", append([]string{"tool", "cgo", "-objdir", tmp, "-exportheader", h, "--"}, fields[1:]...)...)
	cmd.Dir = fields[0]
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go tool cgo: %w\n%s", err, b)
	}
	return os.ReadFile(h)
}

func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}

// fn is one exported function: its result type and parameters, C types spelled as
// cgo spells them ("int64_t*", "void**").
type fn struct {
	name   string
	result string
	params [][2]string // type, name
}

var (
	externRE = regexp.MustCompile(`^extern (.+?) ?\b(\w+)\((.*)\);$`)
	paramRE  = regexp.MustCompile(`^(.+?[\s*])(\w+)$`)
	scalars  = []string{"int32_t", "int64_t", "uint64_t", "uintptr_t", "_Bool", "float", "double", "char", "void"}
)

// ctype checks a C type that the ctypes mapping knows: a scalar, or pointers to one.
func ctype(t string) (string, error) {
	t = strings.ReplaceAll(t, " ", "")
	base := strings.TrimRight(t, "*")
	if !slices.Contains(scalars, base) || (base == "void" || base == "char") && base == t {
		return "", fmt.Errorf("type %q: the ABI takes %s, and pointers", t, strings.Join(scalars[:7], ", "))
	}
	return t, nil
}

// parse reads the exported functions named baton_* out of a cgo export header,
// sorted by name.
func parse(header []byte) ([]fn, error) {
	var fns []fn
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(header))
	for sc.Scan() {
		m := externRE.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil || !strings.HasPrefix(m[2], "baton_") {
			continue
		}
		f := fn{name: m[2]}
		res, err := ctype(m[1])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: result: %w", f.name, err))
		}
		f.result = res
		if m[3] != "void" && m[3] != "" {
			for _, p := range strings.Split(m[3], ",") {
				pm := paramRE.FindStringSubmatch(strings.TrimSpace(p))
				if pm == nil {
					errs = append(errs, fmt.Errorf("%s: parameter %q not understood", f.name, p))
					continue
				}
				t, err := ctype(pm[1])
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: parameter %s: %w", f.name, pm[2], err))
				}
				f.params = append(f.params, [2]string{t, pm[2]})
			}
		}
		fns = append(fns, f)
	}
	if len(fns) == 0 {
		errs = append(errs, errors.New("the header declares no baton_* function"))
	}
	slices.SortFunc(fns, func(a, b fn) int { return strings.Compare(a.name, b.name) })
	return fns, errors.Join(errs...)
}

const preamble = `# Code generated by capi/internal/genabi from the C header that cgo writes for package
# capi's exports; DO NOT EDIT. After changing an export: scripts/generate.
"""The fast lane's C ABI: every function that Go's package capi exports (the C
library of baton's environments, cmd/libbaton, and of a user's, cmd/libNAME), with
its C result and parameter types, and @@declare@@, which sets their ctypes on a
loaded library. capi's package documentation says what each function does.

Types map to ctypes as the C ABI has them: int32_t, int64_t, uint64_t, _Bool, float
and double to their ctypes; char* to c_char_p (bytes in, or a string buffer the
function writes); uintptr_t (a C function pointer) and every other pointer to
c_void_p, which takes an address (an int), None, a ctypes array or byref(x).

The module imports nothing of baton, so that a child process can load it by its path.

>>> import ctypes  # doctest: +SKIP
>>> lib = ctypes.CDLL(path)  # doctest: +SKIP
>>> declare(lib)  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes

# name: (result type, ((parameter type, parameter name), ...)), sorted by name.
FUNCTIONS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
`

const postamble = `}

_SCALARS = {
    "int32_t": ctypes.c_int32,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "uintptr_t": ctypes.c_void_p,
    "_Bool": ctypes.c_bool,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
}


def ctype(c: str) -> type:
    """The ctypes type of the C type c, as FUNCTIONS spells it ("int64_t*")."""
    if c == "char*":
        return ctypes.c_char_p
    if c.endswith("*"):
        return ctypes.c_void_p
    return _SCALARS[c]


def declare(lib: ctypes.CDLL) -> None:
    """Sets the result and argument types of every function of FUNCTIONS on lib;
    AttributeError (naming the function) when lib does not export one."""
    for name, (result, params) in FUNCTIONS.items():
        f = getattr(lib, name)
        f.restype = ctype(result)
        f.argtypes = [ctype(t) for t, _ in params]
`

// render writes the Python module of fns.
func render(fns []fn) []byte {
	var b bytes.Buffer
	b.WriteString(strings.ReplaceAll(preamble, "@@", "``"))
	for _, f := range fns {
		fmt.Fprintf(&b, "    %q: (%q, (", f.name, f.result)
		if len(f.params) == 0 {
			b.WriteString(")),\n")
			continue
		}
		b.WriteString("\n")
		line := "       "
		for _, p := range f.params {
			item := fmt.Sprintf(" (%q, %q),", p[0], p[1])
			if len(line)+len(item) > 92 {
				b.WriteString(line + "\n")
				line = "       "
			}
			line += item
		}
		b.WriteString(line + "\n    )),\n")
	}
	b.WriteString(postamble)
	return b.Bytes()
}
