//go:build race

package runners_test

const raceEnabled = true
