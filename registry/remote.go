package registry

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"
)

// MaxConfigFileBytes bounds a file that a configuration names (ReadConfigFile,
// Remote.ReadFile): a larger one is refused by its size, unread.
const MaxConfigFileBytes = 64 << 20

// Limit is a bound an environment puts on the configurations that arrive over the
// network (Entry.OpenRemote): the side of a maze, the pages of a site. A server
// applies Default unless its operator gives another (Remote.Limits; baton serve's
// --env-limit ENV.LIMIT=N).
type Limit struct {
	// Name identifies the limit within its entry: not empty, without white space,
	// '.' or '='. Its full name is "ENV.NAME" (maze.side).
	Name string
	// Description says what is bounded, for help and errors: "rows or columns of a
	// map".
	Description string
	// Default is the bound when the operator gives none: 1 or more.
	Default int64
}

// Remote says what the configurations that arrive over the network may ask of a
// server (Registry.Remote, Entry.OpenRemote): the folder whose files they may name,
// and the bounds of the environments' Limits. Its zero value allows no file and keeps
// every limit at its default. A Remote is a value, safe for concurrent use; the
// registry's view (Registry.Remote) hands each entry's OpenRemote one that knows that
// entry's limits.
type Remote struct {
	// Dir is the folder whose files a configuration may name (webtest's site_file):
	// names are relative to it and resolved inside it through an os.Root, so that no
	// name reaches outside it, by `..` or by a symbolic link. "", the default, allows
	// no file at all.
	Dir string
	// Limits sets the bounds of the environments' Limits by full name ("maze.side",
	// "webtest.pages"), each 1 or more; a limit left out keeps its Default.
	Limits map[string]int64

	env    string           // the entry being opened, set by Open
	limits []Limit          // its limits
	bounds map[string]int64 // their bounds, by Limit.Name
}

// Open opens config for the entry e as a configuration from the network: with
// e.OpenRemote, given a Remote that knows e's limits, or with e.Open when e has no
// OpenRemote.
func (r Remote) Open(e *Entry, config []byte) (Factory, error) {
	if e.OpenRemote == nil {
		return e.Open(config)
	}
	r.env, r.limits = e.Name, e.Limits
	r.bounds = make(map[string]int64, len(e.Limits))
	for _, l := range e.Limits {
		b := l.Default
		if v, ok := r.Limits[e.Name+"."+l.Name]; ok {
			b = v
		}
		r.bounds[l.Name] = b
	}
	return e.OpenRemote(config, r)
}

// Limit returns the bound of the entry's limit name: the one Limits gives, else the
// limit's Default. It is 0, which refuses everything, for a name the entry does not
// declare, and in a Remote that Open did not pass.
func (r Remote) Limit(name string) int64 { return r.bounds[name] }

// Check returns nil when value is within the entry's limit name, and otherwise a
// *LimitError that names the limit, value, bound and how the operator raises it.
func (r Remote) Check(name string, value int64) error {
	b := r.Limit(name)
	if value <= b {
		return nil
	}
	e := &LimitError{Env: r.env, Limit: name, Value: value, Max: b}
	for _, l := range r.limits {
		if l.Name == name {
			e.Description = l.Description
		}
	}
	return e
}

// LimitError is a configuration from the network that asks for more than a limit of
// its environment allows. errors.Is matches it with ErrLimit.
type LimitError struct {
	// Env and Limit name the limit (maze, side); Description says what it bounds.
	Env, Limit, Description string
	// Value is what the configuration asks for, Max the bound.
	Value, Max int64
}

func (e *LimitError) Error() string {
	what := e.Limit
	if e.Description != "" {
		what += " (" + e.Description + ")"
	}
	return fmt.Sprintf("registry: %s: %d is more than %d, the limit %s.%s on configurations from the network; the server's operator raises it with --env-limit %s.%s=N",
		e.Env, e.Value, e.Max, e.Env, what, e.Env, e.Limit)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// FileError is a file that a configuration names and that cannot be used: missing,
// out of reach, not a regular file, too large, or named by a configuration from the
// network where the server allows no file. errors.Is matches it with ErrConfigFile.
type FileError struct {
	// Field is the configuration's field that names the file ("site_file"); Name
	// the name it gives.
	Field, Name string
	// Reason says what is wrong. For a configuration from the network it says
	// nothing of the server's files beyond the folder it allows (Remote.Dir).
	Reason string
	// Err is the cause, for a file read for a trusted caller (ReadConfigFile); nil
	// for one from the network, whose cause is not told.
	Err error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("registry: %s %q: %s", e.Field, e.Name, e.Reason)
}

// Unwrap returns ErrConfigFile and the cause, if any.
func (e *FileError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrConfigFile, e.Err}
	}
	return []error{ErrConfigFile}
}

