package webtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/batonrl/baton/agent"
	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/internal/golden"
	"github.com/batonrl/baton/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRender draws the shop as the default policies test it, at several ticks, through
// the registry entry as displays do.
func TestRender(t *testing.T) {
	reg := registry.New()
	require.NoError(t, webtest.Register(reg))
	e, err := reg.Lookup("webtest")
	require.NoError(t, err)
	f, err := e.Open(nil)
	require.NoError(t, err)
	for _, tick := range []int{0, 1, 3, 6, 40} {
		t.Run(fmt.Sprintf("tick-%d", tick), func(t *testing.T) {
			m, err := f.NewEnv(registry.EnvOptions{})
			require.NoError(t, err)
			heuristic, err := webtest.NewHeuristic(rand.New(rand.NewPCG(1, 0)))
			require.NoError(t, err)
			policies := map[string]agent.Policy{webtest.StrategyName: heuristic, webtest.MotionName: webtest.Scripted{}}
			turn, err := m.Reset(1)
			require.NoError(t, err)
			for turn.Tick < tick && !turn.Over {
				rep := turn.Acting()
				raw, err := policies[rep.Agent].Act(context.Background(), rep.Obs, rep.Mask)
				require.NoError(t, err)
				turn, err = m.Step(rep.AgentID, raw)
				require.NoError(t, err)
			}
			fr := e.Look.Frame(m)
			sc, ok := fr.Scene.(webtest.Scene)
			require.True(t, ok)
			s, ok := webtest.FinalState(turn)
			if ok {
				assert.Equal(t, s.URL(), sc.URL)
				assert.Equal(t, s.Target(), sc.Target)
				assert.Len(t, sc.Elements, len(s.Targets()))
			}
			golden.Frame(t, fmt.Sprintf("render-tick-%d", tick), fr)
		})
	}
	t.Run("zero state", func(t *testing.T) {
		assert.True(t, webtest.State{}.Render().IsZero())
	})
}
