package table

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Entropy is the randomness one step of a table may use: the runner reads
// it from crypto/rand for every input (Input.Entropy) and for New. A hand
// committed in the step takes its server seed from it (see serverSeed), so
// the table stays pure and a replay of the logged input deals the same
// cards.
type Entropy [fairdeal.SeedSize]byte

// maxSeats is the most seats any game has (classic).
const maxSeats = 4

// seeding is the commit–reveal of the current hand (docs/fair-play.md): from
// its HandCommitted to its HandRevealed.
type seeding struct {
	active   bool // a hand is committed and not yet revealed
	index    uint32
	server   fairdeal.ServerSeed
	commit   fairdeal.Commitment
	clients  [maxSeats]fairdeal.ClientSeed
	awaited  uint8 // seats whose client seed the table waits for, as bits
	got      uint8 // seats whose client seed arrived, as bits
	deadline int64 // Unix ns when the hand is dealt without the missing seeds; 0 once dealt
}

// waiting reports whether the hand is committed and not dealt yet.
func (s *seeding) waiting() bool { return s.active && s.deadline != 0 }

// entropyTag separates the server seeds one step commits (a step of bots
// alone can play several hands) from the step's entropy and from each
// other.
const entropyTag = "pulka/server-seed/v1"

// serverSeed is the server seed of the n-th hand the step commits (n from
// 0): HMAC-SHA256(entropy, entropyTag || u32(n)). Every seed, the first
// included, is derived, never the entropy itself: revealing one seed then
// tells nothing of the others drawn in the same step (HMAC is a
// pseudorandom function keyed by the secret entropy). The entropy is 32
// bytes from crypto/rand, so every seed is as unpredictable as the entropy
// and no two are equal.
func (b *batch) serverSeed() (fairdeal.ServerSeed, error) {
	if b.entropy == (Entropy{}) {
		return fairdeal.ServerSeed{}, ErrNoEntropy
	}
	n := b.seeds
	b.seeds++
	m := hmac.New(sha256.New, b.entropy[:])
	m.Write(binary.BigEndian.AppendUint32([]byte(entropyTag), uint32(n)))
	var s fairdeal.ServerSeed
	m.Sum(s[:0])
	return s, nil
}

func (t *Table) hand(index uint32) fairdeal.Hand {
	return fairdeal.Hand{TableID: t.id, GameID: t.gameID, Index: index}
}

// commitIfDue starts the seeding of the hand the engine waits to deal, if
// none has: the hand committed ahead becomes the hand waiting for its deal;
// a hand not committed yet (the first, or a hand after a game-changing
// restore) is committed now. The deal follows at once when no awaited seed
// is missing.
func (t *Table) commitIfDue(b *batch) {
	if b.err != nil || t.eng.over() || !t.eng.awaitingDeal() || t.sd.active {
		return
	}
	idx := t.eng.handIndex()
	if t.nx.active && t.nx.index == idx {
		t.sd, t.nx = t.nx, seeding{}
		// A seat that has not sent its seed and is no longer here (away,
		// left, played by a bot) is not waited for: its seed is
		// NoClientSeed, as if it had been away at the commitment.
		for s := range t.seats {
			if st := &t.seats[s]; t.sd.got&(1<<s) == 0 && (st.mode != seatHuman || st.away) {
				t.sd.awaited &^= 1 << s
			}
		}
		t.sd.deadline = b.at + int64(t.set.SeedTimeout)
		if t.sd.got == t.sd.awaited {
			t.deal(b)
		}
		return
	}
	t.nx = seeding{} // committed for another hand: never dealt, never revealed
	sd, hc, ok := t.commit(b, idx)
	if !ok {
		return
	}
	t.sd = sd
	t.sd.deadline = b.at + int64(t.set.SeedTimeout)
	hc.SeedDeadline = timestamppb.New(time.Unix(0, t.sd.deadline))
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandCommitted{HandCommitted: hc}})
	if t.sd.awaited == 0 {
		t.deal(b)
	}
}

