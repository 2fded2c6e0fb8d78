// Package classic is the rules engine of classic Joker for four players, each
// for themselves: the deal, trump, bidding, the play of tricks with the two
// jokers, and the record of every hand's bids and tricks. It is pure: no I/O,
// no clock, no global random source. Scoring (khishti, premia, moshla) lives in
// the score sheet package and reads HandResults.
//
// # State
//
// Game is a plain value. Every hand is dealt from its own shuffle key with
// fairdeal.Shuffle, and hand 0's deal draws the first dealer from the stream
// after the shuffle (docs/fair-play.md gives the layout). A live game
// (NewLive) holds no seed: before each hand it waits in PhaseDeal for Deal
// with the key the table's commit–reveal made. A local game (New) — self
// play, tests, the demo — deals hand h itself from fairdeal.LocalKey(seed,
// h), so it is its seed plus its moves. A snapshot (MarshalBinary) is a few
// hundred bytes; State and SetState hand the same state over as plain values
// to durable formats kept elsewhere (the table's protobuf snapshot). Legal
// and Apply do not allocate.
//
// # Moves
//
// A Move is one seat's decision. As text (MarshalText, and so as a JSON
// string) it is "<seat> <kind> <arguments>":
//
//	"1 trump H"            the seat after the dealer names hearts (nine-card hands)
//	"1 trump NT"           ... or no trump
//	"2 bid 0"              a bid (0 = pass)
//	"3 play AH"            a card
//	"0 play JK1 take"      a joker on a trick led by another seat: take or discard
//	"2 play JK2 highest S" a leading joker: a suit and "highest" or "give"
//
// Suits are S, H, D, C; cards are written as cards.Card.String does.
//
// # Events
//
// Apply appends Events: flat values whose To is Public (-1) or the one seat
// allowed to see them (its dealt cards). Event.MarshalJSON writes the fields
// of the kind by name. StartEvents gives the events of the first deal, which
// New makes without an Apply.
//
// # Views
//
// View(seat) is everything that seat may know: its own cards, bids, tricks,
// trump, the cards on the table and the results so far, never another seat's
// cards. In a nine-card hand, before trump is named, only the chooser sees
// cards, and only its first three.
//
// # Bots
//
// Bot is the baseline Player: it bids by counting likely tricks and plays to
// make its bid exactly, deterministically, from what its seat may see, without
// allocating. RandomBot plays uniformly among the legal moves.
//
// The rules, and every point where this package had to decide what the rules
// leave open, are written down in docs/rules-classic.md.
package classic
