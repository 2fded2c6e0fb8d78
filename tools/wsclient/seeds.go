package wsclient

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/pulka/pulka/pkg/cards/cardpb"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// This file is the client's half of the commit–reveal deal
// (docs/fair-play.md): a Conn answers every hand_committed that awaits its
// player's seat with a client seed from crypto/rand, by itself, and keeps
// what it needs to check the hand once hand_revealed comes. Doing it in the
// Conn rather than in Player means every program on a Conn (pulkactl play
// and load, the end-to-end tests) contributes its entropy without a line of
// its own.

// Errors of HandSeeds.Verify.
var (
	// ErrNotRevealed: the hand's hand_committed or hand_revealed has not
	// been received.
	ErrNotRevealed = errors.New("wsclient: the hand is not committed and revealed yet")
	// ErrCommitmentMismatch: the revealed server seed is not the one the
	// table committed to before the deal.
	ErrCommitmentMismatch = errors.New("wsclient: the revealed server seed does not match the commitment")
	// ErrSeedNotUsed: the table accepted this client's seed for the hand
	// and the reveal does not list it at its seat.
	ErrSeedNotUsed = errors.New("wsclient: this client's seed is not among the revealed client seeds")
	// ErrDealMismatch: a card this client was dealt (or was turned, or
	// came from its columns) is not the revealed deck's card at its place
	// in docs/fair-play.md's layout.
	ErrDealMismatch = errors.New("wsclient: the cards dealt are not the revealed deck's")
)

// OwnSeed is what a connection knows of its own seed for a hand.
type OwnSeed uint8

const (
	// OwnSeedNone means the hand did not await this client's seat (watching, a
	// bot played it, away), or it was dealt before this client could send.
	OwnSeedNone OwnSeed = iota
	// OwnSeedDue means awaited, not sent yet (a join is replaying history, or
	// the connection is being dialled again).
	OwnSeedDue
	// OwnSeedSent means sent, and neither accepted nor refused yet.
	OwnSeedSent
	// OwnSeedAccepted means the seat's client_seed_accepted was caused by this
	// client's seed command: the reveal must list Seed at Seat.
	OwnSeedAccepted
	// OwnSeedElsewhere means the seat's seed came from another connection of
	// the player (a second tab or device, a client before a restart), or
	// the table refused this one: the seat's seed is not known here and
	// is not checked.
	OwnSeedElsewhere
	// OwnSeedLate means this client's seed reached the table after the deal (it
	// was refused as out of phase, or the hand was dealt without it): the
	// seat dealt with no seed of this client, nothing of it to check.
	OwnSeedLate
)

// String names the state for messages.
func (o OwnSeed) String() string {
	switch o {
	case OwnSeedDue:
		return "due"
	case OwnSeedSent:
		return "sent"
	case OwnSeedAccepted:
		return "accepted"
	case OwnSeedElsewhere:
		return "sent from another connection, not checked"
	case OwnSeedLate:
		return "too late, not used"
	}
	return "none"
}

// DealSeen is what this client saw of a hand's deal: the cards it can
// compare with the revealed deck.
type DealSeen struct {
	// Started: the hand's hand_started came (and with it the fields below).
	Started  bool
	Japanese bool
	// CardsPerSeat and Dealer are hand_started's (Dealer: the declarer in
	// Japanese).
	CardsPerSeat int
	Dealer       int
	// Seat is the player's seat when the hand was dealt, -1 watching.
	Seat int
	// Hand is every card dealt to Seat (its Dealt events), in order.
	Hand []cards.Card
	// Turned is the classic turned card, cards.NoCard when none came.
	Turned cards.Card
	// Columns are the Japanese face-down column cards that came to Seat's
	// hand (column → card).
	Columns map[int]cards.Card
}

