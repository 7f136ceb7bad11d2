package remote_test

import (
	"context"
	"flag"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The load test's size. The normal test command runs a short form; the long form:
//
//	go test ./remote -run TestLoad -v -load.duration=60s -load.clients=100
var (
	loadDuration = flag.Duration("load.duration", 2*time.Second, "how long TestLoad runs its clients")
	loadClients  = flag.Int("load.clients", 20, "how many clients TestLoad runs at once: half on an agent server, half on an environment server")
)

// TestLoad serves the maze's oracle strategy and the registered environments on
// 127.0.0.1, as `baton serve agent` and `baton serve env` do, and runs clients
// against them at once for a while (-load.clients, -load.duration), each on a
// connection of its own: agent clients ask for the strategy's actions on their
// stream, environment clients play maze episodes in sessions of their own. Every
// call must succeed, and the process's resident memory must stay bounded: its peak
// in the second half of the run at most 1.5 times the first half's plus 64 MiB. It
// logs the calls, their p50 and p99 and the peak resident memory.
func TestLoad(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // after the servers' cleanups
	clients, duration := *loadClients, *loadDuration
	require.Positive(t, clients, "-load.clients")
	require.Positive(t, duration, "-load.duration")

	oracle := oracleAgent(t)
	agentSrv := serveAgents(t, true, []remote.Agent{oracle})
	envSrv := serveEnvs(t, true)
	obs, masks := strategyObservations(t, 1)

	rss := startRSSSampler(100 * time.Millisecond)
	var stop atomic.Bool
	timer := time.AfterFunc(duration, func() { stop.Store(true) })
	defer timer.Stop()

	stats := make([]loadStats, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			st := &stats[i]
			if i%2 == 0 {
				st.kind = "agent Act"
				actLoad(t.Context(), agentSrv.target, obs, masks, &stop, st)
			} else {
				st.kind = "env Reset/Step"
				envLoad(t.Context(), envSrv.target, oracle.New, uint64(i), &stop, st)
			}
		})
	}
	wg.Wait()
	samples := rss.stop()

	byKind := map[string]*loadStats{}
	var errs []string
	for i := range stats {
		st := &stats[i]
		if byKind[st.kind] == nil {
			byKind[st.kind] = &loadStats{kind: st.kind}
		}
		byKind[st.kind].merge(st)
		errs = append(errs, st.errs...)
	}
	var summary strings.Builder
	fmt.Fprintf(&summary, "load: %d clients for %v\n", clients, duration)
	for _, kind := range []string{"agent Act", "env Reset/Step"} {
		if st := byKind[kind]; st != nil {
			fmt.Fprintf(&summary, "  %-15s %9d calls  %8.0f calls/s  p50 %v  p99 %v  errors %d\n", kind, st.calls,
				float64(st.calls)/duration.Seconds(), st.hist.quantile(0.5), st.hist.quantile(0.99), st.failed)
		}
	}
	assert.Empty(t, errs, "every call succeeds")
	for _, st := range byKind {
		assert.Positive(t, st.calls, "%s clients made calls", st.kind)
	}
	if len(samples) == 0 {
		t.Log(summary.String() + "  resident memory: not measured (no /proc/self/statm)")
		return
	}
	var first, second, peak int64
	for _, s := range samples {
		peak = max(peak, s.rss)
		if s.at < duration/2 {
			first = max(first, s.rss)
		} else {
			second = max(second, s.rss)
		}
	}
	fmt.Fprintf(&summary, "  resident memory: peak %.1f MiB (first half %.1f MiB, second half %.1f MiB, %d samples)",
		mib(peak), mib(first), mib(second), len(samples))
	t.Log(summary.String())
	if first > 0 && second > 0 {
		assert.LessOrEqual(t, second, first*3/2+64<<20, "resident memory grows: %.1f MiB, then %.1f MiB", mib(first), mib(second))
	}
	assert.Less(t, peak, int64(4<<30), "resident memory is bounded")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// loadStats are one client's calls.
type loadStats struct {
	kind   string
	calls  int64
	failed int64
	errs   []string // the first few
	hist   latencyHist
}

func (s *loadStats) record(start time.Time, err error) {
	s.calls++
	s.hist.add(time.Since(start))
	if err != nil {
		s.failed++
		if len(s.errs) < 3 {
			s.errs = append(s.errs, s.kind+": "+err.Error())
		}
	}
}

func (s *loadStats) merge(o *loadStats) {
	s.calls += o.calls
	s.failed += o.failed
	for i, c := range o.hist.counts {
		s.hist.counts[i] += c
	}
	s.hist.n += o.hist.n
}

