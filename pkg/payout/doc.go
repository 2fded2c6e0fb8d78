// Package payout divides the pot of a Domino Coin game among its players:
// pure, deterministic, and exact to the coin (the shares always add up to
// the pot).
//
// # The payout table
//
// Each player at a coin table stakes the table's stake; the pot is the sum
// of the stakes the wallet collected. The pot is paid by final place:
//
//	game       1st    2nd    3rd    4th
//	classic    50 %   30 %   20 %    0 %
//	japanese  100 %    0 %
//
// # Who can win
//
// Only an eligible player — one who staked and did not forfeit — takes a
// place. A bot never wins coins, and neither does a seat whose player left
// a classic game (the runner tells the wallet, which marks the stake
// forfeited; the bot that plays the seat on takes no place). The eligible
// players take places 1, 2, … in their order of the final standings; the
// places the others would have held are simply not paid, and the table's
// shares of the places that are paid are scaled up to the whole pot. So a
// forfeited stake stays in the pot and goes to the players who stayed, by
// their placing: with one leaver in classic the three who stayed are paid
// 50/30/20 exactly as if the leaver had come last; with two leavers the two
// who stayed share 50:30 of the pot (62.5 % and 37.5 %); a lone stayer
// takes it all. A Japanese resignation, timeout or expired grace leaves the
// opponent the only eligible player (scoring also ranks the loser last), so
// the opponent takes the pot. If nobody is eligible (every player left),
// the pot is Unclaimed: the wallet pays it to its forfeit account, so no
// coin disappears.
//
// # Ties and the odd coin
//
// Players tied on a place share the payouts of the places they cover
// equally (two players tied for 2nd in classic share 30 % + 20 %). Every
// player first gets the floor of their exact share; the coins left over
// (fewer than the number of eligible players) go one each to the eligible
// players in order of place, and within a place of seat number — the odd
// coin goes to the better placed, and among tied players to the lowest seat.
// A better place therefore never gets less than a worse one, and tied
// players differ by at most one coin.
package payout