// HandSeeds is what a connection knows of one hand's deal: the commitment
// received before the deal, the seed it sent, the cards it saw dealt and
// what the reveal says.
type HandSeeds struct {
	Table string
	// Game is the game id of the hand's events: part of the hand's
	// identity.
	Game  string
	Index uint32
	// Commitment is hand_committed's, received before any card was dealt.
	Commitment fairdeal.Commitment
	Committed  bool
	// Seat is the seat this client was awaited at, -1 if none (watching,
	// or a bot played the seat). Own says what became of its seed; Seed is
	// meaningful from OwnSeedSent on (made when it was first sent, never
	// for a replayed hand already seeded or dealt).
	Seat int
	Own  OwnSeed
	Seed fairdeal.ClientSeed
	// Deal is what this client saw dealt.
	Deal DealSeen
	// Revealed says hand_revealed came: ServerSeed and ClientSeeds (one per
	// seat) are its, RevealedCommitment the commitment it repeats.
	Revealed           bool
	ServerSeed         fairdeal.ServerSeed
	ClientSeeds        []fairdeal.ClientSeed
	RevealedCommitment fairdeal.Commitment

	key string // the seed command's idempotency key, "" until first sent
	cmd string // its full command id: the caused_by of its acceptance or refusal
	// waiting: the hand waits for its deal, so its seed goes in a seed frame
	// of its own; a hand committed ahead (no seed deadline) is not waiting
	// until the hand before it is revealed, and its seed rides on the next
	// move (docs/fair-play.md).
	waiting bool
	// attached: the seed rode on a move; key and cmd are that move's.
	attached bool
}

// Identity is the hand as pkg/fairdeal names it.
func (h HandSeeds) Identity() fairdeal.Hand {
	return fairdeal.Hand{TableID: h.Table, GameID: h.Game, Index: h.Index}
}

// Verification is what HandSeeds.Verify checked.
type Verification struct {
	// Deck is the deck the hand was dealt from.
	Deck cards.Deck
	// OwnSeed: this client's seed was at its seat (checked only when the
	// table accepted it from this client: OwnSeedAccepted).
	OwnSeed bool
	// Cards is how many cards this client saw dealt and found at their
	// places in Deck (0: it saw none, a watcher of a classic hand).
	Cards int
}

// Verify checks the hand: the revealed server seed gives the commitment
// received before the deal; this client's seed, when the table accepted it
// from this client, is the one of its seat; and every card this client saw
// dealt (its own cards, the turned card, its Japanese column cards) is the
// recomputed deck's card at its place in docs/fair-play.md's layout. A
// seat's seed sent from another connection or refused is not known here and
// not checked; everything else still is.
func (h HandSeeds) Verify() (Verification, error) {
	if !h.Committed || !h.Revealed {
		return Verification{}, ErrNotRevealed
	}
	if h.RevealedCommitment != h.Commitment || !fairdeal.Verify(h.Identity(), h.ServerSeed, h.Commitment) {
		return Verification{}, ErrCommitmentMismatch
	}
	var v Verification
	if h.Own == OwnSeedAccepted {
		if h.Seat < 0 || h.Seat >= len(h.ClientSeeds) || h.ClientSeeds[h.Seat] != h.Seed {
			return Verification{}, ErrSeedNotUsed
		}
		v.OwnSeed = true
	}
	k, err := fairdeal.ShuffleKey(h.Identity(), h.ServerSeed, h.ClientSeeds)
	if err != nil {
		return Verification{}, err
	}
	v.Deck, _ = fairdeal.Shuffle(k)
	n, err := h.Deal.check(&v.Deck)
	if err != nil {
		return Verification{}, fmt.Errorf("hand %d: %w", h.Index+1, err)
	}
	v.Cards = n
	return v, nil
}

