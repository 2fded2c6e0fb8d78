package table

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// driver plays a table with random inputs: mostly legal moves, and also
// garbage, duplicates, stale entries, ticks (often exactly at the next
// deadline), presence changes, leaves, sits and reconnects.
type driver struct {
	h    *harness
	rng  *rand.Rand
	sent []Input
	all  []logged // every input with its events, none for an ignored one
	// checkNoOp: verify that inputs without events change nothing.
	checkNoOp bool
}

func newDriver(tb testing.TB, seed uint64) *driver {
	rng := rand.New(rand.NewPCG(seed, 0x7461626c65))
	var s tablesettings.Settings
	var seats []SeatInfo
	if rng.IntN(2) == 0 {
		v := classic.Standard
		if rng.IntN(3) == 0 {
			v = classic.Nines
		}
		s = classicSet(v, []time.Duration{0, 0, 300 * time.Millisecond, tablesettings.DefaultBotDelay}[rng.IntN(4)])
		seats = humans(4)
		for i := range seats {
			if rng.IntN(3) == 0 {
				seats[i] = SeatInfo{Bot: true, Name: "Bot " + strconv.Itoa(i)}
			}
		}
	} else {
		s = japaneseSet([]int{11, 15, 21, 31}[rng.IntN(4)])
		seats = humans(2)
	}
	// Every bot level, and none (a table from before levels); from the seed,
	// not rng, so the drivers' random streams stay what they were.
	switch {
	case raceOn && s.Game == tablesettings.Classic:
		s.BotLevel = classic.Level(seed % 2) // none or easy: the baseline
	case s.Game == tablesettings.Classic:
		s.BotLevel = classic.Level(seed % 4)
	case !raceOn && seed%2 == 1:
		s.BotLevel = classic.LevelStrong
	}
	s.MoveTimeout = time.Duration(1+rng.IntN(30)) * time.Second
	s.ReconnectGrace = time.Duration(1+rng.IntN(90)) * time.Second
	// The driver sends client seeds itself, or lets the deadline deal.
	return &driver{h: newHarnessSeeding(tb, s, seed, seats, false), rng: rng}
}

func (d *driver) input(in Input) {
	h := d.h
	var before []byte
	if d.checkNoOp {
		before = state(h.tb, h.t)
	}
	d.sent = append(d.sent, in)
	evs, _ := h.apply(in) // refusals are part of the game here
	d.all = append(d.all, logged{h.last, evs})
	if d.checkNoOp && len(evs) == 0 && !bytes.Equal(before, state(h.tb, h.t)) {
		h.tb.Fatalf("input %v changed the table without an event", in)
	}
}

func (d *driver) command(from string, c *tablev1.Command, id string) {
	h := d.h
	h.cmdNo++
	if id == "" {
		id = "c" + strconv.Itoa(h.cmdNo)
	}
	c.CommandId, c.PlayerId, c.TableId = id, from, h.t.ID()
	d.input(CommandInput(c, h.entry(), h.now))
}

