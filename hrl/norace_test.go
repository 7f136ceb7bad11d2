//go:build !race

package hrl_test

const raceEnabled = false