// check compares what was seen dealt with deck d; it returns how many
// cards it compared.
func (s *DealSeen) check(d *cards.Deck) (int, error) {
	if !s.Started || s.Seat < 0 {
		return 0, nil
	}
	seats := 4
	if s.Japanese {
		seats = 2
	}
	if s.Seat >= seats || s.Dealer < 0 || s.Dealer >= seats {
		return 0, fmt.Errorf("%w: seat %d of %d, dealer %d", ErrDealMismatch, s.Seat, seats, s.Dealer)
	}
	var pos []int
	if s.Japanese {
		pos = japanesePositions(s.Dealer, s.Seat)
	} else {
		pos = classicPositions(s.CardsPerSeat, s.Dealer, s.Seat)
	}
	var want cards.Set
	for _, p := range pos {
		want = want.With(d[p])
	}
	n := 0
	var got cards.Set
	for _, c := range s.Hand {
		if !want.Has(c) || got.Has(c) {
			return n, fmt.Errorf("%w: %v dealt to seat %d is not at its places", ErrDealMismatch, c, s.Seat+1)
		}
		got = got.With(c)
		n++
	}
	// A hand may end before all of it is dealt (a Japanese resignation, a
	// nine-card hand abandoned before trump): what came must be among the
	// expected, and a hand dealt in full must be all of them.
	if len(s.Hand) > len(pos) {
		return n, fmt.Errorf("%w: %d cards dealt to seat %d, the layout has %d", ErrDealMismatch, len(s.Hand), s.Seat+1, len(pos))
	}
	if !s.Japanese {
		if tp := classicTurnedPosition(s.CardsPerSeat); tp >= 0 && s.Turned != cards.NoCard {
			if d[tp] != s.Turned {
				return n, fmt.Errorf("%w: the turned card %v is not the deck's %v", ErrDealMismatch, s.Turned, d[tp])
			}
			n++
		}
		return n, nil
	}
	first := 26 // the other seat's face-down cards
	if s.Seat == s.Dealer {
		first = 16
	}
	for col, c := range s.Columns {
		if col < 0 || col >= 5 || d[first+col] != c {
			return n, fmt.Errorf("%w: column %d's face-down card %v is not at its place", ErrDealMismatch, col+1, c)
		}
		n++
	}
	return n, nil
}

// classicPositions are the deck positions dealt to seat in a classic hand of
// n cards per seat whose dealer is dealer (docs/fair-play.md, The deal
// layout): served clockwise from the seat after the dealer, n each; in
// nine-card hands three each, then six each.
func classicPositions(n, dealer, seat int) []int {
	i := ((seat-dealer-1)%4 + 4) % 4
	if n >= 9 {
		return append(span(3*i, 3), span(12+6*i, 6)...)
	}
	return span(n*i, n)
}

// classicTurnedPosition is the turned card's position in a classic hand of
// n cards per seat, -1 in nine-card hands (no card is turned).
func classicTurnedPosition(n int) int {
	if n >= 9 {
		return -1
	}
	return 4 * n
}

// japanesePositions are the deck positions dealt into seat's hand in a
// Japanese hand whose declarer is declarer: [0,3) and [6,11) the
// declarer's, [3,6) and [11,16) the other seat's.
func japanesePositions(declarer, seat int) []int {
	if seat == declarer {
		return append(span(0, 3), span(6, 5)...)
	}
	return append(span(3, 3), span(11, 5)...)
}

func span(start, n int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = start + k
	}
	return out
}

// maxHandsKept bounds the hands a connection remembers per table (a classic
// game has 24): a long-lived connection keeps only the recent ones.
const maxHandsKept = 64

// tableSeeds is a connection's seeding state at one table, guarded by
// Conn.mu.
type tableSeeds struct {
	seat int // the player's seat, -1 while they hold none
	// joining: a join is under way, so events are replayed history; seeds
	// they ask for wait for the joined frame (the hand may be long dealt).
	joining  bool
	japanese bool
	game     string
	hands    map[uint32]*HandSeeds
	newest   uint32
	// dealing is the hand whose cards the Dealt, TrumpTurned and
	// ColumnCardRevealed events belong to (they name none), nil between
	// hands.
	dealing *HandSeeds
}

func (c *Conn) seedsOf(table string) *tableSeeds {
	ts := c.seeds[table]
	if ts == nil {
		ts = &tableSeeds{seat: -1, hands: map[uint32]*HandSeeds{}}
		c.seeds[table] = ts
	}
	return ts
}

