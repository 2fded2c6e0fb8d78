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

// commitIfDue commits the engine's next hand when it waits for its deal and
// none is committed: HandCommitted, and the deal at once when no seat is
// awaited.
func (t *Table) commitIfDue(b *batch) {
	if b.err != nil || t.eng.over() || !t.eng.awaitingDeal() || t.sd.active {
		return
	}
	server, err := b.serverSeed()
	if err != nil {
		b.fail(err)
		return
	}
	idx := t.eng.handIndex()
	c, err := fairdeal.Commit(t.hand(idx), server)
	if err != nil {
		b.fail(fmt.Errorf("table: commit: %w", err))
		return
	}
	t.sd = seeding{active: true, index: idx, server: server, commit: c,
		deadline: b.at + int64(t.set.SeedTimeout)}
	hc := &tablev1.HandCommitted{HandIndex: idx, Commitment: c[:],
		SeedDeadline: timestamppb.New(time.Unix(0, t.sd.deadline))}
	for s := range t.seats {
		// A seated human who is here is awaited; a bot's seat, and an away
		// player's, contribute fairdeal.NoClientSeed.
		if st := &t.seats[s]; st.mode == seatHuman && !st.away {
			t.sd.awaited |= 1 << s
			hc.AwaitedSeats = append(hc.AwaitedSeats, uint32(s))
		}
	}
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandCommitted{HandCommitted: hc}})
	if t.sd.awaited == 0 {
		t.deal(b)
	}
}

// deal deals the committed hand from its shuffle key. The caller schedules
// the first move after it.
func (t *Table) deal(b *batch) {
	k, err := fairdeal.ShuffleKey(t.hand(t.sd.index), t.sd.server, t.sd.clients[:len(t.seats)])
	if err != nil {
		b.fail(fmt.Errorf("table: shuffle key: %w", err))
		return
	}
	t.sd.deadline = 0
	if err := t.eng.deal(b, k); err != nil {
		b.fail(fmt.Errorf("table: deal: %w", err))
	}
}

// reveal publishes the current hand's seeds once its last event is out (the
// engines call it after HandEnded, and before GameEnded when the game ends
// during a hand). Revealing a hand twice, or none, does nothing.
func (t *Table) reveal(b *batch) {
	if !t.sd.active {
		return
	}
	hr := &tablev1.HandRevealed{HandIndex: t.sd.index, ServerSeed: append([]byte(nil), t.sd.server[:]...),
		Commitment: append([]byte(nil), t.sd.commit[:]...)}
	for s := range t.seats {
		hr.ClientSeeds = append(hr.ClientSeeds, append([]byte(nil), t.sd.clients[s][:]...))
	}
	t.sd = seeding{}
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandRevealed{HandRevealed: hr}})
}

// clientSeed takes seat s's client seed for the hand being seeded; the deal
// follows at once when it was the last one awaited.
func (t *Table) clientSeed(b *batch, s int, c *tablev1.ClientSeedCommand) error {
	if s < 0 {
		return ErrNotSeated
	}
	if len(c.GetSeed()) != fairdeal.SeedSize {
		return fmt.Errorf("%w: a client seed is %d bytes, not %d", ErrMalformed, fairdeal.SeedSize, len(c.GetSeed()))
	}
	if !t.sd.waiting() || c.GetHandIndex() != t.sd.index {
		return fmt.Errorf("%w: hand %d", ErrNotSeeding, c.GetHandIndex())
	}
	bit := uint8(1) << s
	switch {
	case t.sd.awaited&bit == 0:
		return fmt.Errorf("%w: seat %d is not awaited", ErrSeedRefused, s)
	case t.sd.got&bit != 0:
		return fmt.Errorf("%w: seat %d sent its seed already", ErrSeedRefused, s)
	}
	copy(t.sd.clients[s][:], c.GetSeed())
	t.sd.got |= bit
	b.add(toSeat(s), &tablev1.Event{Event: &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: &tablev1.ClientSeedAccepted{
		HandIndex: t.sd.index, Seat: uint32(s)}}})
	if t.sd.got == t.sd.awaited {
		t.deal(b)
	}
	return nil
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