func (d *driver) step() {
	h, t, rng := d.h, d.h.t, d.rng
	h.now = h.now.Add(time.Duration(rng.IntN(4000)) * time.Millisecond)
	n := len(t.seats)
	who := player(rng.IntN(n))
	// Leaving makes a classic seat a bot and ends a Japanese match: keep it
	// rare, so that games last.
	leaving := (t.set.Game == tablesettings.Classic && rng.IntN(5) == 0) || rng.IntN(40) == 0
	switch r := rng.IntN(100); {
	case r < 55 && t.sd.waiting() && rng.IntN(4) != 0:
		d.clientSeed()
	case r < 55:
		s := t.eng.toMove()
		if s < 0 {
			d.input(Tick(h.now))
			return
		}
		cs := legalCommands(t, s)
		c := cs[rng.IntN(len(cs))]
		d.attachSeed(c)
		d.command(player(s), c, "")
	case r < 62:
		var c *tablev1.Command
		switch rng.IntN(3) {
		case 0:
			c = bidCmd(rng.IntN(11))
		case 1:
			c = trumpCmd(cards.Suit(rng.IntN(6)))
		default:
			c = &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{
				Card: commonv1.Card(rng.IntN(38)), Declaration: &tablev1.JokerDeclaration{
					Action: tablev1.JokerAction(rng.IntN(5)), Suit: commonv1.Suit(rng.IntN(6))}}}}
		}
		if rng.IntN(5) == 0 {
			who = "stranger"
		}
		d.command(who, c, "")
	case r < 66:
		if len(d.sent) == 0 {
			return
		}
		old := d.sent[rng.IntN(len(d.sent))]
		if old.Kind != InputCommand {
			return
		}
		if rng.IntN(2) == 0 {
			d.input(CommandInput(old.Command, h.entry(), h.now)) // duplicate id
		} else {
			c := proto.Clone(old.Command).(*tablev1.Command)
			c.CommandId = "stale" + strconv.Itoa(h.cmdNo)
			h.cmdNo++
			d.input(CommandInput(c, old.EntryID, h.now)) // stale entry
		}
	case r < 78:
		if next, ok := t.NextDeadline(); ok && rng.IntN(3) != 0 && next.After(h.now) {
			h.now = next
		}
		d.input(Tick(h.now))
	case r < 85:
		// An away Japanese player soon forfeits: keep it rarer there.
		if t.set.Game == tablesettings.Classic || rng.IntN(15) == 0 {
			d.input(Away(who, h.now))
		}
	case r < 91:
		for s := range t.seats {
			if t.seats[s].away && rng.IntN(4) != 0 {
				who = player(s)
			}
		}
		d.input(Back(who, h.now))
	case r < 94:
		s := t.SeatOf(who)
		if rng.IntN(3) == 0 {
			s = rng.IntN(n)
		}
		d.command(who, sitCmd(s), "")
	case r < 97:
		d.command(who, reconnectCmd(), "")
	case r < 99:
		if leaving {
			d.command(who, leaveCmd(), "")
		}
	default:
		if leaving {
			d.command(who, resignCmd(), "")
		}
	}
}

// clientSeed sends a client seed: mostly an awaited seat's for the hand
// being seeded, sometimes one the table must refuse (a second one, another
// hand's, a watcher's, a wrong length).
func (d *driver) clientSeed() {
	t, rng := d.h.t, d.rng
	seed := make([]byte, 40)
	for i := range seed {
		seed[i] = byte(rng.IntN(256))
	}
	seed = seed[:32]
	hand := t.sd.index
	if t.nx.active && rng.IntN(3) == 0 {
		hand = t.nx.index
	}
	who := player(rng.IntN(len(t.seats)))
	switch rng.IntN(12) {
	case 0:
		hand += uint32(1 + rng.IntN(2))
	case 1:
		seed = seed[:rng.IntN(41)]
	case 2:
		who = "stranger"
	}
	d.command(who, &tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{
		HandIndex: hand, Seed: seed}}}, "")
}

// attachSeed makes a move carry a client seed, as the clients do with the
// seed of the hand committed ahead: mostly that one, sometimes one the table
// ignores (another hand's, a second one) or refuses the move for (a wrong
// length), and sometimes none.
func (d *driver) attachSeed(c *tablev1.Command) {
	t, rng := d.h.t, d.rng
	if !t.nx.active || rng.IntN(5) == 0 {
		return
	}
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(rng.IntN(256))
	}
	hand := t.nx.index
	switch rng.IntN(15) {
	case 0:
		hand += uint32(1 + rng.IntN(2))
	case 1:
		seed = seed[:rng.IntN(32)]
	}
	c.AttachedSeed = &tablev1.ClientSeedCommand{HandIndex: hand, Seed: seed}
}

// run drives the table until the game ends or maxSteps inputs were sent.
func (d *driver) run(maxSteps int) {
	for i := 0; i < maxSteps && !d.h.t.Over(); i++ {
		d.step()
	}
}

func TestProperty_SnapshotPlusLoggedInputsRebuildTheSameTable(t *testing.T) {
	games := 150
	if testing.Short() {
		games = 20
	}
	for g := range games {
		d := newDriver(t, uint64(1000+g))
		d.checkNoOp = true
		type snap struct {
			logged, all int // len(h.log) and len(d.all) when taken
			data        []byte
		}
		snaps := []snap{{0, 0, state(t, d.h.t)}}
		for i := 0; i < 4000 && !d.h.t.Over(); i++ {
			d.step()
			if d.rng.IntN(150) == 0 {
				snaps = append(snaps, snap{len(d.h.log), len(d.all), state(t, d.h.t)})
			}
		}
		final := state(t, d.h.t)
		for _, sn := range snaps {
			// The runner's log: only the inputs that caused events.
			replay(t, g, sn.data, d.h.log[sn.logged:], final)
			// Every input, the ignored ones too: a restored table must
			// ignore exactly what the original ignored.
			replay(t, g, sn.data, d.all[sn.all:], final)
		}
	}
}

