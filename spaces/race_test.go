//go:build race

package spaces_test

const raceEnabled = true