// Hand returns what the connection knows of hand index of table's current
// (or last) game.
func (c *Conn) Hand(table string, index uint32) (HandSeeds, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.seeds[table]
	if ts == nil || ts.hands[index] == nil {
		return HandSeeds{}, false
	}
	h := *ts.hands[index]
	h.ClientSeeds = append([]fairdeal.ClientSeed(nil), h.ClientSeeds...)
	h.Deal.Hand = append([]cards.Card(nil), h.Deal.Hand...)
	h.Deal.Columns = maps.Clone(h.Deal.Columns)
	return h, true
}

// hand returns the state of hand i of ev's game, a fresh one when the game
// changed. Called with c.mu held.
func (ts *tableSeeds) hand(table string, ev *tablev1.Event, i uint32) *HandSeeds {
	if g := ev.GetGameId(); g != ts.game {
		ts.game, ts.hands, ts.newest, ts.dealing = g, map[uint32]*HandSeeds{}, 0, nil
	}
	h := ts.hands[i]
	if h == nil {
		h = &HandSeeds{Table: table, Game: ts.game, Index: i, Seat: -1, Deal: DealSeen{Seat: -1, Turned: cards.NoCard}}
		ts.hands[i] = h
		if i > ts.newest {
			ts.newest = i
		}
		for old, oh := range ts.hands {
			if old+maxHandsKept <= ts.newest {
				if oh == ts.dealing {
					ts.dealing = nil
				}
				delete(ts.hands, old)
			}
		}
	}
	return h
}

