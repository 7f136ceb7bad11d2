package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonrl/baton/datalog"
	"github.com/batonrl/baton/models"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/remote"
	"github.com/batonrl/baton/runners"
	"github.com/batonrl/baton/telemetry"
	"github.com/batonrl/baton/webui"
	"github.com/spf13/cobra"
)

// serveFlags are the flags every baton serve command shares.
type serveFlags struct {
	addr    string
	keyFile string
	tlsCert string
	tlsKey  string
	grace   time.Duration
	maxMsg  int
	quiet   bool
	keys    remote.Keys // read from keyFile by options

	headerTimeout time.Duration
	readTimeout   time.Duration
	idleTimeout   time.Duration

	// The operator's metrics (GET /metrics): off with --metrics=false, and who may
	// read them. options sets metrics.
	metricsOn      bool
	metricsKeyFile string
	metricsPublic  bool
	metrics        *telemetry.Metrics
}

func (f *serveFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", remote.DefaultAddr, "listen on `HOST:PORT` (port 0 picks a free one); the default is loopback only")
	fl.StringVar(&f.keyFile, "key-file", "", "require API keys, read from `FILE` (NAME=KEY lines: one key per agent or environment)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve TLS with the PEM certificate (chain) in `FILE` (with --tls-key)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key of --tls-cert, in `FILE`")
	fl.DurationVar(&f.grace, "grace", remote.DefaultGracePeriod, "on SIGINT or SIGTERM, let calls in flight finish for at most `DURATION`")
	fl.IntVar(&f.maxMsg, "max-message-bytes", remote.DefaultMaxMessageSize, "refuse requests larger than `N` bytes (64 KiB for JSON requests that carry only names and ids)")
	fl.DurationVar(&f.headerTimeout, "header-timeout", remote.DefaultHeaderTimeout, "close a connection that has not shown what it speaks (TLS handshake, first bytes, HTTP/2 handshake) or sent an HTTP request's headers within `DURATION`")
	fl.DurationVar(&f.readTimeout, "read-timeout", remote.DefaultReadTimeout, "answer 408 to an HTTP request whose body has not arrived within `DURATION` of its headers")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", remote.DefaultIdleTimeout, "close connections with no call in flight for `DURATION` (clients dial again by themselves)")
	fl.BoolVar(&f.quiet, "quiet", false, "log only warnings and errors to stderr")
	fl.BoolVar(&f.metricsOn, "metrics", true, "serve Prometheus metrics at GET /metrics on --addr (--metrics=false: none)")
	fl.StringVar(&f.metricsKeyFile, "metrics-key-file", "", "let a scrape of /metrics in only with a key of `FILE` (the --key-file format), instead of --key-file's keys")
	fl.BoolVar(&f.metricsPublic, "metrics-public", false, "serve /metrics without a key, even with --key-file")
}

