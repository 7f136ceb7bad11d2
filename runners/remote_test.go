package runners_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileConfig is the configuration of fileEntry: a file to read and a size.
type fileConfig struct {
	File string `json:"file"`
	Size int64  `json:"size"`
}

// fileFactory is what fileEntry opens: the file's bytes, and where they came from.
type fileFactory struct {
	data   []byte
	remote bool
}

func (f *fileFactory) NewEnv(registry.EnvOptions) (env.MultiAgent, error) {
	return registry.SingleAgent(&counter{cfg: counterConfig{Length: 1}}), nil
}

// fileEntry is an environment whose configuration names a file and a size, bounded
// by the limit "size" for configurations from the network.
func fileEntry() registry.Entry {
	e := counterEntry()
	e.Name = "files"
	parse := func(config []byte) (fileConfig, error) {
		var c fileConfig
		return c, registry.DecodeConfig(config, &c)
	}
	e.Open = func(config []byte) (registry.Factory, error) {
		c, err := parse(config)
		if err != nil || c.File == "" {
			return &fileFactory{}, err
		}
		data, err := registry.ReadConfigFile("file", c.File)
		return &fileFactory{data: data}, err
	}
	e.OpenRemote = func(config []byte, o registry.Remote) (registry.Factory, error) {
		c, err := parse(config)
		if err != nil {
			return nil, err
		}
		if err := o.Check("size", c.Size); err != nil {
			return nil, err
		}
		f := &fileFactory{remote: true}
		if c.File != "" {
			f.data, err = o.ReadFile("file", c.File)
		}
		return f, err
	}
	e.Limits = []registry.Limit{{Name: "size", Description: "the size asked for", Default: 10}}
	return e
}

// within calls f and fails the test when it has not returned within a few seconds: a
// read that never ends (a FIFO, /dev/zero) must fail the test, not hang it.
func within[T any](t *testing.T, f func() (T, error)) (T, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		t.Fatal("no answer within the deadline: the read does not end")
		var zero T
		return zero, nil
	}
}

// files makes a folder for the tests of reads: a site, a FIFO, links out of it and a
// file larger than MaxConfigFileBytes (sparse), and a secret outside it.
func files(t *testing.T) (dir, secret string) {
	t.Helper()
	dir, outside := t.TempDir(), t.TempDir()
	secret = filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("hunter2"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "site.json"), []byte(`{"pages": []}`), 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	t.Cleanup(func() { // a reader stuck in its open gets to its end
		if f, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_RDWR, 0); err == nil {
			_ = f.Close()
		}
	})
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "secret-link")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero-link")))
	require.NoError(t, os.Symlink("site.json", filepath.Join(dir, "site-link")))
	big, err := os.Create(filepath.Join(dir, "big"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(registry.MaxConfigFileBytes+1))
	require.NoError(t, big.Close())
	return dir, secret
}

// TestReadConfigFile: a trusted caller's file is read from its path, as long as it
// is a regular file of bounded size: a FIFO, /dev/zero and a folder are refused at
// once, a larger file by its size, each a *FileError with its cause.
func TestReadConfigFile(t *testing.T) {
	dir, secret := files(t)
	data, err := within(t, func() ([]byte, error) { return registry.ReadConfigFile("file", secret) })
	require.NoError(t, err, "a trusted caller names any path")
	assert.Equal(t, "hunter2", string(data))
	for _, tt := range []struct {
		name, path, reason string
		is                 error
	}{
		{"fifo", filepath.Join(dir, "fifo"), "not a regular file", nil},
		{"dev zero", "/dev/zero", "not a regular file", nil},
		{"link to dev zero", filepath.Join(dir, "zero-link"), "not a regular file", nil},
		{"folder", dir, "not a regular file", nil},
		{"too large", filepath.Join(dir, "big"), "larger than 67108864 bytes", nil},
		{"missing", filepath.Join(dir, "missing"), "cannot be opened", fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := within(t, func() ([]byte, error) { return registry.ReadConfigFile("file", tt.path) })
			require.ErrorIs(t, err, registry.ErrConfigFile)
			fe, ok := errors.AsType[*registry.FileError](err)
			require.True(t, ok)
			assert.Equal(t, "file", fe.Field)
			assert.Equal(t, tt.path, fe.Name)
			assert.Contains(t, err.Error(), tt.reason)
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
		})
	}
}

// TestRemoteReadFile: a configuration from the network names files inside Dir only,
// through an os.Root: a FIFO, /dev/zero, `..` and links out are refused at once with
// one message, the same as a missing file's, which tells nothing of the server's
// files; without Dir every name is refused.
func TestRemoteReadFile(t *testing.T) {
	dir, secret := files(t)
	rel, err := filepath.Rel(dir, secret)
	require.NoError(t, err)
	o := registry.Remote{Dir: dir}
	for _, name := range []string{"site.json", "site-link", "./site.json"} {
		data, err := within(t, func() ([]byte, error) { return o.ReadFile("file", name) })
		require.NoError(t, err, name)
		assert.Equal(t, `{"pages": []}`, string(data))
	}
	unusable := "no readable regular file of that name in the server's configuration folder"
	for _, name := range []string{"fifo", "zero-link", "/dev/zero", "secret-link", rel, secret, "missing", ".", "../" + filepath.Base(dir) + "/site.json", ""} {
		t.Run(name, func(t *testing.T) {
			_, err := within(t, func() ([]byte, error) { return o.ReadFile("file", name) })
			require.ErrorIs(t, err, registry.ErrConfigFile)
			fe, ok := errors.AsType[*registry.FileError](err)
			require.True(t, ok)
			assert.Contains(t, fe.Reason, unusable)
			assert.NoError(t, fe.Err, "no cause is told")
			assert.NotContains(t, err.Error(), "hunter2")
		})
	}
	_, err = within(t, func() ([]byte, error) { return o.ReadFile("file", "big") })
	assert.ErrorContains(t, err, "larger than 67108864 bytes", "inside the folder, its size may be told")
	_, err = within(t, func() ([]byte, error) { return registry.Remote{}.ReadFile("file", "site.json") })
	require.ErrorIs(t, err, registry.ErrConfigFile)
	assert.Contains(t, err.Error(), "this server reads no file a configuration names (its operator allows a folder with --config-dir)")
}