// seeding folds one received frame into the seeding state and returns the
// seed frames now due (sent by the caller, outside the lock).
func (c *Conn) seeding(f Frame) []*gatewayv1.ClientFrame {
	switch f.Type {
	case wire.TypeJoined:
		c.mu.Lock()
		defer c.mu.Unlock()
		ts := c.seeds[f.Table]
		if ts == nil {
			return nil
		}
		ts.joining = false
		if f.Seat != nil {
			ts.seat = int(*f.Seat)
		}
		// The seeds due, and again those sent and not yet answered: the
		// connection may have dropped before they reached the table (the
		// same command id, so the table takes one at most once).
		return ts.due(f.Table, c.player.ID, true)
	case wire.TypeEvent:
	default:
		return nil
	}
	ev := f.Event
	switch ev.GetEvent().(type) {
	case *tablev1.Event_BidMade, *tablev1.Event_TrumpChosen, *tablev1.Event_CardPlayed:
		if ev.GetSeedAccepted() == nil {
			return nil // most events: no lock taken
		}
	case *tablev1.Event_GameStarted, *tablev1.Event_PlayerSeated, *tablev1.Event_PlayerLeft, *tablev1.Event_ViewSynced,
		*tablev1.Event_HandCommitted, *tablev1.Event_ClientSeedAccepted, *tablev1.Event_HandStarted, *tablev1.Event_HandRevealed,
		*tablev1.Event_Dealt, *tablev1.Event_TrumpTurned, *tablev1.Event_ColumnCardRevealed, *tablev1.Event_MoveRejected:
	default:
		return nil // most events: no lock taken
	}
	me := c.player.ID
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.joined[f.Table] {
		return nil
	}
	ts := c.seedsOf(f.Table)
	if a := ev.GetSeedAccepted(); a != nil {
		ts.accepted(ev, a)
	}
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted:
		ts.seat = -1
		ts.japanese = e.GameStarted.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE
		for _, sp := range e.GameStarted.GetSeats() {
			if sp.GetPlayerId() == me && !sp.GetBot() {
				ts.seat = int(sp.GetSeat())
			}
		}
	case *tablev1.Event_PlayerSeated:
		sp := e.PlayerSeated.GetSeat()
		switch {
		case sp.GetPlayerId() == me && !sp.GetBot():
			ts.seat = int(sp.GetSeat())
		case int(sp.GetSeat()) == ts.seat:
			ts.seat = -1
		}
	case *tablev1.Event_PlayerLeft:
		if int(e.PlayerLeft.GetSeat()) == ts.seat {
			ts.seat = -1
		}
	case *tablev1.Event_ViewSynced:
		v := e.ViewSynced.GetView()
		ts.seat = -1
		if v.YourSeat != nil {
			ts.seat = int(v.GetYourSeat())
		}
		ts.japanese = v.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE
		// The cards of the hand in play came in the view, not as deals:
		// this client saw no deal of it to check.
		ts.dealing = nil
		// A hand being seeded when the view was made: keep its
		// commitment to check the reveal, and send this seat's seed if
		// the table still waits for it (the resync replaced the
		// HandCommitted this client never got).
		// The hand committed ahead likewise: its seed rides on this
		// client's next move unless it was taken already.
		if nc := v.GetNextCommitted(); nc != nil {
			h := ts.committed(f.Table, ev, nc)
			if ts.seat >= 0 && h.Seat < 0 && slices.Contains(nc.GetAwaitedSeats(), uint32(ts.seat)) {
				h.Seat, h.Own = ts.seat, OwnSeedDue
				if slices.Contains(v.GetNextSeededSeats(), uint32(ts.seat)) {
					h.Own = OwnSeedElsewhere
				}
			}
		}
		hc := v.GetCommitted()
		if hc == nil {
			break
		}
		h := ts.committed(f.Table, ev, hc)
		if ts.seat < 0 || h.Seat >= 0 || !slices.Contains(hc.GetAwaitedSeats(), uint32(ts.seat)) {
			break
		}
		h.Seat = ts.seat
		if slices.Contains(v.GetSeededSeats(), uint32(ts.seat)) || hc.GetSeedDeadline() == nil {
			h.Own = OwnSeedElsewhere // taken already, or the hand is dealt
			break
		}
		h.Own = OwnSeedDue
		if !ts.joining {
			return ts.due(f.Table, me, false)
		}
	case *tablev1.Event_HandCommitted:
		hc := e.HandCommitted
		h := ts.committed(f.Table, ev, hc)
		if ts.seat < 0 || h.Seat >= 0 || h.Deal.Started {
			break
		}
		if slices.Contains(hc.GetAwaitedSeats(), uint32(ts.seat)) {
			// The seed itself is made when it is sent (due): a replayed
			// commitment may be answered already, by this player's other
			// connection, or be long dealt.
			h.Seat, h.Own = ts.seat, OwnSeedDue
		}
		if !ts.joining {
			return ts.due(f.Table, me, false)
		}
	case *tablev1.Event_ClientSeedAccepted:
		ts.accepted(ev, e.ClientSeedAccepted)
	case *tablev1.Event_MoveRejected:
		for _, h := range ts.hands {
			if h.cmd == "" || h.cmd != ev.GetCausedBy() || h.Own == OwnSeedAccepted {
				continue
			}
			if h.attached {
				// The move carrying the seed was refused, and the seed
				// with it: due again (a new seed, on the next move or
				// in a seed frame if the hand now waits).
				h.detach()
				if h.waiting && !ts.joining {
					return ts.due(f.Table, me, false)
				}
				continue
			}
			if e.MoveRejected.GetReason() == tablev1.RejectReason_REJECT_REASON_WRONG_PHASE {
				h.Own = OwnSeedLate
			} else {
				h.Own = OwnSeedElsewhere
			}
		}
	case *tablev1.Event_HandStarted:
		hs := e.HandStarted
		h := ts.hand(f.Table, ev, hs.GetHandIndex())
		// Dealt: too late for a seed.
		switch h.Own {
		case OwnSeedDue:
			h.Own = OwnSeedNone
		case OwnSeedSent:
			h.Own = OwnSeedLate
		}
		h.Deal = DealSeen{Started: true, Japanese: ts.japanese, CardsPerSeat: int(hs.GetCardsPerSeat()),
			Dealer: int(hs.GetDealerSeat()), Seat: ts.seat, Turned: cards.NoCard}
		ts.dealing = h
	case *tablev1.Event_Dealt:
		if d := ts.dealing; d != nil && d.Deal.Seat >= 0 && int(e.Dealt.GetSeat()) == d.Deal.Seat {
			for _, c := range e.Dealt.GetCards() {
				d.Deal.Hand = append(d.Deal.Hand, cardpb.FromCard(c))
			}
		}
	case *tablev1.Event_TrumpTurned:
		if d := ts.dealing; d != nil {
			d.Deal.Turned = cardpb.FromCard(e.TrumpTurned.GetCard())
		}
	case *tablev1.Event_ColumnCardRevealed:
		r := e.ColumnCardRevealed
		if d := ts.dealing; d != nil && d.Deal.Seat >= 0 && int(r.GetSeat()) == d.Deal.Seat {
			if d.Deal.Columns == nil {
				d.Deal.Columns = map[int]cards.Card{}
			}
			d.Deal.Columns[int(r.GetColumn())] = cardpb.FromCard(r.GetCard())
		}
	case *tablev1.Event_HandRevealed:
		hr := e.HandRevealed
		h := ts.hand(f.Table, ev, hr.GetHandIndex())
		switch h.Own {
		case OwnSeedDue:
			h.Own = OwnSeedNone
		case OwnSeedSent:
			h.Own = OwnSeedLate
		}
		if ts.dealing == h {
			ts.dealing = nil
		}
		h.Revealed = len(hr.GetServerSeed()) == fairdeal.SeedSize && len(hr.GetCommitment()) == fairdeal.SeedSize
		copy(h.ServerSeed[:], hr.GetServerSeed())
		copy(h.RevealedCommitment[:], hr.GetCommitment())
		h.ClientSeeds = make([]fairdeal.ClientSeed, len(hr.GetClientSeeds()))
		for i, s := range hr.GetClientSeeds() {
			if len(s) != fairdeal.SeedSize {
				h.Revealed = false
			}
			copy(h.ClientSeeds[i][:], s)
		}
		// The hand committed ahead now waits for its deal: a seed that has
		// had no move to ride on goes in a seed frame at once.
		if nh := ts.hands[hr.GetHandIndex()+1]; nh != nil && !nh.waiting {
			nh.waiting = true
			if nh.Own == OwnSeedDue && !ts.joining {
				return ts.due(f.Table, me, false)
			}
		}
	}
	return nil
}