// commit draws hand idx's server seed and commits to it; the caller adds
// the HandCommitted. The awaited seats are the seated humans who are here.
func (t *Table) commit(b *batch, idx uint32) (seeding, *tablev1.HandCommitted, bool) {
	server, err := b.serverSeed()
	if err != nil {
		b.fail(err)
		return seeding{}, nil, false
	}
	c, err := fairdeal.Commit(t.hand(idx), server)
	if err != nil {
		b.fail(fmt.Errorf("table: commit: %w", err))
		return seeding{}, nil, false
	}
	sd := seeding{active: true, index: idx, server: server, commit: c}
	hc := &tablev1.HandCommitted{HandIndex: idx, Commitment: c[:]}
	for s := range t.seats {
		// A seated human who is here is awaited; a bot's seat, and an away
		// player's, contribute fairdeal.NoClientSeed.
		if st := &t.seats[s]; st.mode == seatHuman && !st.away {
			sd.awaited |= 1 << s
			hc.AwaitedSeats = append(hc.AwaitedSeats, uint32(s))
		}
	}
	return sd, hc, true
}

// commitAhead commits the hand after the one just dealt, so that its seeds
// can ride on the moves of this one (docs/fair-play.md): no seed round of
// its own, and its deal in the step that ends this hand.
func (t *Table) commitAhead(b *batch) {
	if b.err != nil || !t.ahead || t.eng.over() || t.eng.lastHand() || t.nx.active {
		return
	}
	nx, hc, ok := t.commit(b, t.eng.handIndex()+1)
	if !ok {
		return
	}
	t.nx = nx
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandCommitted{HandCommitted: hc}})
}

// deal deals the committed hand from its shuffle key, and commits the next
// one ahead. The caller schedules the first move after it.
func (t *Table) deal(b *batch) {
	k, err := fairdeal.ShuffleKey(t.hand(t.sd.index), t.sd.server, t.sd.clients[:len(t.seats)])
	if err != nil {
		b.fail(fmt.Errorf("table: shuffle key: %w", err))
		return
	}
	t.sd.deadline = 0
	if err := t.eng.deal(b, k); err != nil {
		b.fail(fmt.Errorf("table: deal: %w", err))
		return
	}
	t.commitAhead(b)
}

// reveal publishes the current hand's seeds once its last event is out (the
// engines call it after HandEnded, and before GameEnded when the game ends
// during a hand); once the game is over, the hand committed ahead and never
// dealt is revealed after it. Revealing a hand twice, or none, does nothing.
func (t *Table) reveal(b *batch) {
	for _, sd := range []*seeding{&t.sd, &t.nx} {
		if !sd.active || (sd == &t.nx && !t.eng.over()) {
			continue
		}
		hr := &tablev1.HandRevealed{HandIndex: sd.index, ServerSeed: append([]byte(nil), sd.server[:]...),
			Commitment: append([]byte(nil), sd.commit[:]...)}
		for s := range t.seats {
			hr.ClientSeeds = append(hr.ClientSeeds, append([]byte(nil), sd.clients[s][:]...))
		}
		*sd = seeding{}
		b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandRevealed{HandRevealed: hr}})
	}
}

// seedingFor is the seeding that takes a client seed for hand index: the
// hand waiting for its deal, or the hand committed ahead; nil when neither.
func (t *Table) seedingFor(index uint32) *seeding {
	switch {
	case t.sd.waiting() && t.sd.index == index:
		return &t.sd
	case t.nx.active && t.nx.index == index:
		return &t.nx
	}
	return nil
}

