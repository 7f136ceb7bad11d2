package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Store keeps versions of models. Implementations are safe for concurrent use.
type Store interface {
	// Put stores data as the next version of meta.Name and returns its metadata with
	// Version, SHA256, Size and Created filled in. A Put that fails or is interrupted
	// leaves every stored version as it was.
	Put(ctx context.Context, meta Meta, data []byte) (Meta, error)
	// Get returns a version (Latest: the newest) and its bytes, checked against the
	// recorded checksum.
	Get(ctx context.Context, name string, version int) (Meta, []byte, error)
	// Stat returns a version's metadata without reading its bytes.
	Stat(ctx context.Context, name string, version int) (Meta, error)
	// List returns the metadata of name's versions, oldest first, or of every name's
	// newest version (sorted by name) when name is "".
	List(ctx context.Context, name string) ([]Meta, error)
}

// Dir is a Store under a directory (see the package documentation for its layout).
// It is safe for concurrent use, by several processes too.
type Dir struct {
	root string
	keep int
	now  func() time.Time
}

// DirOption configures a Dir.
type DirOption func(*Dir)

// WithKeep keeps only the newest n versions of each name, deleting older ones after
// each Put. Zero (the default) keeps every version.
func WithKeep(n int) DirOption { return func(d *Dir) { d.keep = n } }

// WithClock sets the clock that stamps Created; zero means time.Now.
func WithClock(now func() time.Time) DirOption { return func(d *Dir) { d.now = now } }

