//go:build race

package cartpole_test

const raceEnabled = true