// replay restores data, applies the inputs of log (through MarshalInput and
// UnmarshalInput, as the runner stores them) and checks that every input
// gives the logged events and the table ends in state final.
func replay(t *testing.T, g int, data []byte, log []logged, final []byte) {
	t.Helper()
	r, err := Restore(data)
	if err != nil {
		t.Fatalf("game %d: restore: %v", g, err)
	}
	if !bytes.Equal(state(t, r), data) {
		t.Fatalf("game %d: restored snapshot re-encodes differently", g)
	}
	for i, l := range log {
		raw, err := MarshalInput(l.in)
		if err != nil {
			t.Fatalf("game %d: MarshalInput: %v", g, err)
		}
		in, err := UnmarshalInput(raw)
		if err != nil {
			t.Fatalf("game %d: UnmarshalInput: %v", g, err)
		}
		evs, _ := r.Apply(in)
		want, got := marshalEvents(t, l.evs), marshalEvents(t, evs)
		if len(want) != len(got) {
			t.Fatalf("game %d, input %d of the replay (%v): %d events, want %d", g, i, in.Kind, len(got), len(want))
		}
		for k := range want {
			if !bytes.Equal(want[k], got[k]) {
				t.Fatalf("game %d, input %d of the replay: event %d differs:\n got %v\nwant %v", g, i, k, evs[k], l.evs[k])
			}
		}
	}
	if !bytes.Equal(state(t, r), final) {
		t.Fatalf("game %d: snapshot + replay ends in another state", g)
	}
}

func TestDeterminism_SameSeedAndInputsGiveTheSameBytes(t *testing.T) {
	for seed := range uint64(20) {
		a, b := newDriver(t, seed), newDriver(t, seed)
		a.run(3000)
		b.run(3000)
		ea, eb := marshalEvents(t, append(a.h.start, flatten(a.h.log)...)), marshalEvents(t, append(b.h.start, flatten(b.h.log)...))
		if len(ea) != len(eb) || len(ea) == 0 {
			t.Fatalf("seed %d: %d and %d events", seed, len(ea), len(eb))
		}
		for i := range ea {
			if !bytes.Equal(ea[i], eb[i]) {
				t.Fatalf("seed %d: event %d differs", seed, i)
			}
		}
		if !bytes.Equal(state(t, a.h.t), state(t, b.h.t)) {
			t.Fatalf("seed %d: states differ", seed)
		}
	}
}

// leakCheck follows a table's events as every seat would receive them and
// checks that nobody learns a card they may not know. It knows the deal
// independently of the engines, from the seed and the dealing layout.
type leakCheck struct {
	tb     testing.TB
	t      *Table
	seed   uint64
	inHand [classic.Seats]cards.Set // cards dealt to each seat's hand this hand
	up     [japanese.Seats][japanese.Columns]cards.Card
	down   [japanese.Seats][japanese.Columns]cards.Card
	stock  cards.Set
	known  [classic.Seats]cards.Set // what each seat has been told privately
	public cards.Set
	events int
	// left holds the players who left or resigned their seat (PlayerLeft)
	// and did not sit again: the seat a bot then plays is nobody's, so
	// what is addressed to them is a watcher's to know.
	left map[string]bool
}