// OpenDir returns the Dir under root, creating the directory if needed.
func OpenDir(root string, opts ...DirOption) (*Dir, error) {
	d := &Dir{root: root, now: time.Now}
	for _, o := range opts {
		o(d)
	}
	if d.keep < 0 {
		return nil, &InvalidError{Field: "keep", Value: strconv.Itoa(d.keep), Reason: "negative"}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	return d, nil
}

// Root returns the directory the store keeps its models under.
func (d *Dir) Root() string { return d.root }

const (
	dataFile = "model"
	metaFile = "meta.json"
)

// beforeCommit, when set (by tests), runs after a version is written to its temporary
// folder and before it is renamed into place.
var beforeCommit func(tmp string)

func versionDir(v int) string { return fmt.Sprintf("v%06d", v) }

// versions returns name's stored versions, ascending.
func (d *Dir) versions(name string) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(d.root, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	var vs []int
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || len(n) < 2 || n[0] != 'v' {
			continue
		}
		if v, err := strconv.Atoi(n[1:]); err == nil && v > 0 {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs, nil
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, meta Meta, data []byte) (Meta, error) {
	if err := CheckName(meta.Name); err != nil {
		return Meta{}, err
	}
	if err := ctx.Err(); err != nil {
		return Meta{}, err
	}
	sum := sha256.Sum256(data)
	meta.SHA256 = hex.EncodeToString(sum[:])
	meta.Size = int64(len(data))
	meta.Created = d.now().UTC()
	dir := filepath.Join(d.root, meta.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Meta{}, fmt.Errorf("models: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".put-")
	if err != nil {
		return Meta{}, fmt.Errorf("models: %w", err)
	}
	defer os.RemoveAll(tmp) // gone after a successful rename; a failed Put's leftovers
	if err := writeSynced(filepath.Join(tmp, dataFile), data); err != nil {
		return Meta{}, err
	}
	for {
		vs, err := d.versions(meta.Name)
		if err != nil {
			return Meta{}, err
		}
		meta.Version = 1
		if len(vs) > 0 {
			meta.Version = vs[len(vs)-1] + 1
		}
		js, err := json.MarshalIndent(meta, "", "  ")
		if err != nil {
			return Meta{}, &InvalidError{Field: "meta", Value: meta.Name, Reason: err.Error()}
		}
		if err := writeSynced(filepath.Join(tmp, metaFile), js); err != nil {
			return Meta{}, err
		}
		if beforeCommit != nil {
			beforeCommit(tmp)
		}
		// Renaming a folder onto a non-empty one fails, so of two writers that chose
		// the same number one wins and the other tries the next.
		err = os.Rename(tmp, filepath.Join(dir, versionDir(meta.Version)))
		if err == nil {
			break
		}
		if _, serr := os.Stat(filepath.Join(dir, versionDir(meta.Version))); serr != nil {
			return Meta{}, fmt.Errorf("models: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return Meta{}, err
		}
	}
	syncDir(dir)
	if d.keep > 0 {
		if vs, err := d.versions(meta.Name); err == nil && len(vs) > d.keep {
			for _, v := range vs[:len(vs)-d.keep] {
				old := filepath.Join(dir, versionDir(v))
				// Rename first so a reader never sees a half-deleted version.
				gone := filepath.Join(dir, ".del-"+versionDir(v))
				if os.Rename(old, gone) == nil {
					os.RemoveAll(gone)
				}
			}
		}
	}
	return meta, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	return nil
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// resolve turns Latest into name's newest version.
func (d *Dir) resolve(name string, version int) (int, error) {
	if err := CheckName(name); err != nil {
		return 0, err
	}
	if version < 0 {
		return 0, &InvalidError{Field: "version", Value: strconv.Itoa(version), Reason: "negative"}
	}
	vs, err := d.versions(name)
	if err != nil {
		return 0, err
	}
	if len(vs) == 0 {
		return 0, &NotFoundError{Name: name}
	}
	if version == Latest {
		return vs[len(vs)-1], nil
	}
	if _, ok := slices.BinarySearch(vs, version); !ok {
		return 0, &NotFoundError{Name: name, Version: version}
	}
	return version, nil
}

// Stat implements Store.
func (d *Dir) Stat(ctx context.Context, name string, version int) (Meta, error) {
	if err := ctx.Err(); err != nil {
		return Meta{}, err
	}
	v, err := d.resolve(name, version)
	if err != nil {
		return Meta{}, err
	}
	return d.readMeta(name, v)
}

func (d *Dir) readMeta(name string, v int) (Meta, error) {
	b, err := os.ReadFile(filepath.Join(d.root, name, versionDir(v), metaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, &NotFoundError{Name: name, Version: v} // deleted by retention meanwhile
	}
	if err != nil {
		return Meta{}, fmt.Errorf("models: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, &CorruptError{Name: name, Version: v, Reason: metaFile + ": " + err.Error()}
	}
	if m.Name != name || m.Version != v {
		return Meta{}, &CorruptError{Name: name, Version: v, Reason: fmt.Sprintf("%s names %s", metaFile, m.Ref())}
	}
	return m, nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, name string, version int) (Meta, []byte, error) {
	m, err := d.Stat(ctx, name, version)
	if err != nil {
		return Meta{}, nil, err
	}
	data, err := os.ReadFile(filepath.Join(d.root, name, versionDir(m.Version), dataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, nil, &CorruptError{Name: name, Version: m.Version, Reason: "the model's bytes are missing"}
	}
	if err != nil {
		return Meta{}, nil, fmt.Errorf("models: %w", err)
	}
	if err := m.Verify(data); err != nil {
		return Meta{}, nil, err
	}
	return m, data, nil
}

// Verify returns a *CorruptError if data's size or SHA-256 differ from the metadata's.
func (m Meta) Verify(data []byte) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != m.SHA256 || int64(len(data)) != m.Size {
		return &CorruptError{Name: m.Name, Version: m.Version,
			Reason: fmt.Sprintf("%d bytes with sha256 %s, metadata says %d bytes with sha256 %s", len(data), short(got), m.Size, short(m.SHA256))}
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// List implements Store.
func (d *Dir) List(ctx context.Context, name string) ([]Meta, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name != "" {
		if err := CheckName(name); err != nil {
			return nil, err
		}
		vs, err := d.versions(name)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			return nil, &NotFoundError{Name: name}
		}
		out := make([]Meta, 0, len(vs))
		for _, v := range vs {
			m, err := d.readMeta(name, v)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	ents, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	var out []Meta
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || CheckName(e.Name()) != nil {
			continue
		}
		m, err := d.Stat(ctx, e.Name(), Latest)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// DefaultDir is the directory models are kept under when none is named:
// $BATON_MODELS if set, else $XDG_DATA_HOME/baton/models, else
// ~/.local/share/baton/models. Python's baton.models uses the same.
func DefaultDir() (string, error) {
	if d := os.Getenv("BATON_MODELS"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "baton", "models"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("models: no directory for models (set BATON_MODELS): %w", err)
	}
	return filepath.Join(home, ".local", "share", "baton", "models"), nil
}