// committed folds a commitment — a HandCommitted event, or one of a view —
// into its hand and returns the hand. A hand with a seed deadline waits for
// its deal (its seed goes in a seed frame); one committed ahead has none,
// and its seed rides on this client's next move until the hand before it is
// revealed. Called with c.mu held.
func (ts *tableSeeds) committed(table string, ev *tablev1.Event, hc *tablev1.HandCommitted) *HandSeeds {
	h := ts.hand(table, ev, hc.GetHandIndex())
	if copy(h.Commitment[:], hc.GetCommitment()) == fairdeal.SeedSize {
		h.Committed = true
	}
	h.waiting = hc.GetSeedDeadline() != nil
	return h
}

// accepted folds a seed's acceptance: a ClientSeedAccepted event, or the
// one riding on a move's event (Event.seed_accepted). Called with c.mu held.
func (ts *tableSeeds) accepted(ev *tablev1.Event, a *tablev1.ClientSeedAccepted) {
	h := ts.hands[a.GetHandIndex()]
	if h == nil || ev.GetGameId() != ts.game || int(a.GetSeat()) != h.Seat {
		return
	}
	switch {
	case h.Own == OwnSeedSent && (ev.GetCausedBy() == h.cmd || ev.GetCausedBy() == ""):
		// An acceptance without caused_by (none is written so) is
		// taken as this client's: the reveal then decides.
		h.Own = OwnSeedAccepted
	case h.Own == OwnSeedDue || h.Own == OwnSeedSent:
		// The seat's seed came from another connection (or from
		// this player before a reload): this one's, if sent, is
		// refused.
		h.Own = OwnSeedElsewhere
	}
}