// keyOf is the shuffle key of hand h, which HandStarted begins: from its
// HandRevealed when the same step ended the hand (rest is the step's events
// after the HandStarted), else from the seeding the table holds.
func (c *leakCheck) keyOf(h uint32, rest []*tablev1.Event) fairdeal.Key {
	hand := c.t.hand(h)
	for _, e := range rest {
		if r := e.GetHandRevealed(); r != nil && r.GetHandIndex() == h {
			k, err := fairdeal.ShuffleKey(hand, fairdeal.ServerSeed(r.GetServerSeed()), clientSeeds(r))
			if err != nil {
				c.tb.Fatal(err)
			}
			return k
		}
	}
	if !c.t.sd.active || c.t.sd.index != h {
		c.tb.Fatalf("seed %d: hand %d started, neither revealed in its step nor the table's current hand", c.seed, h)
	}
	k, err := fairdeal.ShuffleKey(hand, c.t.sd.server, c.t.sd.clients[:len(c.t.seats)])
	if err != nil {
		c.tb.Fatal(err)
	}
	return k
}

func clientSeeds(r *tablev1.HandRevealed) []fairdeal.ClientSeed {
	out := make([]fairdeal.ClientSeed, len(r.GetClientSeeds()))
	for i, b := range r.GetClientSeeds() {
		out[i] = fairdeal.ClientSeed(b)
	}
	return out
}

func (c *leakCheck) deal(hs *tablev1.HandStarted, rest []*tablev1.Event) {
	h, n, dealer := int(hs.GetHandIndex()), int(hs.GetCardsPerSeat()), int(hs.GetDealerSeat())
	d, _ := fairdeal.Shuffle(c.keyOf(uint32(h), rest))
	*c = leakCheck{tb: c.tb, t: c.t, seed: c.seed, events: c.events, left: c.left}
	if c.t.set.Game == tablesettings.Japanese {
		for k, s := range [2]int{dealer, 1 - dealer} {
			c.inHand[s] = cards.SetOf(d[3*k:3*k+3]...) | cards.SetOf(d[6+5*k:11+5*k]...)
			for i := range japanese.Columns {
				c.down[s][i], c.up[s][i] = d[16+10*k+i], d[21+10*k+i]
			}
		}
		return
	}
	for i := range classic.Seats {
		s := (dealer + 1 + i) % classic.Seats
		if n == classic.MaxCards {
			c.inHand[s] = cards.SetOf(d[3*i:3*i+3]...) | cards.SetOf(d[12+6*i:18+6*i]...)
		} else {
			c.inHand[s] = cards.SetOf(d[n*i : n*i+n]...)
		}
	}
	if n < classic.MaxCards {
		c.stock = d[classic.Seats*n].Bit()
	}
}

// viewer is the seat an event's audience is (-1: everybody).
func (c *leakCheck) viewer(e *tablev1.Event) int {
	v := e.GetVisibility()
	switch v.GetAudience() {
	case tablev1.Audience_AUDIENCE_PUBLIC:
		return -1
	case tablev1.Audience_AUDIENCE_SEAT:
		return int(v.GetSeat())
	case tablev1.Audience_AUDIENCE_PLAYER:
		if c.left[v.GetPlayerId()] {
			return -1
		}
		return c.t.SeatOf(v.GetPlayerId())
	}
	c.tb.Fatalf("event %d without an audience: %v", e.GetSeq(), e)
	return -2
}

// step checks the events of one step in order.
func (c *leakCheck) step(evs []*tablev1.Event) {
	for i, e := range evs {
		c.event(e, evs[i+1:])
	}
}

