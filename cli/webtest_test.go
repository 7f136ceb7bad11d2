package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/batonrl/baton/envs/webtest"
	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webtestKeys are the keys of baton run --json for the web-testing environment, which
// defines metrics.
var webtestKeys = append(append([]string(nil), summaryKeys...), "metrics")

func TestPlayWebtest(t *testing.T) {
	r := runArgs(t, "play", "webtest")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr)
	ls := lines(r.stdout)
	assert.Regexp(t, `^\s+0\s+-\s+-\s+strategy_0\s+0.000\s+0\s+start\s+\{"url":"/","logged_in":false,"cart":0,"coverage":0.0062,"defects":\[\],"budget":1000\}$`, ls[1])
	// The heuristic tests the whole shop, finds every defect and finishes.
	assert.Equal(t, "episode over after 714 ticks: strategy_0 terminated", lastLine(r.stdout))
	assert.Contains(t, r.stdout, `"defects":["search-unicode","careers-404","wishlist-dead","order-note-script","coupon-removal"]`)
	assert.Contains(t, r.stdout, `"url":"/500"`)
	assert.Contains(t, r.stdout, `"url":"/404"`)
	assert.Contains(t, r.stdout, `"outcome":"no response"`)
	byID, byName := returnsOf(t, r.stdout)
	assert.Equal(t, "5.988", byName["strategy"])
	assert.Contains(t, byID, "motion_0")

	// The same flags print the same episode; another seed draws other ties.
	assert.Equal(t, r.stdout, runArgs(t, "play", "webtest", "--seed", "1").stdout)
	assert.NotEqual(t, r.stdout, runArgs(t, "play", "webtest", "--seed", "2").stdout)
}

// TestPlayWebtestActions checks that the actions show what they mean, as the
// environment's registry entry names them, never as slot or operation numbers.
func TestPlayWebtestActions(t *testing.T) {
	strategy := regexp.MustCompile(`^((link|button|form) ".+"( \(login\))?|back( \(login\))?|finish)$`)
	motion := regexp.MustCompile(`^(focus|type (valid|empty|long|negative|unicode|script)|toggle|choose|submit|click)$`)
	// The action column of a text line: the acting agent's id, its action, then the
	// agent reported (a label may hold spaces).
	row := regexp.MustCompile(`^\s*\d+  (\S+)\s+(.+?)\s+((strategy|motion)_\d+)\s+-?\d+\.\d{3} `)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"heuristic", []string{"play", "webtest", "--max-ticks", "40"}, "play-webtest-max40.txt"},
		{"heuristic, whole episode", []string{"play", "webtest"}, ""},
		{"random", []string{"play", "webtest", "--policy", "strategy=random", "--policy", "motion=random", "--seed", "3"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, tt.args...)
			require.Equal(t, 0, r.code, r.stderr)
			seen := map[string]bool{}
			for _, l := range lines(r.stdout)[2:] { // the header and the reset
				m := row.FindStringSubmatch(l)
				if m == nil {
					break // the returns
				}
				actor, action := m[1], m[2]
				switch {
				case strings.HasPrefix(actor, "strategy_"):
					assert.Regexp(t, strategy, action, l)
					seen[strings.Fields(action)[0]] = true
				case strings.HasPrefix(actor, "motion_"):
					assert.Regexp(t, motion, action, l)
					seen["motion"] = true
				default:
					t.Fatalf("acting agent %q: %s", actor, l)
				}
			}
			assert.True(t, seen["link"] && seen["form"] && seen["motion"], "links, forms and motions: %v", seen)
			if tt.golden != "" {
				golden(t, tt.golden, r.stdout)
			}
		})
	}

	// --json names every action the text names, beside its raw value.
	r := runArgs(t, "play", "webtest", "--json", "--max-ticks", "12")
	require.Equal(t, 0, r.code, r.stderr)
	var names []string
	for _, l := range lines(r.stdout) {
		var rep jsonReport
		require.NoError(t, json.Unmarshal([]byte(l), &rep), l)
		if rep.Action == nil {
			assert.Nil(t, rep.ActionName, l)
			continue
		}
		require.NotNil(t, rep.ActionName, l)
		names = append(names, *rep.ActionName)
	}
	assert.Equal(t, []string{"click", `link "Featured: the widget"`, "click", `link "All products"`, "click", `link "Cart"`,
		"focus", "type valid", "submit", `form "Apply a coupon"`, `link "My account" (login)`, `link "Your orders"`}, names)
}

