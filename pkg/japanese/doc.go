// Package japanese is the rules engine of Japanese joker (iaponuri jokeri),
// the two-player joker with open columns on the table, and its bots.
//
// It is a pure state machine: no I/O, no clock, no global RNG. A Game is a
// plain value of fixed-size arrays and small integers, so Clone is a copy and
// two games compare with ==. Every hand is dealt from its own shuffle key
// with fairdeal.Shuffle, and hand 0's deal draws the first declarer from the
// stream after the shuffle (docs/fair-play.md gives the layout). A live
// match (NewLive) holds no seed: before each hand it waits in PhaseDeal for
// Deal with the key the table's commit–reveal made. A local match (New) —
// self play, tests — deals hand h itself from fairdeal.LocalKey(seed, h), so
// it is replayed exactly from its seed and its moves.
//
// The flow of a hand: the declarer sees three cards and chooses trump (a
// suit, or bezi: no trump); the rest of the deck is then dealt — five more
// cards to each hand and five columns per player on the table, each a
// face-up card on a face-down card — and eighteen tricks are played. The
// player with more tricks scores the difference; the match ends when a
// player reaches the target. docs/rules-japanese.md lists the rules and the
// decisions taken where the rules are silent.
//
// # Moves
//
// A Move is {Kind, Seat, Card, Suit}. Its text form (MarshalText, used in
// game records and logs) is the seat, the kind and the arguments:
//
//	0 trump H        declarer 0 chooses hearts
//	1 trump bezi     declarer 1 chooses no trump
//	0 play QD        seat 0 plays the queen of diamonds (from hand or a column)
//	1 play JK2 S     seat 1 leads a joker naming spades
//	0 resign         seat 0 resigns: seat 1 wins the match
//	1 forfeit        seat 1 lost by forfeit (the service's reconnect grace ran out)
//
// Its JSON form (the WebSocket protocol) is an object:
//
//	{"seat":1,"kind":"play","card":"JK2","suit":"S"}
//	{"seat":0,"kind":"trump","suit":"bezi"}
//
// Cards are written as cards.Card.String does ("10H", "AS", "JK1"); suits as
// S, H, D, C, and "bezi" for no trump. A card is named without its place:
// every card is in exactly one place, the hand or a face-up column.
//
// # Events
//
// Apply appends the events a move caused. An Event with To == Public may go
// to everyone; any other To is the only seat allowed to see it (the cards
// dealt to a hand, a face-down card reaching its owner's hand).
//
// # Numbering
//
// Seats are 0 and 1. Hand and trick numbers in structs are 0-based; error
// messages count from 1, as players do.
package japanese
