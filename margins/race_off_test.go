//go:build !race

package margins_test

const raceEnabled = false
