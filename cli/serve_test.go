package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperEnv marks the test binary started as the baton command by startServe.
const helperEnv = "BATON_SERVE_HELPER"

// nofileEnv, when set, is the limit of open files of the helper process, as
// `prlimit --nofile=N:N` sets it.
const nofileEnv = "BATON_SERVE_NOFILE"

// TestServeHelperProcess is the baton command, run by startServe in a process of its
// own: the test binary started with helperEnv set runs main's code on the arguments
// after "--" (signals included) and exits with its status. Run as a test, it returns
// at once.
func TestServeHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	if n := os.Getenv(nofileEnv); n != "" {
		limit, err := strconv.ParseUint(n, 10, 64)
		if err == nil {
			err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "setting the file descriptor limit:", err)
			os.Exit(3)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// served is a baton serve process.
type served struct {
	cmd    *exec.Cmd
	addr   string // HOST:PORT it listens on
	stderr *syncBuffer
	waited bool
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var listening = regexp.MustCompile(`^serving .* on grpcs?://([^\s,]+)(, the page on https?://\S+)?$`)

// startServe runs `baton serve ARGS --addr 127.0.0.1:0` in a process of its own and
// returns once it listens; the process is killed at the end of the test if still
// running.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestServeHelperProcess$", "--", "serve"}, append(args, "--addr", "127.0.0.1:0")...)...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	s := &served{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if !s.waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "baton serve printed no address; stderr: %s", s.stderr.String())
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, "first line: %q", line)
	s.addr = m[1]
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return s
}

// stop sends sig and returns the exit status.
func (s *served) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(sig))
	err := s.cmd.Wait()
	s.waited = true
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, err)
	return 0
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	return path
}

// comparableSummary drops what differs between a local and a remote run.
func comparableSummary(t *testing.T, stdout string) map[string]json.RawMessage {
	t.Helper()
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &obj), stdout)
	delete(obj, "wall_seconds")
	delete(obj, "steps_per_second")
	delete(obj, "policies")
	return obj
}

// TestServeAgentRun serves the maze's oracle strategy in a baton serve process with
// a key file, runs a campaign with it (baton run --policy strategy=grpc://...), gets
// the summary of the local campaign, and stops the server with SIGTERM: exit 0.
func TestServeAgentRun(t *testing.T) {
	keys := writeFile(t, "keys", "strategy=strategy-key-0123456789\nmotion=motion-key-0123456789\n")
	srv := startServe(t, "agent", "--env", "maze", "--agent", "strategy", "--policy", "oracle", "--key-file", keys)

	local := runArgs(t, "run", "maze", "--trials", "30", "--workers", "2", "--json")
	require.Equal(t, 0, local.code, local.stderr)
	rem := runArgs(t, "run", "maze", "--trials", "30", "--workers", "2", "--json",
		"--policy", "strategy=grpc://"+srv.addr, "--key-file", keys)
	require.Equal(t, 0, rem.code, rem.stderr)
	assert.Equal(t, comparableSummary(t, local.stdout), comparableSummary(t, rem.stdout))
	var s runSummary
	require.NoError(t, json.Unmarshal([]byte(rem.stdout), &s))
	assert.Equal(t, map[string]string{"strategy": "grpc://" + srv.addr, "motion": "random"}, s.Policies)

	wrong := writeFile(t, "wrong", "strategy=not-the-strategy-key-0123\n")
	r := runArgs(t, "run", "maze", "--trials", "3", "--policy", "strategy=grpc://"+srv.addr, "--key-file", wrong)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "agent strategy at "+srv.addr+": AgentService/Spec: Unauthenticated: invalid API key")
	r = runArgs(t, "run", "maze", "--trials", "3", "--policy", "strategy=grpc://"+srv.addr)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "Unauthenticated: missing API key")
	r = runArgs(t, "run", "maze", "--trials", "3", "--policy", "motion=grpc://"+srv.addr+"/strategy", "--key-file", keys)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `PermissionDenied: the API key does not grant agent "strategy" (it grants no agent this server serves)`, "the key file's motion key")
	bare := writeFile(t, "bare", "strategy-key-0123456789\n")
	r = runArgs(t, "run", "maze", "--trials", "3", "--policy", "motion=grpc://"+srv.addr+"/strategy", "--key-file", bare)
	assert.Equal(t, 2, r.code, "the strategy cannot play the motion agent")
	assert.Contains(t, r.stderr, "remote: the remote end does not match")

	assert.Equal(t, 0, srv.stop(t, syscall.SIGTERM), srv.stderr.String())
	assert.Contains(t, srv.stderr.String(), "remote: shutting down")
}