// TestRegistryRemote: a remote view of a registry opens its entries' configurations
// with OpenRemote and the limits the view was given (defaults otherwise), for every
// user of the view: a controller's trials too. Entries without OpenRemote open with
// Open.
func TestRegistryRemote(t *testing.T) {
	dir, _ := files(t)
	reg := registry.New()
	require.NoError(t, reg.Register(counterEntry()))
	require.NoError(t, reg.Register(fileEntry()))
	view, err := reg.Remote(registry.Remote{Dir: dir, Limits: map[string]int64{"files.size": 20}})
	require.NoError(t, err)
	assert.True(t, view.IsRemote())
	assert.False(t, reg.IsRemote())
	assert.Equal(t, reg.Names(), view.Names())

	open := func(r *registry.Registry, config string) (*fileFactory, error) {
		e, err := r.Lookup("files")
		require.NoError(t, err)
		f, err := e.Open([]byte(config))
		ff, _ := f.(*fileFactory)
		return ff, err
	}
	f, err := open(view, `{"file": "site.json", "size": 20}`)
	require.NoError(t, err)
	assert.True(t, f.remote)
	_, err = open(view, `{"size": 21}`)
	require.ErrorIs(t, err, registry.ErrLimit)
	le, ok := errors.AsType[*registry.LimitError](err)
	require.True(t, ok)
	assert.Equal(t, registry.LimitError{Env: "files", Limit: "size", Description: "the size asked for", Value: 21, Max: 20}, *le)
	assert.Equal(t, "registry: files: 21 is more than 20, the limit files.size (the size asked for) on configurations from the network; the server's operator raises it with --env-limit files.size=N", err.Error())
	f, err = open(reg, `{"size": 1000}`)
	require.NoError(t, err, "the registry itself opens as a trusted caller")
	assert.False(t, f.remote)

	byDefault, err := reg.Remote(registry.Remote{})
	require.NoError(t, err)
	_, err = open(byDefault, `{"size": 11}`)
	require.ErrorIs(t, err, registry.ErrLimit, "the default bound is 10")
	_, err = open(byDefault, `{"file": "site.json"}`)
	require.ErrorIs(t, err, registry.ErrConfigFile, "no folder, no file")
	for e := range byDefault.All() {
		if e.Name == "files" {
			_, err := e.Open([]byte(`{"size": 11}`))
			require.ErrorIs(t, err, registry.ErrLimit, "All's entries open as remote ones too")
		}
	}

	// A controller built on the view opens its trials' configurations as remote.
	c, err := runners.NewController(byDefault)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Shutdown(context.Background())) }()
	_, err = c.Start(t.Context(), runners.Spec{Env: "files", Config: json.RawMessage(`{"file": "/dev/zero"}`), Episodes: 1})
	require.ErrorIs(t, err, registry.ErrConfigFile)
	id, err := c.Start(t.Context(), runners.Spec{Env: "counter", Episodes: 1})
	require.NoError(t, err, "an entry without OpenRemote opens with Open")
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, event.Ended, res.State)

	// An entry registered through the view is in the registry.
	other := counterEntry()
	other.Name = "other"
	require.NoError(t, view.Register(other))
	assert.Contains(t, reg.Names(), "other")

	_, err = reg.Remote(registry.Remote{Limits: map[string]int64{"files.sizes": 1, "counter.size": 1}})
	require.ErrorIs(t, err, registry.ErrUnknownLimit)
	assert.Contains(t, err.Error(), `unknown limit "counter.size" (choices: files.size)`)
	_, err = reg.Remote(registry.Remote{Limits: map[string]int64{"files.size": 0}})
	require.ErrorIs(t, err, registry.ErrLimit)
}

// TestEntryLimitsChecked: Register reports every problem of an entry's limits.
func TestEntryLimitsChecked(t *testing.T) {
	e := fileEntry()
	e.Limits = []registry.Limit{{Name: "a.b", Default: 1}, {Name: "size", Default: 0}, {Name: "size", Default: 1}}
	err := registry.New().Register(e)
	require.ErrorIs(t, err, registry.ErrInvalidEntry)
	for _, want := range []string{`limit #0: the name must be non-empty without white space, '.' or '='`, `limit "size": Default is 0`, `limit "size" is listed twice`} {
		assert.Contains(t, err.Error(), want)
	}
	e = fileEntry()
	e.OpenRemote = nil
	err = registry.New().Register(e)
	require.ErrorIs(t, err, registry.ErrInvalidEntry)
	assert.Contains(t, err.Error(), "Limits are given without OpenRemote")
}

// TestRemoteWithoutOpen: a Remote not passed by Open knows no limit: its bound is 0,
// which refuses everything.
func TestRemoteWithoutOpen(t *testing.T) {
	var o registry.Remote
	assert.Zero(t, o.Limit("size"))
	require.ErrorIs(t, o.Check("size", 1), registry.ErrLimit)
	require.NoError(t, o.Check("size", 0))
}
