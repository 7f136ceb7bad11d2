//go:build race

package env_test

const raceEnabled = true