// clientSeed takes seat s's client seed for a hand being seeded; the deal
// follows at once when it was the last one the waiting hand awaited.
func (t *Table) clientSeed(b *batch, s int, c *tablev1.ClientSeedCommand) error {
	if s < 0 {
		return ErrNotSeated
	}
	if len(c.GetSeed()) != fairdeal.SeedSize {
		return fmt.Errorf("%w: a client seed is %d bytes, not %d", ErrMalformed, fairdeal.SeedSize, len(c.GetSeed()))
	}
	sd := t.seedingFor(c.GetHandIndex())
	if sd == nil {
		return fmt.Errorf("%w: hand %d", ErrNotSeeding, c.GetHandIndex())
	}
	bit := uint8(1) << s
	switch {
	case sd.awaited&bit == 0:
		return fmt.Errorf("%w: seat %d is not awaited", ErrSeedRefused, s)
	case sd.got&bit != 0:
		return fmt.Errorf("%w: seat %d sent its seed already", ErrSeedRefused, s)
	}
	t.takeSeed(b, sd, s, c.GetSeed(), nil)
	return nil
}

// checkAttached checks the seed a move carries before the move is played:
// a malformed one refuses the whole command, so that nothing changes.
func checkAttached(c *tablev1.ClientSeedCommand) error {
	if c != nil && len(c.GetSeed()) != fairdeal.SeedSize {
		return fmt.Errorf("%w: an attached client seed is %d bytes, not %d", ErrMalformed, len(c.GetSeed()), fairdeal.SeedSize)
	}
	return nil
}

// attachedSeed takes the seed that rode on seat s's move, once the move is
// played; the move's events start at b.evs[mark]. One the table does not
// await is ignored: the move stands, and the missing acceptance tells the
// client. The acceptance rides on the move's own event (Event.seed_accepted):
// an event of its own, and the timer_started that would then follow it, were
// two more events per seed for every gateway and client to handle.
func (t *Table) attachedSeed(b *batch, s int, c *tablev1.ClientSeedCommand, mark int) {
	if c == nil || b.err != nil || mark >= len(b.evs) {
		return
	}
	sd := t.seedingFor(c.GetHandIndex())
	if sd == nil || sd.awaited&(1<<s) == 0 || sd.got&(1<<s) != 0 {
		return
	}
	t.takeSeed(b, sd, s, c.GetSeed(), b.evs[mark])
}

// takeSeed takes seat s's seed for sd. Its acceptance rides on the event
// ride when there is one (the move the seed came with), else it is a
// ClientSeedAccepted for the seat.
func (t *Table) takeSeed(b *batch, sd *seeding, s int, seed []byte, ride *tablev1.Event) {
	copy(sd.clients[s][:], seed)
	sd.got |= 1 << s
	acc := &tablev1.ClientSeedAccepted{HandIndex: sd.index, Seat: uint32(s)}
	if ride != nil {
		ride.SeedAccepted = acc
	} else {
		b.add(toSeat(s), &tablev1.Event{Event: &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: acc}})
	}
	if sd == &t.sd && t.sd.got == t.sd.awaited {
		t.deal(b)
	}
}

// HandSeeds is one hand's commit–reveal material.
type HandSeeds struct {
	Hand   fairdeal.Hand
	Server fairdeal.ServerSeed
	// Clients holds a client seed per seat in seat order: NoClientSeed for
	// a seat that sent none (yet).
	Clients []fairdeal.ClientSeed
	// Dealt: the hand has been dealt from Key; until then client seeds may
	// still arrive.
	Dealt bool
}

// Key is the hand's shuffle key (its deal, once Dealt).
func (h HandSeeds) Key() (fairdeal.Key, error) {
	return fairdeal.ShuffleKey(h.Hand, h.Server, h.Clients)
}

// CurrentSeeds returns the seeds of the hand committed and not yet revealed;
// ok is false when there is none (the game is over). The server seed is a
// secret until the hand's HandRevealed: this is for server-side tools and
// privileged tests, which hold the table's snapshot (where it is too), never
// for a client.
func (t *Table) CurrentSeeds() (_ HandSeeds, ok bool) {
	if !t.sd.active {
		return HandSeeds{}, false
	}
	return HandSeeds{Hand: t.hand(t.sd.index), Server: t.sd.server,
		Clients: append([]fairdeal.ClientSeed(nil), t.sd.clients[:len(t.seats)]...), Dealt: !t.sd.waiting()}, true
}
