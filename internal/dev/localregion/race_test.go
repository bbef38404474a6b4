//go:build race

package localregion

const raceEnabled = true
