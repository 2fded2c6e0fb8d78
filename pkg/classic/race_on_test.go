//go:build race

package classic

// raceOn is true under the race detector, which makes the exhaustive
// property checks about ten times slower; they then sample instead.
const raceOn = true
