package remote_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKeys(t *testing.T) {
	k, err := remote.ParseKeys([]byte("# comment\n\n strategy = aaaaaaaaaaaaaaaa-strategy \nmotion=bbbbbbbbbbbbbbbb==\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"motion", "strategy"}, k.Names())
	key, ok := k.For("strategy")
	assert.True(t, ok)
	assert.Equal(t, "aaaaaaaaaaaaaaaa-strategy", key)
	key, ok = k.For("motion")
	assert.True(t, ok)
	assert.Equal(t, "bbbbbbbbbbbbbbbb==", key, "a key may hold '='")
	_, ok = k.For("other")
	assert.False(t, ok)

	def, err := remote.ParseKeys([]byte("cccccccccccccccccccc\nmotion=dddddddddddddddddddd\n"))
	require.NoError(t, err)
	key, _ = def.For("strategy")
	assert.Equal(t, "cccccccccccccccccccc", key, "the default key")
	key, _ = def.For("motion")
	assert.Equal(t, "dddddddddddddddddddd", key)

	for _, tt := range []struct {
		name, data string
		want       []string
	}{
		{"empty", "# nothing\n", []string{"no key"}},
		{"short", "a=short\n", []string{"line 1: the key is 5 bytes long, want at least 16"}},
		{"space", "a=aaaaaaaa aaaaaaaaaaa\n", []string{"line 1: the key holds a byte that is not printable ASCII or is white space"}},
		{"no name", "=aaaaaaaaaaaaaaaaaaaa\n", []string{"line 1: empty name before '='"}},
		{"twice", "a=aaaaaaaaaaaaaaaaaaaa\na=bbbbbbbbbbbbbbbbbbbb\nxxxxxxxxxxxxxxxxxxxxxx\nyyyyyyyyyyyyyyyyyyyyyyy\n",
			[]string{"line 2: a key for a is given twice", "line 4: the default key is given twice"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.ParseKeys([]byte(tt.data))
			require.ErrorIs(t, err, remote.ErrConfig)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "bbbbbbbbbbbb", "keys never appear in errors")
		})
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(path, []byte("a=aaaaaaaaaaaaaaaaaaaa\n"), 0o600))
	fk, err := remote.ReadKeys(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, fk.Names())
	_, err = remote.ReadKeys(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, remote.ErrConfig)

	_, err = remote.NewKeys(map[string]string{"has space": "aaaaaaaaaaaaaaaaaaaa"})
	require.ErrorIs(t, err, remote.ErrConfig)
	assert.True(t, remote.Keys{}.Empty())
}

func TestNewKey(t *testing.T) {
	a, err := remote.NewKey()
	require.NoError(t, err)
	b, err := remote.NewKey()
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
	assert.Len(t, a, 43)
	_, err = remote.ParseKeys([]byte("x=" + a))
	require.NoError(t, err, "a new key is a valid key")
	assert.False(t, strings.ContainsAny(a, "+/="))
}

func TestKeysCheck(t *testing.T) {
	named, err := remote.NewKeys(map[string]string{"maze": "maze-key-0123456789abcdef", "": "default-key-0123456789abcdef"})
	require.NoError(t, err)
	tests := []struct {
		name      string
		keys      remote.Keys
		key, what string
		want      error
	}{
		{"no keys: everything", remote.Keys{}, "", "maze", nil},
		{"its own key", named, "maze-key-0123456789abcdef", "maze", nil},
		{"the default key for a name without one", named, "default-key-0123456789abcdef", "rps", nil},
		{"the default key for a name with one", named, "default-key-0123456789abcdef", "maze", remote.ErrPermissionDenied},
		{"a name's key for another", named, "maze-key-0123456789abcdef", "rps", remote.ErrPermissionDenied},
		{"no key", named, "", "maze", remote.ErrUnauthenticated},
		{"an unknown key", named, "what-key-0123456789abcdef", "maze", remote.ErrUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.keys.Check(tt.key, tt.what)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
}