// options checks the shared flags and returns the server's options.
func (f *serveFlags) options(stderr io.Writer) ([]remote.ServerOption, error) {
	var bad []string
	if (f.tlsCert == "") != (f.tlsKey == "") {
		bad = append(bad, "--tls-cert and --tls-key go together")
	}
	if f.grace <= 0 {
		bad = append(bad, fmt.Sprintf("--grace %v: want a positive duration", f.grace))
	}
	if f.maxMsg <= 0 {
		bad = append(bad, fmt.Sprintf("--max-message-bytes %d: want 1 or more", f.maxMsg))
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--header-timeout", f.headerTimeout}, {"--read-timeout", f.readTimeout}, {"--idle-timeout", f.idleTimeout}} {
		if d.v <= 0 {
			bad = append(bad, fmt.Sprintf("%s %v: want a positive duration", d.flag, d.v))
		}
	}
	if f.metricsKeyFile != "" && f.metricsPublic {
		bad = append(bad, "--metrics-key-file and --metrics-public exclude each other")
	}
	if !f.metricsOn && (f.metricsKeyFile != "" || f.metricsPublic) {
		bad = append(bad, "--metrics-key-file and --metrics-public need --metrics")
	}
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		bad = append(bad, fmt.Sprintf("--addr %q: want HOST:PORT", f.addr))
	}
	if len(bad) > 0 {
		return nil, usagef("%s", strings.Join(bad, "; "))
	}
	level := slog.LevelInfo
	if f.quiet {
		level = slog.LevelWarn
	}
	opts := []remote.ServerOption{
		remote.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))),
		remote.WithGracePeriod(f.grace),
		remote.WithMaxMessageSize(f.maxMsg),
		remote.WithHeaderTimeout(f.headerTimeout),
		remote.WithReadTimeout(f.readTimeout),
		remote.WithIdleTimeout(f.idleTimeout),
	}
	if f.keyFile != "" {
		keys, err := remote.ReadKeys(f.keyFile)
		if err != nil {
			return nil, usageErr(err, "--key-file")
		}
		opts = append(opts, remote.WithKeys(keys))
		f.keys = keys
	}
	if f.metricsOn {
		f.metrics = telemetry.New()
		opts = append(opts, remote.WithMetrics(f.metrics))
		switch {
		case f.metricsPublic:
			opts = append(opts, remote.WithMetricsKeys(remote.Keys{}))
		case f.metricsKeyFile != "":
			keys, err := remote.ReadKeys(f.metricsKeyFile)
			if err != nil {
				return nil, usageErr(err, "--metrics-key-file")
			}
			if keys.Empty() {
				return nil, usagef("--metrics-key-file %s holds no key", f.metricsKeyFile)
			}
			opts = append(opts, remote.WithMetricsKeys(keys))
		}
	}
	if f.tlsCert != "" {
		cfg, err := remote.ServerTLS(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, usageErr(err, "--tls-cert")
		}
		opts = append(opts, remote.WithTLS(cfg))
	}
	return opts, nil
}

// configFlags are the flags that say what the configurations of a server's callers
// may ask for (serve env, trials and ui): the folder whose files they may name, and
// the environments' limits.
type configFlags struct {
	dir    string
	limits []string
}

func (f *configFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "config-dir", "", "let callers' configurations name files in `DIR` (webtest's site_file, relative to DIR), and nowhere else; without it they name none")
	fl.StringArrayVar(&f.limits, "env-limit", nil, "`ENV.LIMIT=N`: the bound of an environment's limit on callers' configurations (maze.side=101); repeatable")
}

