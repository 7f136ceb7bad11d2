package capi

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/batonrl/baton/registry"
)

// Errors of the library's registry, reported by every call of the C ABI with code 1
// (configuration), the way a bad environment name is.
var (
	// ErrNoRegistry: the library's main package never called Use.
	ErrNoRegistry = errors.New("capi: no environments: the library's main package calls capi.Use(register...) " +
		"before the first call (func init() { capi.Use(mypkg.Register) })")
	// ErrUse: Use called twice, with no function or a nil one, or after the registry
	// was built.
	ErrUse = errors.New("capi: Use misused")
	// ErrRegister: a register function failed, such as two registering one name.
	ErrRegister = errors.New("capi: registering the environments failed")
)

// lib is the library's registry: a C library has nowhere else to keep it.
var lib builder

// Use sets the register functions that build the library's registry: each is called,
// in order, on one new registry.Registry at the library's first call (or Registry's).
// A library's main package calls it once, from its init function, before anything can
// call the library:
//
//	func init() { capi.Use(keydoor.Register) }
//
// Use returns nothing and never panics, since a panic while a library loads would end
// the process that loads it (Python, say) without a word: misuse is an error wrapping
// ErrUse that every call of the library then reports, as it reports a register
// function's error (wrapping ErrRegister) and a library given no Use (ErrNoRegistry).
// Misuse is a second Use, a Use with no function or with a nil one, and a Use after
// the registry was built. Use is safe for concurrent use.
func Use(register ...func(*registry.Registry) error) { lib.use(register) }

// Registry returns the registry the library's calls use, built at the first call of
// either (see Use), and the error that every call reports instead when there is none.
// A user's Go test can call it to check what the library will hold. The registry is
// shared by every call: the caller must not register more into it. Safe for
// concurrent use.
func Registry() (*registry.Registry, error) { return lib.get() }

// builder is the registry builder that Use sets and its result, built once.
type builder struct {
	mu       sync.Mutex
	register []func(*registry.Registry) error
	set      bool
	built    bool
	misuse   error
	reg      *registry.Registry
	err      error
}

func (r *builder) use(register []func(*registry.Registry) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.misuse != nil {
		return
	}
	switch {
	case r.built:
		r.misuse = fmt.Errorf("%w: Use(%s) after the library's first call built its registry; call Use from the main package's init",
			ErrUse, funcNames(register))
	case r.set:
		r.misuse = fmt.Errorf("%w: Use called twice, with %s and then %s; call it once, with every register function",
			ErrUse, funcNames(r.register), funcNames(register))
	case len(register) == 0:
		r.misuse = fmt.Errorf("%w: Use() given no register function", ErrUse)
	default:
		if i := slices.IndexFunc(register, func(f func(*registry.Registry) error) bool { return f == nil }); i >= 0 {
			r.misuse = fmt.Errorf("%w: Use's register function %d of %d is nil", ErrUse, i+1, len(register))
		}
	}
	r.register, r.set = slices.Clone(register), true
}

func (r *builder) get() (*registry.Registry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.misuse != nil {
		return nil, r.misuse
	}
	if !r.built {
		r.built = true
		if !r.set {
			r.err = ErrNoRegistry
		} else {
			r.reg, r.err = build(r.register)
		}
	}
	return r.reg, r.err
}

// build calls the register functions on a new registry. A name registered twice is
// a *registry.DuplicateError, which names both registrations.
func build(register []func(*registry.Registry) error) (*registry.Registry, error) {
	reg := registry.New()
	for _, f := range register {
		if err := f(reg); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrRegister, funcName(f), err)
		}
	}
	return reg, nil
}

// funcName is a function's name as Go's runtime knows it
// ("github.com/batonrl/baton/envs/maze.Register").
func funcName(f func(*registry.Registry) error) string {
	if f == nil {
		return "nil"
	}
	if fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer()); fn != nil {
		return fn.Name()
	}
	return "a register function"
}

func funcNames(fs []func(*registry.Registry) error) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = funcName(f)
	}
	return "(" + strings.Join(names, ", ") + ")"
}