// due returns the seed frames of the hands whose seed is due (and, with
// resend, of those sent and not yet answered) and marks them sent. A seed
// is made here, when it is first sent. Called with c.mu held.
func (ts *tableSeeds) due(table, player string, resend bool) []*gatewayv1.ClientFrame {
	var out []*gatewayv1.ClientFrame
	for _, h := range ts.hands {
		if resend && h.Own == OwnSeedSent && h.attached {
			// The move it rode on may never have reached the table: due
			// again, as a new seed.
			h.detach()
		}
		if !h.waiting || h.Own != OwnSeedDue && (!resend || h.Own != OwnSeedSent) {
			continue
		}
		if h.key == "" {
			_, _ = rand.Read(h.Seed[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
			h.key = NewKey()
			h.cmd = wire.CommandID(player, h.key)
		}
		h.Own = OwnSeedSent
		out = append(out, commandFrame(&gatewayv1.TableCommand{Table: table, Cmd: h.key,
			Command: &gatewayv1.TableCommand_Seed{Seed: &tablev1.ClientSeedCommand{HandIndex: h.Index, Seed: h.Seed[:]}}}))
	}
	return out
}

// attachSeed makes the move m carry the seed of the hand committed ahead
// when this client's seat owes it (docs/fair-play.md): m.Cmd is set, and
// the seed's command id is the move's. It returns the hand, nil when m
// carries none.
func (c *Conn) attachSeed(m *gatewayv1.TableCommand) *HandSeeds {
	switch m.GetCommand().(type) {
	case *gatewayv1.TableCommand_Bid, *gatewayv1.TableCommand_Trump, *gatewayv1.TableCommand_Play:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.seeds[m.GetTable()]
	if ts == nil || ts.joining {
		return nil
	}
	// The hand committed ahead is the newest one committed: one lookup, not
	// a walk over the hands kept, on every move sent.
	h := ts.hands[ts.newest]
	if h == nil || h.Own != OwnSeedDue || h.waiting || h.Seat < 0 || h.Seat != ts.seat {
		return nil
	}
	_, _ = rand.Read(h.Seed[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	h.key, h.cmd, h.attached, h.Own = m.Cmd, wire.CommandID(c.player.ID, m.Cmd), true, OwnSeedSent
	m.AttachedSeed = &tablev1.ClientSeedCommand{HandIndex: h.Index, Seed: h.Seed[:]}
	return h
}

// detachSeed undoes attachSeed when the move could not be sent.
func (c *Conn) detachSeed(table string, h *HandSeeds, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts := c.seeds[table]; ts != nil && ts.hands[h.Index] == h && h.attached && h.key == key && h.Own == OwnSeedSent {
		h.detach()
	}
}

// detach makes an attached seed that the table did not take due again.
func (h *HandSeeds) detach() {
	h.Own, h.attached, h.key, h.cmd = OwnSeedDue, false, "", ""
	h.Seed = fairdeal.ClientSeed{}
}

// sendSeeds sends seed frames; one that cannot leave now (the connection is
// being dialled again) is due again, the same seed under the same key, once
// the table is joined again.
func (c *Conn) sendSeeds(ctx context.Context, ms []*gatewayv1.ClientFrame) {
	for _, m := range ms {
		if _, err := c.Send(ctx, m); err != nil {
			cmd := m.GetCommand()
			c.mu.Lock()
			if ts := c.seeds[cmd.GetTable()]; ts != nil {
				if h := ts.hands[cmd.GetSeed().GetHandIndex()]; h != nil && h.key == cmd.GetCmd() && h.Own == OwnSeedSent {
					h.Own = OwnSeedDue
				}
			}
			c.mu.Unlock()
		}
	}
}

// SeedCommand reports whether cmd (a full command id, an event's caused_by)
// is a seed this connection sent at table: its refusal is the deal's
// business (HandSeeds.Own), not a refused move.
func (c *Conn) SeedCommand(table, cmd string) bool {
	if cmd == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts := c.seeds[table]; ts != nil {
		for _, h := range ts.hands {
			// A seed that rode on a move: the refusal is the move's.
			if h.cmd == cmd && !h.attached {
				return true
			}
		}
	}
	return false
}
