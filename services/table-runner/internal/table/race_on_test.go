//go:build race

package table

// raceOn is true under the race detector, which makes the strong bots' many
// playouts too slow for the long property runs: they then draw only the
// baseline's levels (the strong bots' own race checks are in pkg/classic
// and pkg/japanese).
const raceOn = true