// remote checks the flags against the registry and returns what they allow.
func (f *configFlags) remote(envs *environments) (registry.Remote, error) {
	var r registry.Remote
	if f.dir != "" {
		abs, err := filepath.Abs(f.dir)
		if err == nil {
			var st os.FileInfo
			if st, err = os.Stat(abs); err == nil && !st.IsDir() {
				err = errors.New("not a folder")
			}
		}
		if err != nil {
			return r, usagef("--config-dir %s: %v", f.dir, err)
		}
		r.Dir = abs
	}
	for _, l := range f.limits {
		name, v, ok := strings.Cut(l, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n < 1 {
			return r, usagef("--env-limit %q: want ENV.LIMIT=N with N 1 or more (limits: %s)", l, strings.Join(limitNames(envs), ", "))
		}
		if r.Limits == nil {
			r.Limits = map[string]int64{}
		}
		r.Limits[name] = n
	}
	if _, err := envs.reg.Remote(r); err != nil {
		return r, usageErr(err, "--env-limit")
	}
	return r, nil
}

// limitNames returns the full names of the environments' limits (maze.side).
func limitNames(envs *environments) []string {
	var names []string
	for e := range envs.reg.All() {
		for _, l := range e.Limits {
			names = append(names, e.Name+"."+l.Name)
		}
	}
	return names
}

// limitsHelp lists, for help, the limits of the environments on callers'
// configurations, with their defaults.
func limitsHelp(envs *environments) string {
	var b strings.Builder
	for e := range envs.reg.All() {
		for _, l := range e.Limits {
			fmt.Fprintf(&b, "\n  %-16s %8d  %s", e.Name+"."+l.Name, l.Default, l.Description)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\nLimits on callers' configurations (--env-limit ENV.LIMIT=N; default bound, what it bounds):" + b.String()
}

// serve listens on the flags' address, prints where to stdout, and serves s until
// ctx is done (SIGINT or SIGTERM), shutting down gracefully.
// With page, it says where the page is too.
func (f *serveFlags) serve(ctx context.Context, s *remote.Server, what string, page bool, stdout io.Writer) error {
	var lc net.ListenConfig
	lis, err := lc.Listen(ctx, "tcp", f.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", f.addr, err)
	}
	scheme := "grpc"
	if f.tlsCert != "" {
		scheme = "grpcs"
	}
	where := fmt.Sprintf("serving %s on %s://%s", what, scheme, lis.Addr())
	if page {
		web := "http"
		if f.tlsCert != "" {
			web = "https"
		}
		where += fmt.Sprintf(", the page on %s://%s/", web, lis.Addr())
	}
	if _, err := fmt.Fprintln(stdout, where); err != nil {
		_ = lis.Close()
		return err
	}
	return s.Serve(ctx, lis)
}

const trialsLong = `serve trials serves a controller of the registered environments: a client starts trials
or campaigns (a spec as baton run's flags), watches their state changes, stops and
rewards them, and lists them (a page at a time). At most --workers trials run at once;
the others wait, pending, and List says why. With --allow-remote-actors, a trial's
agent may be played by an agent server elsewhere (grpc://HOST:PORT), which this server
dials with the key --actor-key-file gives for the agent. A trial may name an agent as
played by a client ("client" actor): the client reads the agent's turn and acts
through TrialService.Pending and ClientAct. Such a trial waits for a person, so it runs
outside the --workers; a client that lost its place finds it in List and asks Pending
again; and it stops when its client has not acted for --client-idle-timeout. With
--key-file, calls need the key of the trials' environment. The same address answers
gRPC and, over HTTP/1.1, the same calls as Connect JSON (POST
/baton.v1.TrialService/METHOD), so that curl can act in a trial. A trial's
configuration names no file on the server unless --config-dir allows a folder (names
are then relative to it), and asks for no more than the environments' limits
(--env-limit raises them).

What clients make the server hold is bounded: at most --max-live-trials trials pending
or running (a Start past it starts none and gets RESOURCE_EXHAUSTED), the
--keep-finished trials that finished last (older ones are forgotten; --log keeps every
step and result), and the last --episode-window episodes of each trial (with every
episode summed up).

Environments:
`

const uiLong = `serve ui serves trials as serve trials does, and on the same address a page for people
(http://ADDR/, https:// with --tls-cert), on a laptop or a phone: start a trial with a
policy, a remote agent or yourself per agent (a policy or the first allowed action
moves for you after a timeout, 60 s unless you say otherwise); play your agents (the
environment drawn with a legend and your budget, a button per action, masked ones
disabled, keys 1-9 and the arrows, the outcome of each episode); reward them now or
for a past turn; send messages; play on after a reload; and watch every trial live
with each agent's return per episode. The
page calls the server's TrialService with the key typed in its "API key" field, or
given in the link's fragment (http://ADDR/#key=KEY); ?poll=MS sets how often it polls
besides following the trials with Watch (2000 by default, 0 never).

Environments:
`

const serveLong = `serve puts baton on the network with gRPC (the contract: remote/proto/baton/v1/baton.proto):
"serve agent" serves policies of an environment's agents (AgentService), so that trials
elsewhere, or learners in any language, ask them for actions; "serve env" serves the
registered environments (EnvService), so that a trainer in any language makes, resets
and steps them; "serve trials" serves a trial controller (TrialService): start trials
and campaigns, watch, stop and reward them; "serve models" serves a model registry
(ModelService); "serve ui" serves trials and a page where
people play, reward and watch them. Every server answers the same calls over
HTTP/1.1 on its address, in the Connect protocol (JSON and binary) and in gRPC-Web.

Every server has gRPC health checking and reflection (open without a key), listens on
loopback unless --addr says otherwise, takes API keys with --key-file (NAME=KEY lines,
one key per agent or environment name: a leaked key exposes one), serves TLS with
--tls-cert and --tls-key, and shuts down gracefully on SIGINT or SIGTERM (exit status
0): no new call, calls in flight finish within --grace, running trials stop. The first
line on stdout says where it listens.

A server reads nothing of a call before it has checked its key, and bounds what a
connection may hold: requests above --max-message-bytes are refused (413 over HTTP),
a connection must show what it speaks and an HTTP request send its headers within
--header-timeout, an HTTP request's body must arrive within --read-timeout (408
otherwise), and connections with no call in flight are closed after --idle-timeout.
When the process runs out of file descriptors, the server waits and accepts again.

Every server serves Prometheus metrics at GET /metrics on its address (calls, act and
step latencies, errors by gRPC code, open sessions, trials by state, rows and bytes
logged). A scrape presents a key as calls do: any key of --key-file, or one of
--metrics-key-file; --metrics-public needs none; --metrics=false serves none.`

func newServe(envs *environments) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve agent|env|models|trials|ui",
		Short: "Serve agents, environments or trials over gRPC",
		Long:  serveLong,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("serve needs what to serve (choices: agent, env, models, trials, ui)")
			}
			return usagef("unknown serve command %q (choices: agent, env, models, trials, ui)", args[0])
		},
	}
	cmd.AddCommand(newServeAgent(envs), newServeEnv(envs), newServeTrials(envs), newServeUI(envs), newServeModels())
	return cmd
}