func (c *leakCheck) event(e *tablev1.Event, rest []*tablev1.Event) {
	c.events++
	fail := func(why string, args ...any) {
		c.tb.Helper()
		c.tb.Fatalf("seed %d, event %d (%s) to %v: "+why, append([]any{c.seed, e.GetSeq(), kindOf(e), e.GetVisibility()}, args...)...)
	}
	v := c.viewer(e)
	switch x := e.GetEvent().(type) {
	case *tablev1.Event_PlayerLeft:
		if c.left == nil {
			c.left = map[string]bool{}
		}
		c.left[x.PlayerLeft.GetPlayerId()] = true
		c.allowed(e, v, fail)
	case *tablev1.Event_PlayerSeated:
		delete(c.left, x.PlayerSeated.GetSeat().GetPlayerId())
		c.allowed(e, v, fail)
	case *tablev1.Event_HandStarted:
		c.deal(x.HandStarted, rest)
	case *tablev1.Event_Dealt:
		s := int(x.Dealt.GetSeat())
		if v != s || e.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_SEAT {
			fail("cards of seat %d", s)
		}
		for _, w := range x.Dealt.GetCards() {
			cd := cardpb.FromCard(w)
			if !c.inHand[s].Has(cd) {
				fail("card %v was not dealt to seat %d's hand", cd, s)
			}
			c.known[s] = c.known[s].With(cd)
		}
	case *tablev1.Event_ColumnCardRevealed:
		s, col := int(x.ColumnCardRevealed.GetSeat()), int(x.ColumnCardRevealed.GetColumn())
		cd := cardpb.FromCard(x.ColumnCardRevealed.GetCard())
		if v != s || e.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_SEAT || col >= japanese.Columns || c.down[s][col] != cd {
			fail("face-down card %v of column %d", cd, col)
		}
		c.known[s] = c.known[s].With(cd)
	case *tablev1.Event_CardPlayed:
		s := int(x.CardPlayed.GetSeat())
		cd := cardpb.FromCard(x.CardPlayed.GetCard())
		if v != -1 || (!c.known[s].Has(cd) && !c.public.Has(cd)) {
			fail("seat %d played %v, which it was never given", s, cd)
		}
		c.public = c.public.With(cd)
	case *tablev1.Event_TrumpTurned:
		cd := cardpb.FromCard(x.TrumpTurned.GetCard())
		if v != -1 || !c.stock.Has(cd) {
			fail("turned card %v is not the stock's", cd)
		}
		c.public = c.public.With(cd)
	case *tablev1.Event_ColumnsDealt:
		s := int(x.ColumnsDealt.GetSeat())
		for i, w := range x.ColumnsDealt.GetFaceUp() {
			cd := cardpb.FromCard(w)
			if v != -1 || i >= japanese.Columns || c.up[s][i] != cd {
				fail("column %d shows %v, not its face-up card", i, cd)
			}
			c.public = c.public.With(cd)
		}
	default:
		c.allowed(e, v, fail)
	}
}

// allowed checks every card anywhere in m against what viewer may know.
func (c *leakCheck) allowed(m protoMessage, viewer int, fail func(string, ...any)) {
	for _, cd := range cardsIn(m.ProtoReflect(), nil) {
		if !c.public.Has(cd) && (viewer < 0 || !c.known[viewer].Has(cd)) {
			fail("card %v is neither public nor the viewer's (seat %d)", cd, viewer)
		}
	}
}

type protoMessage interface{ ProtoReflect() protoreflect.Message }

var cardEnum = commonv1.Card(0).Descriptor().FullName()

// cardsIn collects every pulka.common.v1.Card value in m, however deep.
func cardsIn(m protoreflect.Message, out []cards.Card) []cards.Card {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() == protoreflect.EnumKind && fd.Enum().FullName() == cardEnum:
			add := func(n protoreflect.EnumNumber) {
				if cd := cardpb.FromCard(commonv1.Card(n)); cd.Valid() {
					out = append(out, cd)
				}
			}
			if fd.IsList() {
				for i := range v.List().Len() {
					add(v.List().Get(i).Enum())
				}
			} else {
				add(v.Enum())
			}
		case fd.Kind() == protoreflect.MessageKind && fd.IsList():
			for i := range v.List().Len() {
				out = cardsIn(v.List().Get(i).Message(), out)
			}
		case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
			out = cardsIn(v.Message(), out)
		}
		return true
	})
	return out
}

func TestHiddenCards_NoEventOrViewShowsACardItsAudienceMayNotKnow(t *testing.T) {
	games := 1200
	if testing.Short() {
		games = 60
	}
	events := 0
	for g := range games {
		d := newDriver(t, uint64(50000+g))
		c := &leakCheck{tb: t, t: d.h.t, seed: uint64(50000 + g)}
		c.step(d.h.start)
		seen := 0
		for i := 0; i < 5000 && !d.h.t.Over(); i++ {
			d.step()
			for _, l := range d.h.log[seen:] {
				c.step(l.evs)
			}
			seen = len(d.h.log)
			if d.rng.IntN(50) == 0 {
				for s := -1; s < len(d.h.t.seats); s++ {
					c.allowed(d.h.t.View(s), s, func(why string, args ...any) {
						t.Fatalf("game %d, view of seat %d: "+why, append([]any{g, s}, args...)...)
					})
				}
			}
		}
		events += c.events
	}
	t.Logf("%d games, %d events checked", games, events)
}