func TestPlayWebtestJSON(t *testing.T) {
	r := runArgs(t, "play", "webtest", "--json", "--policy", "strategy=random", "--policy", "motion=random", "--seed", "3")
	require.Equal(t, 0, r.code, r.stderr)
	var last jsonReport
	procedure, loggedIn := false, false
	for i, l := range lines(r.stdout) {
		var rep struct {
			jsonReport
			Info webtest.Info `json:"info"`
		}
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&rep), "line %d: %s", i, l)
		if i == 0 {
			assert.Equal(t, "strategy_0", rep.AgentID)
			assert.True(t, rep.Start)
			assert.Equal(t, "/", rep.Info.URL)
		}
		if rep.Agent == "strategy" && rep.ActingAgentID != nil && *rep.ActingAgentID == rep.AgentID && !loggedIn && rep.Info.LoggedIn {
			procedure = true // the strategy's own step logged in: the login procedure ran
		}
		loggedIn = rep.Info.LoggedIn
		last = rep.jsonReport
	}
	assert.Equal(t, "strategy_0", last.AgentID)
	assert.True(t, last.Terminated || last.Truncated)
	assert.True(t, procedure, "the random strategy ran into the login procedure")
}

func TestRunWebtest(t *testing.T) {
	r := runArgs(t, "run", "webtest", "--json", "--trials", "20", "--workers", "2")
	require.Equal(t, 0, r.code, r.stderr)
	s, obj := decodeSummary(t, r.stdout, webtestKeys)
	assert.Equal(t, map[string]string{"strategy": "heuristic", "motion": "scripted"}, s.Policies)
	assert.Equal(t, 20, s.Episodes)
	assert.Equal(t, 1.0, s.SuccessRate.value, "every defect found in every trial")
	assert.Equal(t, agentSummary{Mean: 5, Min: 5, Max: 5, Episodes: 20}, s.Metrics["defects_found"])
	assert.Greater(t, s.Metrics["coverage"].Mean, 0.95)
	assert.Equal(t, 20, s.Metrics["coverage"].Episodes)
	var metrics map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj["metrics"], &metrics))
	for name, m := range metrics {
		assert.Len(t, m, 5, "metric %s: mean, std, min, max, episodes", name)
	}

	// The figures are those of the same campaign through package runners.
	want := twin(t, runners.Spec{Env: "webtest", Seed: 1}, 20)
	require.Len(t, want.Metrics, 2)
	for _, m := range want.Metrics {
		assert.Equal(t, agentSummary{Mean: m.Mean, Std: m.Std, Min: m.Min, Max: m.Max, Episodes: m.Episodes}, s.Metrics[m.Name], m.Name)
	}
	assert.Equal(t, want.EnvSteps, s.EnvSteps)

	// The text summary shows the metrics after the returns.
	r = runArgs(t, "run", "webtest", "--trials", "20", "--policy", "strategy=random")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "env            webtest (seed 1; strategy=random, motion=scripted)\n")
	assert.Regexp(t, regexp.MustCompile(`(?m)^success rate   0\.\d{3} \(\d+ of 20 episodes\)$`), r.stdout)
	assert.Regexp(t, regexp.MustCompile(`(?m)^metric\s+episodes\s+mean\s+std\s+min\s+max\n`+
		`coverage\s+20\s+0\.\d{3}\s+0\.\d{3}\s+0\.\d{3}\s+[01]\.\d{3}\n`+
		`defects_found\s+20\s+\d\.\d{3}\s+\d\.\d{3}\s+\d\.000\s+\d\.000\n`), r.stdout)

	// An environment without metrics prints no metric table and no "metrics" key.
	r = runArgs(t, "run", "maze", "--trials", "2")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "metric")
}

func TestRunWebtestConfigs(t *testing.T) {
	tests := []struct {
		name, config string
		check        func(t *testing.T, s runSummary)
	}{
		{"small budget", `{"strategy": {"budget": 60}}`, func(t *testing.T, s runSummary) {
			assert.Equal(t, 0.0, s.SuccessRate.value)
			assert.Less(t, s.Metrics["defects_found"].Mean, 5.0)
		}},
		{"generated site", `{"generate": {"pages": 25, "seed": 2}, "strategy": {"budget": 20000}}`, func(t *testing.T, s runSummary) {
			assert.Equal(t, 1.0, s.SuccessRate.value)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runArgs(t, "run", "webtest", "--json", "--trials", "4", "--env-config", tt.config)
			require.Equal(t, 0, r.code, r.stderr)
			s, _ := decodeSummary(t, r.stdout, webtestKeys)
			assert.Equal(t, 4, s.Ended)
			tt.check(t, s)
		})
	}
	checkBadInput(t, runArgs(t, "run", "webtest", "--env-config", `{"site_file": "/no/such/site.json"}`),
		`bad --env-config for webtest: webtest: invalid configuration: registry: site_file "/no/such/site.json": cannot be opened: ... (fields: site{...}, site_file, generate{pages, seed}, strategy{budget, reward_for_coverage, reward_for_defect}, motion{max_steps, reward_per_action, reward_for_completion})`)
	checkBadInput(t, runArgs(t, "run", "webtest", "--env-config", `{"site_file": "/dev/zero"}`),
		`bad --env-config for webtest: webtest: invalid configuration: registry: site_file "/dev/zero": not a regular file (fields: ...)`)
	checkBadInput(t, runArgs(t, "play", "webtest", "--env-config", `{"site": {"start": "x", "pages": []}}`),
		`bad --env-config for webtest: webtest: invalid site: the site has no pages...`)
}
