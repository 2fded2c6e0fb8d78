//go:build race

package japanese

// checkEvery: under the race detector, which slows the engine tenfold, the
// property tests check legality and views exhaustively at one move in
// checkEvery (every match still checks every event, ending and score).
const checkEvery = 16
