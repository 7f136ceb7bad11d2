//go:build !race

package webtest_test

const raceEnabled = false
