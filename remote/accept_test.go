package remote_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guard bounds every wait of these tests on the server: a wait that reaches it is a
// failure, not a synchronisation.
const guard = 10 * time.Second

// failingListener is a listener whose next Accepts fail with errs, in order, before
// the listener's own take over.
type failingListener struct {
	net.Listener
	mu   sync.Mutex
	errs []error
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		l.mu.Unlock()
		return nil, err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func (l *failingListener) left() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.errs)
}

// records is a slog handler that keeps the messages of the records it handles.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Level.String()+" "+rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }
func (r *records) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// serveOn serves s on lis in the background; stop cancels Serve's context and
// returns Serve's error; done is closed when Serve has returned by itself.
func serveOn(t *testing.T, s *remote.Server, lis net.Listener) (stop func() error, done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	var err error
	go func() {
		err = s.Serve(ctx, lis)
		close(finished)
	}()
	stop = func() error {
		cancel()
		<-finished
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop, finished
}

// emfile is the error of accept(2) when the process has no file descriptor left.
func emfile() error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

// TestServeRetriesTemporaryAcceptErrors runs out of file descriptors, as a
// listener wrapper tells it: the server logs the failures, waits and accepts
// again, and serves the calls that come after.
func TestServeRetriesTemporaryAcceptErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lis := &failingListener{Listener: l, errs: []error{emfile(), emfile(), emfile()}}
	logs := &records{}
	s := newServer(t, remote.WithLogger(slog.New(logs)))
	require.NoError(t, s.AddAgents(oracleAgent(t)))
	stop, _ := serveOn(t, s, lis)

	c, err := remote.DialAgent(t.Context(), l.Addr().String(), remote.WithTimeout(guard))
	require.NoError(t, err, "the server accepts again after running out of descriptors")
	obs, masks := strategyObservations(t, 1)
	_, err = c.Act(t.Context(), obs[0], masks[0])
	require.NoError(t, err)
	require.NoError(t, c.Close())
	assert.Zero(t, lis.left(), "every failure was met")
	require.NoError(t, stop(), "a shutdown after the failures is clean")
	retries := 0
	for _, m := range logs.all() {
		if m == "WARN remote: accept failed; retrying" {
			retries++
		}
	}
	assert.Equal(t, 3, retries, "%q", logs.all())
}

// TestServeReportsAcceptFailure ends Serve with an error of the listener that is
// not temporary: Serve returns that error, not the closed halves' "use of closed
// network connection".
func TestServeReportsAcceptFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := errors.New("the network is gone")
	lis := &failingListener{Listener: l, errs: []error{gone}}
	s := newServer(t)
	require.NoError(t, s.AddAgents(oracleAgent(t)))
	stop, done := serveOn(t, s, lis)
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("Serve goes on after its listener failed")
	}
	err = stop()
	require.ErrorIs(t, err, gone)
	assert.Equal(t, "remote: accept on "+l.Addr().String()+": the network is gone", err.Error())
	assert.NotErrorIs(t, err, net.ErrClosed)
}
