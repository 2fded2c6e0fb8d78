//go:build !race

package japanese

// checkEvery: the property tests check legality and views exhaustively at
// one move in checkEvery.
const checkEvery = 2
