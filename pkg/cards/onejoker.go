package cards

// OneJoker drops, in place, the moves that play Joker2 when some move plays
// Joker1: the two jokers play alike, so a bot weighing its moves need not
// try both. card is the card a move plays.
func OneJoker[M any](moves []M, card func(M) Card) []M {
	has1 := false
	for _, m := range moves {
		if card(m) == Joker1 {
			has1 = true
			break
		}
	}
	if !has1 {
		return moves
	}
	out := moves[:0]
	for _, m := range moves {
		if card(m) != Joker2 {
			out = append(out, m)
		}
	}
	return out
}
