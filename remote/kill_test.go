package remote_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// helperEnv marks the test binary started by startAgentProcess as an agent server.
const helperEnv = "BATON_REMOTE_AGENT_HELPER"

// TestAgentServerProcess is the agent server of startAgentProcess, in a process of
// its own: it serves the maze's oracle strategy on a free port of 127.0.0.1, prints
// the address and serves until it is killed. Run as a test, it returns at once.
func TestAgentServerProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fmt.Println(lis.Addr().String())
	err = remote.ServeAgent(context.Background(), lis, []remote.Agent{oracleAgent(t)})
	t.Fatalf("serving ended: %v", err) // it serves until it is killed
}

// agentProcess is an agent server in a process of its own.
type agentProcess struct {
	addr string
	cmd  *exec.Cmd
	once sync.Once
}

// startAgentProcess starts the agent server of TestAgentServerProcess and returns
// once it listens; it is killed at the end of the test if still running.
func startAgentProcess(t *testing.T) *agentProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAgentServerProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &agentProcess{cmd: cmd}
	t.Cleanup(p.kill)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	p.addr = strings.TrimSpace(line)
	return p
}

// kill kills the process with SIGKILL and waits until it is gone, so that its
// sockets are closed when kill returns.
func (p *agentProcess) kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
}

// killAt is a policy that forwards to a remote agent and, before its call number at
// (counted from 1 over every trial), kills the agent's server.
type killAt struct {
	remote *remote.AgentClient
	at     int64
	calls  atomic.Int64
	kill   func()
}

func (k *killAt) Act(ctx context.Context, obs []float32, mask []bool) (agent.RawAction, error) {
	if k.calls.Add(1) == k.at {
		k.kill()
	}
	return k.remote.Act(ctx, obs, mask)
}

// TestCampaignServerKilled runs a campaign of maze trials, one at a time so that
// the kill falls on the same call of the same trial every run, whose odd trials
// play a strategy served by another process, and kills that process with SIGKILL
// in the middle of the campaign: the remote trial under way and those started after
// fail, fast (the connection is reset or refused, no deadline runs out), with a
// reason naming the address and the status; the remote trials finished before the
// kill, and every local trial, end; no goroutine is left behind.
func TestCampaignServerKilled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := startAgentProcess(t)
	const timeout = 20 * time.Second // a deadline the failures must not wait for
	client, err := remote.DialAgent(t.Context(), srv.addr, remote.WithTimeout(timeout))
	require.NoError(t, err)
	defer client.Close()
	policy := &killAt{remote: client, at: 60, kill: srv.kill}

	const trials = 16
	reg := testRegistry(t)
	remoteOdd := runners.WithPreTrial(func(_ context.Context, i int, s *runners.Spec) error {
		if i%2 == 1 {
			s.Actors = map[string]runners.Actor{maze.StrategyName: runners.Value(policy)}
		}
		return nil
	})
	start := time.Now()
	sum := campaign(t, reg, runners.Spec{Env: "maze", Seed: 5}, runners.WithTrials(trials), runners.WithWorkers(1), remoteOdd)
	took := time.Since(start)
	t.Logf("%d trials in %v: %d ended, %d failed; remote calls %d", sum.Trials, took, sum.Ended, sum.Failed, policy.calls.Load())

	require.GreaterOrEqual(t, policy.calls.Load(), policy.at, "the server was killed mid-campaign")
	assert.Equal(t, trials, sum.Trials, "the campaign runs every trial")
	assert.Less(t, took, timeout, "the failures do not wait for the call deadline")
	var failed []int
	for _, f := range sum.Failures {
		t.Logf("trial %d failed: %s", f.Index, f.Reason)
		failed = append(failed, f.Index)
		assert.Contains(t, f.Reason, "agent strategy at "+srv.addr)
		assert.Contains(t, f.Reason, "Unavailable")
	}
	// The 60th call of the strategy falls in trial 7: it and the remote trials
	// after it fail; trials 1, 3 and 5, and the local ones, end.
	assert.Equal(t, []int{7, 9, 11, 13, 15}, failed, "only the trials that use the killed server fail")
	assert.Equal(t, trials-len(failed), sum.Ended)
	require.NoError(t, client.Close())
}
