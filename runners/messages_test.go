package runners_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/env"
	"github.com/batonrl/baton/envs/maze"
	"github.com/batonrl/baton/event"
	"github.com/batonrl/baton/hrl"
	"github.com/batonrl/baton/registry"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// chatty is the maze with an environment that talks: it greets the strategy agent at
// each reset, and echoes every message it receives to the sender's agent on its next
// step.
type chatty struct {
	env.MultiAgent
	received []string
	out      []event.Message
	next     []event.Message
}

func (c *chatty) Reset(seed uint64) (env.Turn, error) {
	c.out, c.next = []event.Message{{To: maze.StrategyName, Payload: []byte("hello")}}, nil
	return c.MultiAgent.Reset(seed)
}

func (c *chatty) Step(id string, a agent.RawAction) (env.Turn, error) {
	c.out, c.next = c.next, nil
	return c.MultiAgent.Step(id, a)
}

func (c *chatty) Receive(m event.Message) {
	c.received = append(c.received, fmt.Sprintf("%s@%d %s", m.From, m.Sent, m.Payload))
	from, _, _ := strings.Cut(m.From, "_")
	c.next = append(c.next, event.Message{To: from, Payload: append([]byte("echo:"), m.Payload...)})
}

func (c *chatty) Outbox() []event.Message { return c.out }

// talker is an actor: before it plays its policy, it records its inbox and lets say
// use the exchange.
type talker struct {
	agent.Policy
	inbox []string
	say   func(x *runners.Exchange) error
	errs  []error
}

func (a *talker) Interact(ctx context.Context, x *runners.Exchange, obs []float32, mask []bool) (agent.RawAction, error) {
	for _, m := range x.Inbox() {
		a.inbox = append(a.inbox, fmt.Sprintf("t%d %s->%s@%d %s", x.Tick(), m.From, m.To, m.Sent, m.Payload))
	}
	if a.say != nil {
		if err := a.say(x); err != nil {
			a.errs = append(a.errs, err)
		}
	}
	return a.Policy.Act(ctx, obs, mask)
}

// Messages go between actors and the environment, are delivered at the next tick and
// recorded in that tick's step events; actors reward each other.
func TestMessagesAndActorRewards(t *testing.T) {
	defer goleak.VerifyNone(t)
	m, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	var chat *chatty
	reg := registry.New()
	require.NoError(t, reg.Register(registry.Entry{
		Name: "chatty",
		Open: func([]byte) (registry.Factory, error) {
			return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
				rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](m), hrl.Config{})
				chat = &chatty{MultiAgent: rt}
				return chat, err
			}), nil
		},
	}))

	strategy := &talker{Policy: maze.NewOracle(m.Maze()), say: func(x *runners.Exchange) error {
		switch x.Tick() {
		case 0:
			assert.Equal(t, "strategy_0", x.AgentID())
			assert.Equal(t, "chatty-0", x.Trial())
			assert.Equal(t, 0, x.Episode())
			return joinErrs(x.Send(maze.MotionName, []byte("go")), x.Send(event.EnvAddress, []byte("ping")),
				x.Reward("motion_0", 1)) // not reported yet
		case 2:
			return joinErrs(x.Reward("motion_0", 2), // its sub-episode has ended: retroactive
				x.Send("nobody", nil))
		}
		return nil
	}}
	motion := &talker{Policy: maze.AlwaysForward(), say: func(x *runners.Exchange) error {
		if x.Tick() == 1 {
			return x.Reward("strategy_0", 0.5) // waiting for control: its next step
		}
		return nil
	}}
	rec := newRecorder()
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "chatty", Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Value(motion),
	}}, runners.WithSinks(rec))
	require.NoError(t, err)
	s, err := c.Run(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, s.Ended, "%v", s.Failures)

	got := lines(rec.steps("chatty-0"))
	assert.Equal(t, []string{
		`e0 t0 strategy_0<- start acting msg(env->strategy@0 "hello")`,
		`e0 t1 motion_0<-strategy_0 start acting msg(strategy_0->motion@0 "go") msg(strategy_0->env@0 "ping")`,
		`e0 t2 motion_0<-strategy_0 a=1 r=1 env:1 span=1 terminated msg(env->strategy@1 "echo:ping")`,
		`e0 t2 strategy_0<- a=3 r=0.5 env:0 actor:motion:0.5 span=2 acting msg(env->strategy@1 "echo:ping")`,
		`e0 t3 motion_1<-strategy_0 start acting`,
	}, got[:5])
	assert.Equal(t, []string{`t0 env->strategy@0 hello`, `t2 env->strategy@1 echo:ping`}, strategy.inbox)
	assert.Equal(t, []string{`t1 strategy_0->motion@0 go`}, motion.inbox)
	assert.Equal(t, []string{"strategy_0@0 ping"}, chat.received)
	require.Len(t, strategy.errs, 2)
	require.ErrorIs(t, strategy.errs[0], runners.ErrReward)
	require.ErrorIs(t, strategy.errs[1], runners.ErrReceiver)
	assert.Empty(t, motion.errs)

	retro := event.RetroReward{Episode: 0, Tick: 2, AgentID: "motion_0", Agent: "motion", Source: "actor:strategy", Value: 2, ArrivedTick: 2}
	var events []event.RetroReward
	for _, e := range rec.events("chatty-0") {
		if e.Kind == event.KindReward {
			events = append(events, *e.Reward)
		}
	}
	assert.Equal(t, []event.RetroReward{retro}, events)
	assert.Equal(t, 1+0.5, s.Agents[0].Mean)
	assert.Equal(t, 13+2.0, s.Agents[1].Mean)
}