// ReadConfigFile reads the file at path that the field of a configuration given by a
// trusted caller (a command line) names: a regular file of at most
// MaxConfigFileBytes. A FIFO, a device or a folder is refused without a read that
// might not end, and a larger file by its size, unread. Errors are *FileError values
// carrying the cause.
func ReadConfigFile(field, path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &FileError{Field: field, Name: path, Reason: "cannot be opened: " + err.Error(), Err: err}
	}
	defer f.Close()
	data, reason, err := readRegular(f)
	if reason != "" {
		return nil, &FileError{Field: field, Name: path, Reason: reason, Err: err}
	}
	return data, nil
}

// ReadFile reads the file name, relative to Dir, that the field of a configuration
// from the network names: a regular file inside Dir of at most MaxConfigFileBytes,
// opened through an os.Root so that neither `..` nor a symbolic link reaches outside
// Dir, and never a FIFO or a device, whose reads might not end. Errors are *FileError
// values whose Reason is the same for a file that is missing, unreadable or out of
// reach, so that a caller learns nothing of the server's files; without Dir, every
// name is refused.
func (r Remote) ReadFile(field, name string) ([]byte, error) {
	if r.Dir == "" {
		return nil, &FileError{Field: field, Name: name, Reason: "this server reads no file a configuration names (its operator allows a folder with --config-dir)"}
	}
	unusable := &FileError{Field: field, Name: name, Reason: "no readable regular file of that name in the server's configuration folder (names are relative to it)"}
	if name == "" || filepath.IsAbs(name) {
		return nil, unusable
	}
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, &FileError{Field: field, Name: name, Reason: "the server's configuration folder cannot be opened"}
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, unusable
	}
	defer f.Close()
	data, reason, _ := readRegular(f)
	switch reason {
	case "":
		return data, nil
	case notRegular, unreadable:
		return nil, unusable
	}
	return nil, &FileError{Field: field, Name: name, Reason: reason}
}

const (
	notRegular = "not a regular file"
	unreadable = "cannot be read"
)

// readRegular reads f, refusing what is not a regular file and what is larger than
// MaxConfigFileBytes; reason is "" on success.
func readRegular(f *os.File) (data []byte, reason string, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, unreadable, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular, nil
	}
	tooLarge := fmt.Sprintf("larger than %d bytes, the most a configuration's file may have", MaxConfigFileBytes)
	if st.Size() > MaxConfigFileBytes {
		return nil, tooLarge, nil
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxConfigFileBytes+1))
	if err != nil {
		return nil, unreadable, err
	}
	if len(data) > MaxConfigFileBytes { // it grew after Stat
		return nil, tooLarge, nil
	}
	return data, "", nil
}

// checkLimits reports the problems of an entry's Limits.
func checkLimits(limits []Limit, bad func(format string, args ...any)) {
	seen := map[string]bool{}
	for i, l := range limits {
		switch {
		case l.Name == "" || strings.ContainsFunc(l.Name, func(r rune) bool { return unicode.IsSpace(r) || r == '.' || r == '=' }):
			bad("limit #%d: the name must be non-empty without white space, '.' or '='", i)
		case seen[l.Name]:
			bad("limit %q is listed twice", l.Name)
		}
		seen[l.Name] = true
		if l.Default < 1 {
			bad("limit %q: Default is %d; want 1 or more", l.Name, l.Default)
		}
	}
}

// Remote returns a view of r for servers: the entries it looks up open their
// configurations as configurations from the network, with o (Remote.Open): Open
// calls their OpenRemote, so that a controller or a service built on the view
// never lets a caller name a server's file or exceed a limit. The view shares r's
// entries: one registered in either is in both. It returns an error for a limit
// of o.Limits that no entry of r declares (a *NameError wrapping ErrUnknownLimit),
// or one below 1.
func (r *Registry) Remote(o Remote) (*Registry, error) {
	if r.remote != nil {
		r = r.base
	}
	var known []string
	for e := range r.All() {
		for _, l := range e.Limits {
			known = append(known, e.Name+"."+l.Name)
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(o.Limits)) {
		switch {
		case !slices.Contains(known, name):
			errs = append(errs, &NameError{Kind: ErrUnknownLimit, Name: name, Choices: known})
		case o.Limits[name] < 1:
			errs = append(errs, fmt.Errorf("%w: %s is %d; want 1 or more", ErrLimit, name, o.Limits[name]))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	o.Limits = maps.Clone(o.Limits)
	return &Registry{base: r, remote: &o}, nil
}

// IsRemote reports whether r is a view made by Registry.Remote.
func (r *Registry) IsRemote() bool { return r.remote != nil }

// remoteEntry returns a copy of e whose Open opens as a configuration from the
// network.
func (r *Registry) remoteEntry(e *Entry) *Entry {
	c := *e
	o := *r.remote
	c.Open = func(config []byte) (Factory, error) { return o.Open(e, config) }
	return &c
}

// Sizer is an optional interface of a Factory that estimates the memory behind the
// environments it builds, so that a server counts a caller's session at its cost
// (remote's byte budgets). A server that finds none counts each environment as the
// float32 observations of its agents.
type Sizer interface {
	// Size returns about how many bytes the factory holds for all its environments
	// (a map, a site) and how many each environment it builds holds beyond them, its
	// observations included.
	Size() (shared, each int64)
}