// TestServeSignals stops baton serve env and baton serve trials with SIGINT and
// SIGTERM while clients are connected: they shut down gracefully with exit 0.
func TestServeSignals(t *testing.T) {
	for _, tt := range []struct {
		what string
		sig  syscall.Signal
	}{{"env", syscall.SIGINT}, {"trials", syscall.SIGTERM}} {
		t.Run(tt.what, func(t *testing.T) {
			srv := startServe(t, tt.what, "--grace", "20s")
			switch tt.what {
			case "env":
				c, err := remote.DialEnv(t.Context(), srv.addr)
				require.NoError(t, err)
				defer c.Close()
				e, err := c.Make(t.Context(), "maze", nil, 0)
				require.NoError(t, err)
				_, err = e.ResetContext(t.Context(), 1)
				require.NoError(t, err)
			case "trials":
				c, err := remote.DialTrials(t.Context(), srv.addr)
				require.NoError(t, err)
				defer c.Close()
				// A long trial, running when the signal comes: it is stopped.
				id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Episodes: 1 << 20})
				require.NoError(t, err)
				for ch, err := range c.Watch(t.Context(), id) {
					require.NoError(t, err)
					if ch.State == event.Running {
						break
					}
				}
			}
			start := time.Now()
			assert.Equal(t, 0, srv.stop(t, tt.sig), srv.stderr.String())
			assert.Less(t, time.Since(start), 15*time.Second, "the shutdown does not wait out the grace period")
			assert.Contains(t, srv.stderr.String(), "remote: shutting down")
		})
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "baton test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile = writeFile(t, "server.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	keyFile = writeFile(t, "server.key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	return certFile, keyFile
}

// TestServeTLS serves over TLS and runs with grpcs:// and --tls-ca.
func TestServeTLS(t *testing.T) {
	cert, key := selfSigned(t)
	srv := startServe(t, "agent", "--env", "maze", "--agent", "strategy", "--tls-cert", cert, "--tls-key", key)
	r := runArgs(t, "run", "maze", "--trials", "5", "--policy", "strategy=grpcs://"+srv.addr, "--tls-ca", cert)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "strategy=grpcs://"+srv.addr)
	r = runArgs(t, "run", "maze", "--trials", "5", "--policy", "strategy=grpc://"+srv.addr)
	assert.Equal(t, 1, r.code, "plaintext to a TLS server")
	assert.Contains(t, r.stderr, "Unavailable")
	assert.Equal(t, 0, srv.stop(t, syscall.SIGTERM))
}

// TestServeInProcess serves trials in this process, starts a trial through a
// client, and cancels the command's context as a signal would.
func TestServeInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- runWith(ctx, shipped(t), []string{"serve", "trials", "--addr", "127.0.0.1:0", "--workers", "1"}, pw, &stderr)
		_ = pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, stderr.String())
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, line)
	go func() { _, _ = io.Copy(io.Discard, pr) }()

	c, err := remote.DialTrials(t.Context(), m[1])
	require.NoError(t, err)
	defer c.Close()
	id, err := c.Start(t.Context(), runners.Spec{Env: "maze", Seed: 2, Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}, MaxTicks: 100})
	require.NoError(t, err)
	res, err := c.Wait(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, event.Ended, res.State)
	cancel()
	assert.Equal(t, 0, <-code, stderr.String())
}

