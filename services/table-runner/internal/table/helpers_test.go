package table

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/classic/classicpb"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func humans(n int) []SeatInfo {
	out := make([]SeatInfo, n)
	for i := range out {
		out[i] = SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "Player " + strconv.Itoa(i)}
	}
	return out
}

func player(s int) string { return "p" + strconv.Itoa(s) }

func classicSet(v classic.Variant, botDelay time.Duration) tablesettings.Settings {
	sc := scoring.DefaultSettings()
	sc.Variant = v
	s := tablesettings.ClassicSettings(sc)
	s.BotDelay = botDelay
	return s
}

func japaneseSet(target int) tablesettings.Settings { return tablesettings.JapaneseSettings(target) }

// harness drives one table like a runner: it numbers command stream
// entries, keeps the clock, and records every input that produced events
// (what the runner logs).
type harness struct {
	tb     testing.TB
	t      *Table
	now    time.Time
	nextMS uint64
	cmdNo  int
	log    []logged
	start  []*tablev1.Event
	seed   uint64
	inputs int
	last   Input // the last input applied, with its entropy
	// autoSeed: every awaited seat sends its client seed as soon as a hand
	// is committed (as the players' clients do), so the hand is dealt in
	// the same instant; apply returns those events too.
	autoSeed bool
}

type logged struct {
	in  Input
	evs []*tablev1.Event
}

func newHarness(tb testing.TB, s tablesettings.Settings, seed uint64, seats []SeatInfo) *harness {
	tb.Helper()
	return newHarnessSeeding(tb, s, seed, seats, true)
}

// newHarnessSeeding is newHarness with autoSeed chosen.
func newHarnessSeeding(tb testing.TB, s tablesettings.Settings, seed uint64, seats []SeatInfo, autoSeed bool) *harness {
	tb.Helper()
	t, evs, err := New("t1", "g"+strconv.FormatUint(seed, 10), s, seats, t0, entropyOf(seed, 0))
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	h := &harness{tb: tb, t: t, now: t0, nextMS: uint64(t0.UnixMilli()), start: evs, seed: seed, autoSeed: autoSeed}
	h.start = append(h.start, h.seedAll()...)
	return h
}

// seedAll sends every awaited seat's client seed for the hand being seeded,
// as the players' clients do at once, and returns the events (the deal
// follows the last seed). With autoSeed off it does nothing.
func (h *harness) seedAll() []*tablev1.Event {
	var out []*tablev1.Event
	for h.autoSeed && h.t.sd.waiting() {
		sd := h.t.sd
		for s := range h.t.seats {
			bit := uint8(1) << s
			if sd.awaited&bit == 0 || sd.got&bit != 0 {
				continue
			}
			seed := fairdeal.LocalKey(h.seed^0x5eed, sd.index*8+uint32(s))
			c := &tablev1.Command{CommandId: fmt.Sprintf("seed-%d-%d", sd.index, s), PlayerId: h.t.seats[s].player,
				TableId: h.t.ID(), Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{
					HandIndex: sd.index, Seed: seed[:]}}}
			evs, err := h.applyOnce(CommandInput(c, h.entry(), h.now))
			if err != nil {
				h.tb.Fatalf("client seed of seat %d: %v", s, err)
			}
			out = append(out, evs...)
			break // the state changed: look again
		}
	}
	return out
}

// entropyOf is the test's stand-in for crypto/rand: the n-th input's
// entropy of the table of seed.
func entropyOf(seed uint64, n int) Entropy {
	k := fairdeal.LocalKey(seed, uint32(n)+1)
	return Entropy(k)
}

func (h *harness) entry() string {
	h.nextMS++
	return strconv.FormatUint(h.nextMS, 10) + "-0"
}

// apply applies in, with fresh entropy as the runner draws it, and logs
// it as the runner does (ForLog); then the clients' seeds (autoSeed), whose
// events it appends.
func (h *harness) apply(in Input) ([]*tablev1.Event, error) {
	evs, err := h.applyOnce(in)
	if len(evs) > 0 {
		evs = append(evs, h.seedAll()...)
	}
	return evs, err
}

func (h *harness) applyOnce(in Input) ([]*tablev1.Event, error) {
	h.inputs++
	if in.Entropy == (Entropy{}) {
		in.Entropy = entropyOf(h.seed, h.inputs)
	}
	h.last = in
	evs, err := h.t.Apply(in)
	if len(evs) > 0 {
		h.log = append(h.log, logged{ForLog(in, evs), evs})
	}
	return evs, err
}

