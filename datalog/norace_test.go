//go:build !race

package datalog_test

const raceEnabled = false