// TestServeOutOfDescriptors runs baton serve env with 64 file descriptors and opens
// 100 connections to it: the server runs out, says so, waits and accepts again, and
// once the connections are closed it answers calls; SIGTERM ends it with exit 0.
func TestServeOutOfDescriptors(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$", "--", "serve", "env", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), helperEnv+"=1", nofileEnv+"=64")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	var waitErr error
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	m := listening.FindStringSubmatch(strings.TrimSpace(line))
	require.NotNil(t, m, "first line: %q", line)
	addr := m[1]
	// The server's log, line by line, until it ends.
	logs := make(chan string, 1024)
	var logged strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs <- sc.Text()
		}
		close(logs)
		waitErr = cmd.Wait()
		close(exited)
	}()

	var conns []net.Conn
	for range 100 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	guard := time.NewTimer(30 * time.Second)
	defer guard.Stop()
	for retrying := false; !retrying; {
		select {
		case l, ok := <-logs:
			require.True(t, ok, "the server ended: %s", logged.String())
			logged.WriteString(l + "\n")
			retrying = strings.Contains(l, `msg="remote: accept failed; retrying"`) && strings.Contains(l, "too many open files")
		case <-guard.C:
			t.Fatalf("the server did not run out of file descriptors: %s", logged.String())
		}
	}
	for _, c := range conns {
		require.NoError(t, c.Close())
	}
	c, err := remote.DialEnv(t.Context(), addr, remote.WithTimeout(20*time.Second))
	require.NoError(t, err, "the server accepts again")
	envs, err := c.Envs(t.Context())
	require.NoError(t, err)
	assert.NotEmpty(t, envs)
	require.NoError(t, c.Close())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for l := range logs {
		logged.WriteString(l + "\n")
	}
	<-exited
	assert.NoError(t, waitErr, "exit status 0 after SIGTERM: %s", logged.String())
}

// TestServeTrialBounds: the flags that bound what a trial server holds reach it.
func TestServeTrialBounds(t *testing.T) {
	srv := startServe(t, "trials", "--workers", "1", "--max-live-trials", "2", "--keep-finished", "1", "--episode-window", "2", "--client-idle-timeout", "1m")
	c, err := remote.DialTrials(t.Context(), srv.addr)
	require.NoError(t, err)
	defer c.Close()
	spec := runners.Spec{Env: "maze", Episodes: 5, Actors: map[string]runners.Actor{maze.MotionName: runners.Named("forward")}}
	_, err = c.StartCampaign(t.Context(), spec, 3)
	require.ErrorIs(t, err, remote.ErrRejected)
	assert.ErrorContains(t, err, "at most 2 (WithMaxLive)")
	assert.ErrorContains(t, err, "--max-live-trials")
	ids, err := c.StartCampaign(t.Context(), spec, 2)
	require.NoError(t, err)
	// One worker runs maze-0, then maze-1, which the server keeps (the last finished).
	for ch, err := range c.Watch(t.Context(), ids[1]) {
		require.NoError(t, err)
		if ch.Result != nil {
			assert.Len(t, ch.Result.Episodes, 2, "--episode-window")
			assert.Equal(t, 3, ch.Result.FirstEpisode)
		}
	}
	list, err := c.List(t.Context())
	require.NoError(t, err)
	assert.Len(t, list, 1, "--keep-finished")
	_, err = c.Start(t.Context(), runners.Spec{Env: "maze", Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Named("client://?idle_timeout_ms=120000"),
	}})
	require.ErrorIs(t, err, remote.ErrInvalidArgument)
	assert.ErrorContains(t, err, "want at most 60000: the server's idle timeout (baton serve --client-idle-timeout 1m0s)")
	assert.Equal(t, 0, srv.stop(t, syscall.SIGTERM))
}