// The plain maze takes no messages.
func TestSendToSilentEnv(t *testing.T) {
	defer goleak.VerifyNone(t)
	var sendErr error
	strategy := &talker{Policy: maze.AlwaysForward(), say: func(x *runners.Exchange) error {
		if x.Tick() == 0 {
			sendErr = x.Send(event.EnvAddress, []byte("hi"))
		}
		return nil
	}}
	oracleSpec := runners.Spec{Env: "maze", Actors: map[string]runners.Actor{maze.StrategyName: runners.Value(oracleTalker(strategy))}}
	res, _ := runOne(t, testRegistry(t), oracleSpec)
	require.Equal(t, event.Ended, res.State, "%v", res.Err)
	require.ErrorIs(t, sendErr, runners.ErrReceiver)
}

// oracleTalker makes a talker play the oracle of the reference maze.
func oracleTalker(a *talker) *talker {
	m, err := maze.Parse(maze.Reference)
	if err != nil {
		panic(err)
	}
	a.Policy = maze.NewOracle(m)
	return a
}

func joinErrs(errs ...error) error {
	errs = slices.DeleteFunc(errs, func(e error) bool { return e == nil })
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// Messages flow when only one side talks: an environment to actors that are plain
// policies, or actors to each other in an environment that takes no messages.
func TestMessagesOneSideTalks(t *testing.T) {
	defer goleak.VerifyNone(t)
	m, err := maze.NewEnv(maze.Config{})
	require.NoError(t, err)
	reg := testRegistry(t)
	require.NoError(t, reg.Register(registry.Entry{
		Name: "chatty",
		Open: func([]byte) (registry.Factory, error) {
			return registry.FactoryFunc(func(registry.EnvOptions) (env.MultiAgent, error) {
				rt, err := hrl.New(hrl.HierarchicalEnv[maze.State, maze.Action](m), hrl.Config{})
				return &chatty{MultiAgent: rt}, err
			}), nil
		},
		Agents: []registry.AgentEntry{
			{Name: maze.StrategyName, Policies: []registry.PolicyEntry{{Name: "oracle", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
				return maze.NewOracle(m.Maze()), nil
			}}}},
			{Name: maze.MotionName, Policies: []registry.PolicyEntry{{Name: "forward", New: func(registry.Factory, *rand.Rand) (agent.Policy, error) {
				return maze.AlwaysForward(), nil
			}}}},
		},
	}))
	tests := []struct {
		name   string
		env    string
		actors func() (map[string]runners.Actor, *talker)
		want   []string // the first step events
		inbox  []string // the motion talker's inbox, when there is one
	}{
		{
			name:   "the environment",
			env:    "chatty",
			actors: func() (map[string]runners.Actor, *talker) { return nil, nil },
			want: []string{
				`e0 t0 strategy_0<- start acting msg(env->strategy@0 "hello")`,
				`e0 t1 motion_0<-strategy_0 start acting`,
			},
		},
		{
			name: "the actors",
			env:  "maze",
			actors: func() (map[string]runners.Actor, *talker) {
				strategy := oracleTalker(&talker{say: func(x *runners.Exchange) error {
					if x.Tick() == 0 {
						return x.Send(maze.MotionName, []byte("go"))
					}
					return nil
				}})
				motion := &talker{Policy: maze.AlwaysForward()}
				return map[string]runners.Actor{maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Value(motion)}, motion
			},
			want: []string{
				`e0 t0 strategy_0<- start acting`,
				`e0 t1 motion_0<-strategy_0 start acting msg(strategy_0->motion@0 "go")`,
				`e0 t2 motion_0<-strategy_0 a=1 r=1 env:1 span=1 terminated`,
			},
			inbox: []string{`t1 strategy_0->motion@0 go`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			actors, motion := tt.actors()
			rec := newRecorder()
			c, err := runners.NewCampaign(reg, runners.Spec{Env: tt.env, Actors: actors}, runners.WithSinks(rec))
			require.NoError(t, err)
			s, err := c.Run(t.Context())
			require.NoError(t, err)
			require.Equal(t, 1, s.Ended, "%v", s.Failures)
			got := lines(rec.steps(tt.env + "-0"))
			require.GreaterOrEqual(t, len(got), len(tt.want))
			assert.Equal(t, tt.want, got[:len(tt.want)])
			if motion != nil {
				assert.Equal(t, tt.inbox, motion.inbox)
			}
		})
	}
}

