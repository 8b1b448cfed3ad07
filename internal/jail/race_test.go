//go:build race

package jail_test

const raceEnabled = true