// TestServeUsage: bad flags are usage errors (exit 2) that say what is wrong.
func TestServeUsage(t *testing.T) {
	keys := writeFile(t, "keys", "motion=motion-key-0123456789\n")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve"}, 2, "serve needs what to serve (choices: agent, env, models, trials, ui)"},
		{[]string{"serve", "agents"}, 2, `unknown serve command "agents"`},
		{[]string{"serve", "agent"}, 2, "serve agent needs --env (choices: maze, maze-flat, cartpole"},
		{[]string{"serve", "agent", "--env", "nowhere"}, 2, `unknown environment "nowhere"`},
		{[]string{"serve", "agent", "--env", "maze", "--agent", "ghost"}, 2, `--agent ghost: unknown agent "ghost" of maze (choices: strategy, motion)`},
		{[]string{"serve", "agent", "--env", "maze", "--policy", "oracle"}, 2, "name the agent (AGENT=POLICY) when serving 2 agents"},
		{[]string{"serve", "agent", "--env", "maze", "--agent", "strategy", "--policy", "nope"}, 2, `unknown policy "nope" for agent strategy of maze (choices: oracle, random)`},
		{[]string{"serve", "agent", "--env", "maze", "--key-file", keys}, 2, "agent strategy has no API key (keys: motion)"},
		{[]string{"serve", "agent", "--env", "maze", "--key-file", "/nonexistent/keys"}, 2, "--key-file"},
		{[]string{"serve", "agent", "--env", "maze", "--tls-cert", keys}, 2, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "env", "--addr", "nowhere"}, 2, `--addr "nowhere": want HOST:PORT`},
		{[]string{"serve", "env", "extra"}, 2, "serve env takes no arguments"},
		{[]string{"serve", "env", "--header-timeout", "0s", "--read-timeout", "-1s", "--idle-timeout", "0s"}, 2,
			"--header-timeout 0s: want a positive duration; --read-timeout -1s: want a positive duration; --idle-timeout 0s: want a positive duration"},
		{[]string{"serve", "trials", "--actor-key-file", keys}, 2, "need --allow-remote-actors"},
		{[]string{"serve", "env", "--metrics-public", "--metrics-key-file", keys}, 2, "--metrics-key-file and --metrics-public exclude each other"},
		{[]string{"serve", "env", "--metrics=false", "--metrics-public"}, 2, "--metrics-key-file and --metrics-public need --metrics"},
		{[]string{"serve", "trials", "--workers", "10000"}, 2, "--workers 10000: at most "},
		{[]string{"serve", "ui", "--workers", "10000"}, 2, "--workers 10000: at most "},
		{[]string{"serve", "env", "--env-limit", "maze.sides=3"}, 2, `--env-limit: unknown limit "maze.sides" (choices: maze.side, maze-flat.side, webtest.pages)`},
		{[]string{"serve", "env", "--env-limit", "maze.side"}, 2, `--env-limit "maze.side": want ENV.LIMIT=N with N 1 or more (limits: maze.side, maze-flat.side, webtest.pages)`},
		{[]string{"serve", "trials", "--env-limit", "webtest.pages=0"}, 2, `--env-limit "webtest.pages=0": want ENV.LIMIT=N with N 1 or more`},
		{[]string{"serve", "ui", "--config-dir", "/nonexistent/sites"}, 2, "--config-dir /nonexistent/sites: "},
		{[]string{"serve", "env", "--config-dir", keys}, 2, "not a folder"},
		{[]string{"serve", "env", "--max-session-bytes", "0"}, 2, "--max-session-bytes 0 and --max-key-bytes 1073741824: want 1 or more"},
		{[]string{"serve", "trials", "--max-live-trials", "0", "--keep-finished", "-1"}, 2, "--max-live-trials 0: want 1 or more; --keep-finished -1: want 1 or more"},
		{[]string{"serve", "ui", "--episode-window", "0", "--client-idle-timeout", "-1s"}, 2, "--episode-window 0: want 1 or more; --client-idle-timeout -1s: want 0 (never) or a positive duration"},
		{[]string{"run", "maze", "--key-file", keys}, 2, "--key-file and --tls-ca are for remote agents"},
		{[]string{"run", "maze", "--policy", "ghost=grpc://127.0.0.1:1"}, 2, `unknown agent "ghost" of maze`},
		{[]string{"run", "maze", "--policy", "strategy=grpc://127.0.0.1:1", "--policy", "strategy=oracle"}, 1, "Unavailable"},
		{[]string{"run", "maze", "--policy", "strategy=grpc://127.0.0.1"}, 2, "has no port"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runArgs(t, tt.args...)
			assert.Equal(t, tt.code, r.code, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %s", r.stderr)
		})
	}
}