// actLoad asks the agent server for actions on the strategy's observations, over
// and over, until stop.
func actLoad(ctx context.Context, target string, obs [][]float32, masks [][]bool, stop *atomic.Bool, st *loadStats) {
	c, err := remote.DialAgent(ctx, target, remote.WithTimeout(30*time.Second))
	if err != nil {
		st.record(time.Now(), err)
		return
	}
	defer c.Close()
	for i := 0; !stop.Load(); i++ {
		start := time.Now()
		_, err := c.Act(ctx, obs[i%len(obs)], masks[i%len(masks)])
		st.record(start, err)
	}
}

// envLoad plays maze episodes in a session of the environment server, the
// strategy played by the oracle and the motion agent at random, until stop.
func envLoad(ctx context.Context, target string, newOracle func() (agent.Policy, error), seed uint64, stop *atomic.Bool, st *loadStats) {
	c, err := remote.DialEnv(ctx, target, remote.WithTimeout(30*time.Second))
	if err != nil {
		st.record(time.Now(), err)
		return
	}
	defer c.Close()
	e, err := c.Make(ctx, "maze", nil, 200)
	if err != nil {
		st.record(time.Now(), err)
		return
	}
	defer func() { _ = e.Close(ctx) }()
	policies := map[string]agent.Policy{}
	for _, s := range e.Agents() {
		var p agent.Policy
		if s.Name == maze.StrategyName {
			p, err = newOracle()
		} else {
			p, err = agent.Random(s.ActionSpace, rand.New(rand.NewPCG(seed, 2)))
		}
		if err != nil {
			st.record(time.Now(), err)
			return
		}
		policies[s.Name] = p
	}
	for episode := uint64(0); !stop.Load(); episode++ {
		start := time.Now()
		turn, err := e.ResetContext(ctx, seed*1000+episode)
		st.record(start, err)
		for err == nil && !turn.Over && !stop.Load() {
			rep := turn.Acting()
			var raw agent.RawAction
			if raw, err = policies[rep.Agent].Act(ctx, rep.Obs, rep.Mask); err != nil {
				st.record(time.Now(), err)
				break
			}
			start = time.Now()
			turn, err = e.StepContext(ctx, rep.AgentID, raw)
			st.record(start, err)
		}
		if err != nil {
			return
		}
	}
}

// latencyHist is a histogram of durations in buckets of 1/64 of a power of two (a
// precision of 1.6%), fixed in size, so that recording allocates nothing and the
// test's own memory does not grow with the calls.
type latencyHist struct {
	n      int64
	counts [64 * 40]int64
}

func (h *latencyHist) add(d time.Duration) {
	ns := uint64(max(d, 1))
	i := int(ns)
	if e := bits.Len64(ns) - 1; e >= 6 {
		i = (e-5)*64 + int((ns>>(e-6))&63)
	}
	h.counts[min(i, len(h.counts)-1)]++
	h.n++
}

// quantile returns the q-quantile, the lower edge of its bucket.
func (h *latencyHist) quantile(q float64) time.Duration {
	want := max(int64(q*float64(h.n)+0.5), 1)
	var seen int64
	for i, c := range h.counts {
		if seen += c; seen >= want {
			if i < 64 {
				return time.Duration(i)
			}
			e, m := i/64+5, uint64(i%64)
			return time.Duration((64 + m) << (e - 6)).Round(time.Microsecond)
		}
	}
	return 0
}

// rssSample is the resident memory at a time since the start.
type rssSample struct {
	at  time.Duration
	rss int64
}

type rssSampler struct {
	done    chan struct{}
	wg      sync.WaitGroup
	samples []rssSample
}

// startRSSSampler reads the process's resident memory every period until stop;
// it reads nothing where /proc/self/statm is missing.
func startRSSSampler(period time.Duration) *rssSampler {
	s := &rssSampler{done: make(chan struct{}), samples: make([]rssSample, 0, 1<<14)}
	if _, err := readRSS(); err != nil {
		return s
	}
	start := time.Now()
	s.wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			if rss, err := readRSS(); err == nil && len(s.samples) < cap(s.samples) {
				s.samples = append(s.samples, rssSample{time.Since(start), rss})
			}
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	})
	return s
}

func (s *rssSampler) stop() []rssSample {
	close(s.done)
	s.wg.Wait()
	return s.samples
}

// readRSS returns the resident memory of the process, from /proc/self/statm.
func readRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/self/statm: %q", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * int64(os.Getpagesize()), nil
}
