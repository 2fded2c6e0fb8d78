package classic

// points is one hand's score for the bot comparison, from rules.md's table
// with the default khishti of 200 and no premia: the score sheet package
// owns real scoring.
func points(n, bid, took int) int {
	switch {
	case took == bid && bid == n:
		return 100 * n
	case took == bid:
		return 50 * (bid + 1)
	case bid >= 1 && took == 0:
		return -200
	}
	return 10 * took
}
