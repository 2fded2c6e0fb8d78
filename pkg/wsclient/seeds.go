package wsclient

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
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
	// ErrSeedNotUsed: this client sent a seed for the hand and the reveal
	// does not list it at its seat.
	ErrSeedNotUsed = errors.New("wsclient: this client's seed is not among the revealed client seeds")
)

// HandSeeds is what a connection knows of one hand's deal: the commitment
// received before the deal, the seed it sent, and what the reveal says.
type HandSeeds struct {
	Table string
	// Game is the game id of the hand's events: part of the hand's
	// identity.
	Game  string
	Index uint32
	// Commitment is hand_committed's, received before any card was dealt.
	Commitment fairdeal.Commitment
	Committed  bool
	// Seat is the seat this client sent Seed for, -1 if it sent none (not
	// awaited: watching, or a bot played the seat).
	Seat int
	Seed fairdeal.ClientSeed
	// Revealed says hand_revealed came: ServerSeed and ClientSeeds (one per
	// seat) are its, RevealedCommitment the commitment it repeats.
	Revealed           bool
	ServerSeed         fairdeal.ServerSeed
	ClientSeeds        []fairdeal.ClientSeed
	RevealedCommitment fairdeal.Commitment

	key     string // the seed command's idempotency key
	pending bool   // the seed is due and not sent yet
}

// Identity is the hand as pkg/fairdeal names it.
func (h HandSeeds) Identity() fairdeal.Hand {
	return fairdeal.Hand{TableID: h.Table, GameID: h.Game, Index: h.Index}
}

// Verify checks the hand: the revealed server seed gives the commitment
// received before the deal, and this client's seed (if it sent one) is the
// one of its seat. It returns the deck the hand was dealt from, which the
// caller compares with the cards it was dealt (the layout is
// docs/fair-play.md's).
func (h HandSeeds) Verify() (cards.Deck, error) {
	if !h.Committed || !h.Revealed {
		return cards.Deck{}, ErrNotRevealed
	}
	if h.RevealedCommitment != h.Commitment || !fairdeal.Verify(h.Identity(), h.ServerSeed, h.Commitment) {
		return cards.Deck{}, ErrCommitmentMismatch
	}
	if h.Seat >= 0 && (h.Seat >= len(h.ClientSeeds) || h.ClientSeeds[h.Seat] != h.Seed) {
		return cards.Deck{}, ErrSeedNotUsed
	}
	k, err := fairdeal.ShuffleKey(h.Identity(), h.ServerSeed, h.ClientSeeds)
	if err != nil {
		return cards.Deck{}, err
	}
	d, _ := fairdeal.Shuffle(k)
	return d, nil
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
	joining bool
	game    string
	hands   map[uint32]*HandSeeds
	newest  uint32
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
	return h, true
}

// hand returns the state of hand i of ev's game, a fresh one when the game
// changed. Called with c.mu held.
func (ts *tableSeeds) hand(table string, ev *tablev1.Event, i uint32) *HandSeeds {
	if g := ev.GetGameId(); g != ts.game {
		ts.game, ts.hands, ts.newest = g, map[uint32]*HandSeeds{}, 0
	}
	h := ts.hands[i]
	if h == nil {
		h = &HandSeeds{Table: table, Game: ts.game, Index: i, Seat: -1}
		ts.hands[i] = h
		if i > ts.newest {
			ts.newest = i
		}
		for old := range ts.hands {
			if old+maxHandsKept <= ts.newest {
				delete(ts.hands, old)
			}
		}
	}
	return h
}

// seeding folds one received frame into the seeding state and returns the
// seed frames now due (sent by the caller, outside the lock).
func (c *Conn) seeding(f Frame) []wire.ClientMsg {
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
		return ts.due(f.Table)
	case wire.TypeEvent:
	default:
		return nil
	}
	ev := f.Event
	switch ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted, *tablev1.Event_PlayerSeated, *tablev1.Event_PlayerLeft, *tablev1.Event_ViewSynced,
		*tablev1.Event_HandCommitted, *tablev1.Event_ClientSeedAccepted, *tablev1.Event_HandStarted, *tablev1.Event_HandRevealed:
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
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted:
		ts.seat = -1
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
		ts.seat = -1
		if v := e.ViewSynced.GetView(); v.YourSeat != nil {
			ts.seat = int(v.GetYourSeat())
		}
	case *tablev1.Event_HandCommitted:
		hc := e.HandCommitted
		h := ts.hand(f.Table, ev, hc.GetHandIndex())
		if copy(h.Commitment[:], hc.GetCommitment()) == fairdeal.SeedSize {
			h.Committed = true
		}
		if ts.seat < 0 || h.Seat >= 0 {
			break
		}
		for _, s := range hc.GetAwaitedSeats() {
			if int(s) == ts.seat {
				_, _ = rand.Read(h.Seed[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
				h.Seat, h.key, h.pending = ts.seat, NewKey(), true
			}
		}
		if !ts.joining {
			return ts.due(f.Table)
		}
	case *tablev1.Event_ClientSeedAccepted:
		// A replayed acceptance: the seed of an earlier connection counted
		// (or this one's did); nothing is due any more.
		if h := ts.hands[e.ClientSeedAccepted.GetHandIndex()]; h != nil && ev.GetGameId() == ts.game &&
			int(e.ClientSeedAccepted.GetSeat()) == h.Seat {
			h.pending = false
		}
	case *tablev1.Event_HandStarted:
		// Dealt: too late for a seed.
		if h := ts.hands[e.HandStarted.GetHandIndex()]; h != nil && ev.GetGameId() == ts.game {
			h.pending = false
		}
	case *tablev1.Event_HandRevealed:
		hr := e.HandRevealed
		h := ts.hand(f.Table, ev, hr.GetHandIndex())
		h.pending = false
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
	}
	return nil
}

// due returns the seed frames of the hands whose seed is pending and marks
// them sent. Called with c.mu held.
func (ts *tableSeeds) due(table string) []wire.ClientMsg {
	var out []wire.ClientMsg
	for _, h := range ts.hands {
		if !h.pending {
			continue
		}
		h.pending = false
		hand := h.Index
		out = append(out, wire.ClientMsg{Type: wire.TypeSeed, Table: table, Hand: &hand,
			Seed: fairdeal.Hex(h.Seed), Cmd: h.key})
	}
	return out
}

// sendSeeds sends seed frames; one that cannot leave now (the connection is
// being dialled again) is due again once the table is joined again.
func (c *Conn) sendSeeds(ctx context.Context, ms []wire.ClientMsg) {
	for _, m := range ms {
		if _, err := c.Send(ctx, m); err != nil {
			c.mu.Lock()
			if ts := c.seeds[m.Table]; ts != nil {
				if h := ts.hands[*m.Hand]; h != nil && h.key == m.Cmd {
					h.pending = true
				}
			}
			c.mu.Unlock()
		}
	}
}
