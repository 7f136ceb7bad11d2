package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/batonrl/baton/runners"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example curriculum promotes the oracle from 5 x 5 to 7 x 7 to 9 x 9 mazes, in
// that order, whatever the number of workers.
func TestRunSchedule(t *testing.T) {
	const file = "../envs/maze/curriculum.json"
	want := []runners.TaskRun{{Task: "5x5", First: 0, Trials: 10}, {Task: "7x7", First: 10, Trials: 10}, {Task: "9x9", First: 20, Trials: 40}}
	for _, workers := range []string{"1", "4"} {
		t.Run("workers "+workers, func(t *testing.T) {
			r := runArgs(t, "run", "--schedule", file, "--json", "--workers", workers)
			require.Equal(t, 0, r.code, r.stderr)
			s, _ := decodeSummary(t, r.stdout, append(summaryKeys, "schedule"))
			require.NotNil(t, s.Schedule)
			assert.Equal(t, want, s.Schedule.Runs, "the tasks taken, in order")
			assert.Equal(t, "success", s.Schedule.Order)
			assert.Equal(t, 60, s.Trials)
			names := []string{}
			for _, task := range s.Schedule.Tasks {
				names = append(names, task.Name)
				assert.Equal(t, map[string]string{"strategy": "oracle", "motion": "forward"}, task.Policies, task.Name)
				assert.Equal(t, task.Trials, task.Successes, "%s: the oracle always reaches the goal", task.Name)
			}
			assert.Equal(t, []string{"5x5", "7x7", "9x9"}, names)
		})
	}
}

// A schedule's tasks go to the log's trials table, and baton inspect sums them up.
func TestRunScheduleLog(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "schedule.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"order": "in_order", "tasks": [
		{"name": "reference", "env": "maze", "trials": 3, "policies": {"motion": "forward"}},
		{"name": "small", "env": "maze", "trials": 2, "config": {"generate": {"rows": 5, "cols": 5, "per_episode": true}, "procedure": true}}]}`), 0o600))
	log := filepath.Join(dir, "log")
	r := runArgs(t, "run", "--schedule", file, "--log", log, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	s, _ := decodeSummary(t, r.stdout, append(summaryKeys, "schedule", "log"))
	assert.Equal(t, []runners.TaskRun{{Task: "reference", First: 0, Trials: 3}, {Task: "small", First: 3, Trials: 2}}, s.Schedule.Runs)

	r = runArgs(t, "inspect", log, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var got struct {
		Tasks []struct {
			Name        string  `json:"name"`
			Trials      int     `json:"trials"`
			Episodes    int     `json:"episodes"`
			Successes   *int    `json:"successes"`
			SuccessRate float64 `json:"success_rate"`
			First       int     `json:"first"`
			Last        int     `json:"last"`
		} `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got.Tasks, 2)
	assert.Equal(t, "reference", got.Tasks[0].Name)
	assert.Equal(t, [4]int{3, 3, 0, 2}, [4]int{got.Tasks[0].Trials, got.Tasks[0].Episodes, got.Tasks[0].First, got.Tasks[0].Last})
	assert.Equal(t, "small", got.Tasks[1].Name)
	assert.Equal(t, [4]int{2, 2, 3, 4}, [4]int{got.Tasks[1].Trials, got.Tasks[1].Episodes, got.Tasks[1].First, got.Tasks[1].Last})
	require.NotNil(t, got.Tasks[1].Successes)
	assert.Equal(t, 2, *got.Tasks[1].Successes)

	r = runArgs(t, "inspect", log)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "reference         3         3     1.000        0-2\n")
}

func TestRunScheduleBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	good := write("good.json", `{"order": "in_order", "tasks": [{"env": "maze", "trials": 1}]}`)
	bad := write("bad.json", `{"order": "success", "tasks": [
		{"name": "tiny", "env": "maze", "config": {"generate": {"rows": 3, "cols": 5, "per_episode": true}}},
		{"name": "walker", "env": "maze", "policies": {"walker": "random"}},
		{"name": "lost", "env": "mace"}]}`)
	notJSON := write("not.json", `{"order": in_order}`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"environment too", []string{"maze", "--schedule", good}, `run --schedule takes its environments from the schedule's tasks, not ["maze"]`},
		{"policy too", []string{"--schedule", good, "--policy", "motion=forward"}, "--schedule " + good + ": --policy: the schedule's tasks give the policies"},
		{"env-config too", []string{"--schedule", good, "--env-config", "{}"}, "--schedule " + good + ": --env-config: the schedule's tasks give the configurations"},
		{"trials of in_order", []string{"--schedule", good, "--trials", "5"}, "--schedule " + good + ": --trials: the in_order order plays each task for its own trials"},
		{"missing file", []string{"--schedule", filepath.Join(dir, "none.json")}, `--schedule "` + filepath.Join(dir, "none.json") + `": cannot be opened: open ` + filepath.Join(dir, "none.json") + ": no such file or directory"},
		{"not JSON", []string{"--schedule", notJSON}, "--schedule " + notJSON + ": invalid schedule: invalid character 'i' looking for beginning of value"},
		{"tasks named with their fields", []string{"--schedule", bad}, "--schedule " + bad + ": invalid schedule: task 0 (tiny): config: invalid environment configuration for maze: " +
			"maze: invalid configuration: generate: maze: invalid map: generated mazes need odd sides from 5 to 101; got 3 x 5; " +
			`invalid schedule: task 1 (walker): policies: unknown agent "walker" of maze (choices: strategy, motion); ` +
			`invalid schedule: task 2 (lost): env: unknown environment "mace" (choices: maze, maze-flat, cartpole, webtest, rps)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkBadInput(t, runArgs(t, append([]string{"run"}, tt.args...)...), tt.want)
		})
	}
}
