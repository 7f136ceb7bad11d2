package webtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openWithin opens config for the entry e and fails the test when that has not
// returned within a few seconds: a site file that never ends must fail the test, not
// hang it.
func openWithin(t *testing.T, e registry.Entry, config string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.Open([]byte(config))
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatalf("opening %s did not end", config)
		return nil
	}
}

// entries returns the web tester's entry from a registry and from its remote view
// with o.
func entries(t *testing.T, o registry.Remote) (local, remote registry.Entry) {
	t.Helper()
	reg := registry.New()
	require.NoError(t, webtest.Register(reg))
	view, err := reg.Remote(o)
	require.NoError(t, err)
	local, err = reg.Lookup("webtest")
	require.NoError(t, err)
	remote, err = view.Lookup("webtest")
	require.NoError(t, err)
	return local, remote
}

// TestSiteFileLocal: on the command line, a site file is any path, read only when it
// is a regular file: /dev/zero and a FIFO are refused at once.
func TestSiteFileLocal(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() { // a reader stuck in its open gets to its end
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			_ = f.Close()
		}
	})
	shop := filepath.Join(dir, "shop.json")
	require.NoError(t, os.WriteFile(shop, webtest.ShopJSON(), 0o600))
	local, _ := entries(t, registry.Remote{})
	require.NoError(t, openWithin(t, local, fmt.Sprintf(`{"site_file": %q}`, shop)))
	for _, name := range []string{"/dev/zero", fifo, dir} {
		err := openWithin(t, local, fmt.Sprintf(`{"site_file": %q}`, name))
		require.ErrorIs(t, err, webtest.ErrConfig, name)
		require.ErrorIs(t, err, registry.ErrConfigFile, name)
		assert.ErrorContains(t, err, "not a regular file")
	}
}

// TestRemoteConfig: a configuration from the network names a site file inside the
// server's folder only, and asks for a site of at most webtest.pages pages, however
// the site is given.
func TestRemoteConfig(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shop.json"), webtest.ShopJSON(), 0o600))
	_, remote := entries(t, registry.Remote{Dir: dir, Limits: map[string]int64{"webtest.pages": 20}})
	require.NoError(t, openWithin(t, remote, `{"site_file": "shop.json"}`))
	require.NoError(t, openWithin(t, remote, `{"generate": {"pages": 20}}`))
	err := openWithin(t, remote, `{"site_file": "/dev/zero"}`)
	require.ErrorIs(t, err, registry.ErrConfigFile)

	for _, config := range []string{
		`{"generate": {"pages": 21}}`,
		fmt.Sprintf(`{"site": {"name": "many", "start": "p0", "pages": [%s]}}`, pages(21)),
	} {
		err := openWithin(t, remote, config)
		require.ErrorIs(t, err, registry.ErrLimit, config)
		assert.ErrorContains(t, err, "21 is more than 20, the limit webtest.pages")
	}
	_, remote = entries(t, registry.Remote{Dir: dir, Limits: map[string]int64{"webtest.pages": 5}})
	err = openWithin(t, remote, `{"site_file": "shop.json"}`)
	require.ErrorIs(t, err, registry.ErrLimit, "the shop has more than 5 pages")

	_, remote = entries(t, registry.Remote{})
	err = openWithin(t, remote, fmt.Sprintf(`{"generate": {"pages": %d}}`, webtest.DefaultRemotePages+1))
	require.ErrorIs(t, err, registry.ErrLimit)
	err = openWithin(t, remote, `{"site_file": "shop.json"}`)
	require.ErrorIs(t, err, registry.ErrConfigFile, "no folder, no file")
	require.NoError(t, openWithin(t, remote, ""), "the shop")
}

// pages returns the JSON of n pages with ids p0, p1, ...
func pages(n int) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf(`{"id": "p%d", "url": "/p%d"}`, i, i)
	}
	return s
}

// TestFactorySize: the factory estimates a site's memory and each environment's, as
// servers count them (registry.Sizer), in proportion to the site's pages.
func TestFactorySize(t *testing.T) {
	local, _ := entries(t, registry.Remote{})
	f, err := local.Open([]byte(`{"generate": {"pages": 500, "seed": 1}}`))
	require.NoError(t, err)
	s, ok := f.(registry.Sizer)
	require.True(t, ok)
	shared, each := s.Size()
	assert.Equal(t, int64(500*4096), shared)
	assert.Greater(t, each, int64(500*150))
}