// RewardAs rewards with the caller's source (a zero reward marks a step), Spec names
// the acting agent and its spaces; an empty source is refused.
func TestExchangeRewardAsAndSpec(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg := registry.New()
	require.NoError(t, maze.Register(reg))
	var specs []string
	strategy := &talker{Policy: agent.PolicyFunc(func(context.Context, []float32, []bool) (agent.RawAction, error) {
		return agent.Discrete(3), nil
	}), say: func(x *runners.Exchange) error {
		specs = append(specs, fmt.Sprintf("%s %v", x.Spec().Name, x.Spec().ActionSpace))
		if x.Tick() == 0 {
			return joinErrs(x.RewardAs("default", x.AgentID(), 0), x.RewardAs("", x.AgentID(), 1))
		}
		return nil
	}}
	rec := newRecorder()
	c, err := runners.NewCampaign(reg, runners.Spec{Env: "maze", Seed: 3, MaxTicks: 6, Actors: map[string]runners.Actor{
		maze.StrategyName: runners.Value(strategy), maze.MotionName: runners.Named("forward"),
	}}, runners.WithSinks(rec))
	require.NoError(t, err)
	_, err = c.Run(t.Context())
	require.NoError(t, err)
	require.Len(t, strategy.errs, 1)
	require.ErrorIs(t, strategy.errs[0], runners.ErrReward)
	assert.Contains(t, strategy.errs[0].Error(), "empty source")
	assert.Equal(t, "strategy Discrete(4)", specs[0])

	var sources []string
	for _, e := range rec.events("maze-0") {
		if e.Kind == event.KindStep && e.Step.AgentID == "strategy_0" && !e.Step.Start {
			for _, s := range e.Step.Sources {
				sources = append(sources, fmt.Sprintf("%s:%g", s.Source, s.Value))
			}
			break
		}
	}
	assert.Equal(t, []string{"env:0", "default:0"}, sources, "the mark is on the step that scores the action")
}