// cmd sends a command from player at the current time with a fresh id and
// entry.
func (h *harness) cmd(player string, c *tablev1.Command) ([]*tablev1.Event, error) {
	h.cmdNo++
	c.CommandId = "c" + strconv.Itoa(h.cmdNo)
	c.PlayerId = player
	c.TableId = h.t.ID()
	return h.apply(CommandInput(c, h.entry(), h.now))
}

func (h *harness) tick(at time.Time) []*tablev1.Event {
	h.tb.Helper()
	if at.After(h.now) {
		h.now = at
	}
	evs, err := h.apply(Tick(at))
	if err != nil {
		h.tb.Fatalf("tick: %v", err)
	}
	return evs
}

// mustMove plays seat's legal move m as a command from the seat's player.
func (h *harness) mustCmd(player string, c *tablev1.Command) []*tablev1.Event {
	h.tb.Helper()
	evs, err := h.cmd(player, c)
	if err != nil {
		h.tb.Fatalf("command %v from %s: %v", c, player, err)
	}
	return evs
}

// legal returns the commands seat may send now.
func legalCommands(t *Table, seat int) []*tablev1.Command {
	var out []*tablev1.Command
	switch e := t.eng.(type) {
	case *classicEngine:
		for _, m := range e.g.Legal(seat, nil) {
			out = append(out, classicCmd(m))
		}
	case *japaneseEngine:
		for _, m := range e.g.Legal(seat, nil) {
			out = append(out, japaneseCmd(m))
		}
	}
	return out
}

func classicCmd(m classic.Move) *tablev1.Command {
	switch m.Kind {
	case classic.MoveTrump:
		return trumpCmd(m.Suit)
	case classic.MoveBid:
		return bidCmd(int(m.Bid))
	}
	pc := &tablev1.PlayCardCommand{Card: cardpb.Card(m.Card)}
	if m.Card.IsJoker() {
		a, su := classicpb.Declare(m.Joker, m.Suit)
		pc.Declaration = &tablev1.JokerDeclaration{Action: a, Suit: su}
	}
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: pc}}
}

func japaneseCmd(m japanese.Move) *tablev1.Command {
	if m.Kind == japanese.KindTrump {
		return trumpCmd(m.Suit)
	}
	pc := &tablev1.PlayCardCommand{Card: cardpb.Card(m.Card)}
	if m.Card.IsJoker() {
		pc.Declaration = japaneseJoker(m.Suit)
	}
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: pc}}
}

func bidCmd(n int) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: uint32(n)}}}
}

func trumpCmd(s cards.Suit) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: cardpb.Suit(s)}}}
}

func playCmd(c cards.Card) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: cardpb.Card(c)}}}
}

func sitCmd(seat int) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: uint32(seat)}}}
}

func leaveCmd() *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}}
}

func resignCmd() *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}}
}

func reconnectCmd() *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_Reconnect{Reconnect: &tablev1.ReconnectCommand{}}}
}

// kinds lists the event kinds of evs, e.g. "BidMade TimerStarted".
func kinds(evs []*tablev1.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = kindOf(e)
	}
	return out
}

func kindOf(e *tablev1.Event) string {
	return string(e.ProtoReflect().WhichOneof(e.ProtoReflect().Descriptor().Oneofs().ByName("event")).Name())
}

func count(evs []*tablev1.Event, kind string) int {
	n := 0
	for _, e := range evs {
		if kindOf(e) == kind {
			n++
		}
	}
	return n
}

func find[T any](evs []*tablev1.Event, get func(*tablev1.Event) T) (T, bool) {
	var zero T
	for _, e := range evs {
		if v := get(e); !isNil(v) {
			return v, true
		}
	}
	return zero, false
}

func isNil(v any) bool {
	if m, ok := v.(proto.Message); ok {
		return !m.ProtoReflect().IsValid()
	}
	return v == nil
}

// state is everything observable of a table: its snapshot bytes.
func state(tb testing.TB, t *Table) []byte {
	tb.Helper()
	b, err := t.MarshalBinary()
	if err != nil {
		tb.Fatalf("MarshalBinary: %v", err)
	}
	return b
}

// gameState is the engine and seats without the bookkeeping (seq, read
// position, dedupe ring) that a rejected command advances.
func gameState(tb testing.TB, t *Table) string {
	tb.Helper()
	eng, err := t.eng.marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%x %+v %d", eng, t.seats, t.actAt)
}

func marshalEvents(tb testing.TB, evs []*tablev1.Event) [][]byte {
	tb.Helper()
	out := make([][]byte, len(evs))
	for i, e := range evs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func rejectOf(err error) tablev1.RejectReason {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Reason
	}
	return tablev1.RejectReason_REJECT_REASON_UNSPECIFIED
}

var _ = commonv1.Card_CARD_UNSPECIFIED