func noArgs(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("%s takes no arguments (got %q)", what, strings.Join(args, " "))
		}
		return nil
	}
}

func newServeAgent(envs *environments) *cobra.Command {
	var (
		sf        serveFlags
		envName   string
		envConfig string
		agents    []string
		policies  []string
		seed      uint64
	)
	cmd := &cobra.Command{
		Use:   "agent --env ENV [--agent AGENT]... [--policy [AGENT=]POLICY]...",
		Short: "Serve registered policies of an environment's agents (AgentService)",
		Long: `serve agent serves the registered policies of agents of the environment --env: each
--agent (every agent of the environment when none is given) plays the policy --policy
names for it (POLICY alone when one agent is served, AGENT=POLICY otherwise), or its
default. Each stream of a caller gets a policy of its own; random policies draw from
generators seeded with --seed. With --key-file, every served agent needs a key.

Environments:
` + envHelp(envs),
		Example: "  baton serve agent --env maze --agent strategy --policy oracle --addr 127.0.0.1:50051 --key-file keys\n" +
			"  baton run maze --policy strategy=grpc://127.0.0.1:50051 --key-file keys",
		Args: noArgs("serve agent"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := sf.options(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			config, err := readConfig(envConfig)
			if err != nil {
				return err
			}
			if envName == "" {
				return usagef("serve agent needs --env (%s)", choices(envs.names()))
			}
			o, err := envs.open(envName, config, 0)
			if err != nil {
				return err
			}
			served, err := servedAgents(envs, o, config, agents, policies, seed)
			if err != nil {
				return err
			}
			s, err := remote.NewServer(opts...)
			if err != nil {
				return err
			}
			if err := s.AddAgents(served...); err != nil {
				return usageErr(err)
			}
			names := make([]string, len(served))
			for i, a := range served {
				names[i] = a.Spec.Name
			}
			return sf.serve(cmd.Context(), s, "agents "+strings.Join(names, ", ")+" of "+envName, false, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&envName, "env", "", "the registered environment `ENV` whose agents to serve")
	fl.StringVar(&envConfig, "env-config", "", "the environment's configuration as `JSON`, or @FILE")
	fl.StringArrayVar(&agents, "agent", nil, "serve the agent `AGENT`; repeatable (default: every agent)")
	fl.StringArrayVar(&policies, "policy", nil, "`[AGENT=]POLICY`: the registered policy an agent plays; repeatable")
	fl.Uint64Var(&seed, "seed", 1, "seed of the random policies' generators, an integer `N`")
	sf.register(cmd)
	return cmd
}

// servedAgents resolves --agent and --policy against an opened environment.
func servedAgents(envs *environments, o *opened, config []byte, agents, policies []string, seed uint64) ([]remote.Agent, error) {
	names := o.agentNames()
	if len(agents) == 0 {
		agents = names
	}
	for i, a := range agents {
		if !slices.Contains(names, a) {
			return nil, usageErr(&registry.NameError{Kind: registry.ErrUnknownAgent, Name: a, Env: o.entry.Name, Choices: names}, "--agent "+a)
		}
		if slices.Contains(agents[:i], a) {
			return nil, usagef("--agent %s is given twice", a)
		}
	}
	chosen := map[string]string{}
	for _, p := range policies {
		name, policy, ok := strings.Cut(p, "=")
		if !ok {
			if len(agents) != 1 {
				return nil, usagef("--policy %q: name the agent (AGENT=POLICY) when serving %d agents", p, len(agents))
			}
			name, policy = agents[0], p
		}
		if !slices.Contains(agents, name) {
			return nil, usagef("--policy %q: agent %s is not served (served: %s)", p, name, strings.Join(agents, ", "))
		}
		if _, dup := chosen[name]; dup {
			return nil, usagef("--policy gives agent %s two policies", name)
		}
		chosen[name] = policy
	}
	out := make([]remote.Agent, 0, len(agents))
	for _, name := range agents {
		a, err := remote.RegisteredAgent(envs.reg, o.entry.Name, config, name, chosen[name], seed)
		if err != nil {
			return nil, usageErr(err, "--policy")
		}
		out = append(out, a)
	}
	return out, nil
}

func newServeEnv(envs *environments) *cobra.Command {
	var (
		sf           serveFlags
		cf           configFlags
		maxSessions  int
		sessionBytes int64
		keyBytes     int64
		idle         time.Duration
	)
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Serve the registered environments (EnvService)",
		Long: `serve env serves every registered environment: a client makes a session of one by
name and JSON configuration, resets and steps it (in the turn-taking multi-agent form),
and closes it; MakeBatch makes a session of N copies of a single-agent environment,
stepped in one call. Sessions idle for longer than --session-idle are closed. With
--key-file, a session's calls need the key of its environment's name.

A caller's configuration names no file on the server, unless --config-dir allows a
folder (then names are relative to it, and reach nothing outside it), and asks for no
more than the environments' limits (--env-limit raises them). Each key (all callers
of a server without --key-file count as one) holds at most --max-sessions sessions
and --max-key-bytes of them; one session at most --max-session-bytes, its answers at
most --max-message-bytes. A session costs what its environment estimates, or else its
observations: a batch of N copies some 3 x N observations. Past a bound, Make and
MakeBatch fail with RESOURCE_EXHAUSTED naming it and its flag.

Environments:
` + envHelp(envs) + limitsHelp(envs),
		Example: "  baton serve env --addr 127.0.0.1:50052\n  baton serve env --key-file keys --tls-cert server.crt --tls-key server.key --addr 0.0.0.0:50052",
		Args:    noArgs("serve env"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := sf.options(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if maxSessions < 1 || idle <= 0 {
				return usagef("--max-sessions %d and --session-idle %v: want 1 or more and a positive duration", maxSessions, idle)
			}
			if sessionBytes < 1 || keyBytes < 1 {
				return usagef("--max-session-bytes %d and --max-key-bytes %d: want 1 or more", sessionBytes, keyBytes)
			}
			r, err := cf.remote(envs)
			if err != nil {
				return err
			}
			s, err := remote.NewServer(append(opts, remote.WithMaxSessions(maxSessions), remote.WithSessionIdle(idle),
				remote.WithMaxSessionBytes(sessionBytes), remote.WithMaxKeyBytes(keyBytes),
				remote.WithConfigDir(r.Dir), remote.WithEnvLimits(r.Limits))...)
			if err != nil {
				return err
			}
			if err := s.AddEnvs(envs.reg); err != nil {
				return err
			}
			return sf.serve(cmd.Context(), s, "environments "+strings.Join(envs.names(), ", "), false, cmd.OutOrStdout())
		},
	}
	cmd.Flags().SortFlags = false
	cmd.Flags().IntVar(&maxSessions, "max-sessions", remote.DefaultMaxSessions, "keep at most `N` sessions open per key")
	cmd.Flags().Int64Var(&sessionBytes, "max-session-bytes", remote.DefaultMaxSessionBytes, "refuse a session estimated to take more than `N` bytes")
	cmd.Flags().Int64Var(&keyBytes, "max-key-bytes", remote.DefaultMaxKeyBytes, "refuse a session that takes the sessions of its key past `N` bytes")
	cmd.Flags().DurationVar(&idle, "session-idle", remote.DefaultSessionIdle, "close sessions unused for `DURATION`")
	cf.register(cmd)
	sf.register(cmd)
	return cmd
}

func newServeTrials(envs *environments) *cobra.Command { return newTrialServer(envs, false) }

// newServeUI is baton serve ui: serve trials with the page.
func newServeUI(envs *environments) *cobra.Command { return newTrialServer(envs, true) }

// newTrialServer is baton serve trials, and with ui baton serve ui.
func newTrialServer(envs *environments, ui bool) *cobra.Command {
	var (
		sf        serveFlags
		cf        configFlags
		workers   int
		remoteOK  bool
		actorKeys string
		actorCA   string
		logDir    string
		maxLive   int
		keep      int
		window    int
		idle      time.Duration
		modelDir  string
	)
	cmd := &cobra.Command{
		Use:     "trials",
		Short:   "Serve a trial controller (TrialService)",
		Long:    trialsLong + envHelp(envs) + limitsHelp(envs),
		Example: "  baton serve trials --workers 4\n  baton serve trials --allow-remote-actors --actor-key-file agent-keys",
		Args:    noArgs("serve trials"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := sf.options(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if why := checkWorkers(workers); why != "" {
				return usagef("%s", why)
			}
			if !remoteOK && (actorKeys != "" || actorCA != "") {
				return usagef("--actor-key-file and --actor-tls-ca need --allow-remote-actors")
			}
			if remoteOK {
				dopts, err := clientOptions("", nil, "", actorCA)
				if err != nil {
					return err
				}
				opts = append(opts, remote.WithRemoteActors(dopts...))
				if actorKeys != "" {
					keys, err := remote.ReadKeys(actorKeys)
					if err != nil {
						return usageErr(err, "--actor-key-file")
					}
					opts = append(opts, remote.WithRemoteActorKeys(keys))
				}
			}
			bounds, err := trialBounds(maxLive, keep, window, idle)
			if err != nil {
				return err
			}
			if idle == 0 {
				idle = -1 // never: WithClientIdleTimeout's 0 is its default
			}
			opts = append(opts, remote.WithClientIdleTimeout(idle))
			copts := append([]runners.ControllerOption{runners.WithWorkers(workers)}, bounds...)
			if logDir != "" {
				if err := newLogDir(logDir); err != nil {
					return err
				}
				ds, err := datalog.NewDataset(logDir)
				if err != nil {
					return fmt.Errorf("--log %s: %w", logDir, err)
				}
				// Closed when the server has stopped (its trials with it), so that
				// every part gets its footer.
				defer ds.Close() // a second Close does nothing
				w, err := ds.NewWriter()
				if err != nil {
					return fmt.Errorf("--log %s: %w", logDir, err)
				}
				copts = append(copts, runners.WithSinks(datalog.NewLocked(w)))
				sf.metrics.AddLog(ds.Stats)
			}
			if sf.metrics != nil {
				copts = append(copts, runners.WithSinks(sf.metrics.Sink()))
			}
			r, err := cf.remote(envs)
			if err != nil {
				return err
			}
			reg, err := envs.reg.Remote(r) // callers' configurations name no server file
			if err != nil {
				return usageErr(err, "--env-limit")
			}
			c, err := runners.NewController(reg, copts...)
			if err != nil {
				return err
			}
			if ui {
				wopts := []webui.Option{webui.WithTrials(c, sf.keys)}
				if modelDir != "" {
					store, err := models.OpenDir(modelDir)
					if err != nil {
						return usageErr(err, "--models")
					}
					wopts = append(wopts, webui.WithModels(store, sf.keys))
				}
				opts = append(opts, remote.WithHTTPHandler(webui.Handler(envs.reg, wopts...)))
			}
			s, err := remote.NewServer(opts...)
			if err != nil {
				return err
			}
			if err := s.AddTrials(c); err != nil {
				return err
			}
			return sf.serve(cmd.Context(), s, "trials of "+strings.Join(envs.names(), ", "), ui, cmd.OutOrStdout())
		},
	}
	if ui {
		cmd.Use, cmd.Short, cmd.Long = "ui", "Serve trials and the page where people play and watch them", uiLong+envHelp(envs)+limitsHelp(envs)
		cmd.Example = "  baton serve ui --addr 127.0.0.1:8080\n  baton serve ui --key-file keys --tls-cert cert.pem --tls-key key.pem"
		cmd.Args = noArgs("serve ui")
		cmd.Flags().StringVar(&modelDir, "models", "", "show the models of the registry in `DIR` on the page, each with its learning curve, the newest version of each as it arrives (names granted by --key-file's NAME=KEY lines)")
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.IntVar(&workers, "workers", 0, "run at most `N` trials at once; 0 means one per CPU; at most 4 per CPU, or 256")
	fl.IntVar(&maxLive, "max-live-trials", runners.DefaultMaxLive, "hold at most `N` trials pending or running; a Start past it is refused")
	fl.IntVar(&keep, "keep-finished", runners.DefaultKeepFinished, "keep the last `N` finished trials; older ones are forgotten (--log keeps them)")
	fl.IntVar(&window, "episode-window", runners.DefaultEpisodeWindow, "keep each trial's last `N` episodes (every episode is summed up)")
	fl.DurationVar(&idle, "client-idle-timeout", remote.DefaultClientIdleTimeout, "stop a trial whose client actor has not acted for `DURATION` (0: never), and cap what clients ask for")
	fl.StringVar(&logDir, "log", "", "write every step of every trial to an Arrow activity log in `DIR` (created; it must hold no log yet), complete when the server stops")
	fl.BoolVar(&remoteOK, "allow-remote-actors", false, "let trials name agents served elsewhere (grpc://HOST:PORT[/AGENT])")
	fl.StringVar(&actorKeys, "actor-key-file", "", "the keys this server presents to remote actors, from `FILE` (NAME=KEY lines, or one bare key)")
	fl.StringVar(&actorCA, "actor-tls-ca", "", "trust the PEM certificates of `FILE` for grpcs:// remote actors")
	cf.register(cmd)
	sf.register(cmd)
	return cmd
}

// trialBounds checks the flags that bound what a trial server holds and returns the
// controller's options.
func trialBounds(maxLive, keep, window int, idle time.Duration) ([]runners.ControllerOption, error) {
	var bad []string
	for _, f := range []struct {
		name string
		v    int
	}{{"--max-live-trials", maxLive}, {"--keep-finished", keep}, {"--episode-window", window}} {
		if f.v < 1 {
			bad = append(bad, fmt.Sprintf("%s %d: want 1 or more", f.name, f.v))
		}
	}
	if idle < 0 {
		bad = append(bad, fmt.Sprintf("--client-idle-timeout %v: want 0 (never) or a positive duration", idle))
	}
	if len(bad) > 0 {
		return nil, usagef("%s", strings.Join(bad, "; "))
	}
	return []runners.ControllerOption{runners.WithMaxLive(maxLive), runners.WithKeepFinished(keep), runners.WithEpisodeWindow(window)}, nil
}

// clientOptions returns the options of a client of the agent name: the key keys
// give it (its own or the default key), and the CA of caFile.
func clientOptions(agentName string, keys *remote.Keys, keyFile, caFile string) ([]remote.DialOption, error) {
	var opts []remote.DialOption
	if keys != nil {
		if key, ok := keys.For(agentName); ok {
			opts = append(opts, remote.WithKey(key))
		} else if agentName != "" {
			return nil, usagef("--key-file %s has no key for agent %s, nor a default key", keyFile, agentName)
		}
	}
	if caFile != "" {
		cfg, err := remote.ClientTLS(caFile)
		if err != nil {
			return nil, usageErr(err, "TLS CA")
		}
		opts = append(opts, remote.WithTLS(cfg))
	}
	return opts, nil
}

// remotePolicies are the agents of a baton run played by remote agents.
type remotePolicies struct {
	clients map[string]*remote.AgentClient // by agent name
	targets map[string]string
}

func (r *remotePolicies) close() {
	for _, c := range r.clients {
		_ = c.Close()
	}
}

// dialRemotePolicies takes the --policy AGENT=grpc://HOST:PORT flags out of flags,
// dials each remote agent with the key of keyFile for its agent (and the CA of
// caFile for grpcs://), checks that it is the environment's agent, and returns the
// other flags. Bad flags and a remote agent that does not match are usage errors; a
// server that cannot be reached is a failure.
func dialRemotePolicies(ctx context.Context, o *opened, flags []string, keyFile, caFile string) ([]string, *remotePolicies, error) {
	rp := &remotePolicies{clients: map[string]*remote.AgentClient{}, targets: map[string]string{}}
	var keys *remote.Keys
	if keyFile != "" {
		k, err := remote.ReadKeys(keyFile)
		if err != nil {
			return nil, nil, usageErr(err, "--key-file")
		}
		keys = &k
	}
	var local []string
	for _, p := range flags {
		name, target, ok := strings.Cut(p, "=")
		if !ok || !remote.IsRemoteTarget(target) {
			local = append(local, p)
			continue
		}
		spec := o.agent(name)
		if spec == nil {
			rp.close()
			return nil, nil, usageErr(&registry.NameError{Kind: registry.ErrUnknownAgent, Name: name, Env: o.entry.Name, Choices: o.agentNames()}, "--policy "+p)
		}
		if _, dup := rp.clients[name]; dup {
			rp.close()
			return nil, nil, usagef("--policy gives agent %q two remote agents", name)
		}
		opts, err := clientOptions(name, keys, keyFile, caFile)
		if err != nil {
			rp.close()
			return nil, nil, err
		}
		if _, _, path, err := remote.ParseTarget(target); err == nil && path == "" {
			opts = append(opts, remote.WithAgent(name))
		}
		c, err := remote.DialAgent(ctx, target, opts...)
		if err != nil {
			rp.close()
			if errors.Is(err, remote.ErrConfig) || errors.Is(err, remote.ErrMismatch) {
				return nil, nil, usageErr(err, "--policy "+p)
			}
			if keys != nil && errors.Is(err, remote.ErrUnauthenticated) && !errors.Is(err, remote.ErrPermissionDenied) {
				// The server knows no key of that value: say which key it was.
				return nil, nil, fmt.Errorf("--policy %s: the server refused the key --key-file %s gives for %s: %w", p, keyFile, name, err)
			}
			return nil, nil, fmt.Errorf("--policy %s: %w", p, err)
		}
		rp.clients[name], rp.targets[name] = c, target
		if err := c.Check(*spec); err != nil {
			rp.close()
			return nil, nil, usageErr(err, "--policy "+p)
		}
	}
	for _, p := range local {
		if name, _, _ := strings.Cut(p, "="); rp.clients[name] != nil {
			rp.close()
			return nil, nil, usagef("--policy gives agent %q a remote agent and %s (choose one)", name, p)
		}
	}
	if len(rp.clients) == 0 && (keyFile != "" || caFile != "") {
		return nil, nil, usagef("--key-file and --tls-ca are for remote agents: give one with --policy AGENT=grpc://HOST:PORT")
	}
	return local, rp, nil
}
