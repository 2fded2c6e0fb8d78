package wire

// Real games and score sheets, played by the runner's table and the scoring
// service's sheet builder and recorded in pkg/golden, for the tests of the
// frames that carry them: every event and sheet of many games must come
// back from both encodings as the runner wrote it, minus what stays between
// services.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/golden"
)

// kindOf names ev's oneof member ("" when none is set).
func kindOf(ev *tablev1.Event) string {
	m := ev.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("event")); fd != nil {
		return string(fd.Name())
	}
	return ""
}

// game calls visit with every event, in order, of random game g of
// pkg/golden (golden.SetWire): seeded random settings and seats, players
// sending plausible (sometimes refused) moves, ticks at the deadlines (timer
// and bot moves), dropped and returning connections, leaves, resyncs,
// played by the runner's table (services/table-runner/internal/table).
func game(tb testing.TB, g uint64, visit func(*tablev1.Event)) {
	tb.Helper()
	evs, err := golden.Events(golden.SetWire, golden.GameName(g), golden.KindEvents)
	if err != nil || len(evs) == 0 {
		tb.Fatalf("game %d: %d events, %v", g, len(evs), err)
	}
	for _, ev := range evs {
		visit(ev)
	}
}

// gameSheets calls visit with every sheet update the scoring service
// publishes for game g of pkg/golden (golden.SetWireNamed: the game of
// SetWire with names in many scripts, its scoring rules varied): one when
// the game starts, one per hand and one at the end.
func gameSheets(tb testing.TB, g uint64, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	sheets(tb, golden.SetWireNamed, golden.GameName(g), visit)
}

// premiaSheets are the sheet updates of classic game g of pkg/golden
// (golden.SetPremia) whose hands are random but where some seats always
// make their bid, so that premia, moshla and struck hands come up, which
// they almost never do in random play.
func premiaSheets(tb testing.TB, g uint64, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	sheets(tb, golden.SetPremia, golden.GameName(g), visit)
}

func sheets(tb testing.TB, set, game string, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	updates, err := golden.Sheets(set, game)
	if err != nil || len(updates) == 0 {
		tb.Fatalf("sheets of %s/%s: %d, %v", set, game, len(updates), err)
	}
	for _, u := range updates {
		visit(u)
	}
}

// sheetCoverage counts what the real sheets had in them, so that a test can
// tell the sheets tested what they should.
type sheetCoverage struct {
	bidZero, bidUnset, khishti, struck, premia, moshla int
	finished, onCourse, final, nonASCII, escaped       int
}

func (c *sheetCoverage) count(u *scoringv1.SheetUpdate) {
	s := u.GetSheet()
	for _, p := range s.GetPlayers() {
		n := p.GetDisplayName()
		if strings.ContainsFunc(n, func(r rune) bool { return r >= 0x80 }) {
			c.nonASCII++
		}
		if strings.ContainsFunc(n, func(r rune) bool { return r < ' ' || r == '"' || r == '\\' }) {
			c.escaped++
		}
	}
	for _, p := range s.GetPulkas() {
		if p.GetFinished() {
			c.finished++
		}
		for _, t := range p.GetTotals() {
			if t.GetPremia() != 0 {
				c.premia++
			}
			if t.GetMoshla() != 0 {
				c.moshla++
			}
		}
		for _, h := range p.GetHands() {
			for _, cell := range h.GetCells() {
				switch {
				case cell.Bid == nil:
					c.bidUnset++
				case *cell.Bid == 0:
					c.bidZero++
				}
				if cell.GetPenalty() != 0 {
					c.khishti++
				}
				if cell.GetStruck() {
					c.struck++
				}
			}
		}
	}
	for _, t := range s.GetTotals() {
		if t.GetOnCourse() {
			c.onCourse++
		}
	}
	if u.GetVersion()%2 == 0 {
		c.final++
	}
}

func benchSheet(tb testing.TB, hands int) *scoringv1.SheetUpdate {
	tb.Helper()
	want := 1 + 2*uint64(hands)
	if hands == 24 {
		want++
	}
	var found *scoringv1.SheetUpdate
	sheets(tb, golden.SetPremia, "bench", func(u *scoringv1.SheetUpdate) { // seed 1, seat 1 making every bid
		if found == nil && u.GetVersion() == want {
			found = u
		}
	})
	if found == nil {
		tb.Fatalf("no sheet after %d hands", hands)
	}
	return found
}

// roundTrip encodes f in both encodings and returns what a client decodes
// from each.
func roundTrip(tb testing.TB, name string, f *Frame) [2]*gatewayv1.ServerFrame {
	tb.Helper()
	var out [2]*gatewayv1.ServerFrame
	for _, enc := range []Encoding{Binary, JSON} {
		b, err := f.Bytes(enc)
		if err != nil {
			tb.Fatalf("%s: encode %s: %v", name, enc, err)
		}
		got := &gatewayv1.ServerFrame{}
		if enc == JSON {
			err = protojson.Unmarshal(b, got)
		} else {
			err = proto.Unmarshal(b, got)
		}
		if err != nil {
			tb.Fatalf("%s: decode %s: %v: %s", name, enc, err, b)
		}
		out[enc] = got
	}
	return out
}

// TestEvent_RealGamesComeBackFromBothEncodings sends every event of many
// random classic and Japanese games through an event frame in both
// encodings: each decodes to the event the runner wrote, less its trace,
// epoch and command entry id. Every kind of event a game makes, the timer
// member, a Japanese column (0 too) and a joker declaration must have come
// up, or the games did not test what they should.
func TestEvent_RealGamesComeBackFromBothEncodings(t *testing.T) {
	games := 40
	if testing.Short() {
		games = 8
	}
	kinds := map[string]int{}
	var timers, columns, columnZero, declarations int
	for g := range games {
		game(t, uint64(g), func(ev *tablev1.Event) {
			kind := kindOf(ev)
			kinds[kind]++
			if cp := ev.GetCardPlayed(); cp != nil {
				if cp.Column != nil {
					columns++
					if *cp.Column == 0 {
						columnZero++
					}
				}
				if cp.GetDeclaration() != nil {
					declarations++
				}
			}
			if ev.GetTimer() != nil {
				timers++
			}
			want := proto.CloneOf(ev)
			want.Trace, want.Epoch, want.CommandEntryId = nil, 0, ""
			in := proto.CloneOf(ev)
			in.Epoch, in.CommandEntryId = 7, "1740830400123-0"
			in.Trace = &commonv1.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
			name := "game " + strconv.Itoa(g) + " event " + strconv.FormatUint(ev.GetSeq(), 10) + " (" + kind + ")"
			data, err := proto.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			raw, head, err := EventFrameOf("t1", "1-0", data, seating)
			if err != nil {
				t.Fatalf("%s: EventFrameOf: %v", name, err)
			}
			checkHead(t, name, head, in)
			decoded := NewFrame(Event("t1", "1-0", in))
			for _, f := range []*Frame{decoded, raw} {
				for enc, got := range roundTrip(t, name, f) {
					e := got.GetEvent()
					if e.GetTable() != "t1" || e.GetId() != "1-0" || !proto.Equal(e.GetEvent(), want) {
						t.Fatalf("%s: %s frame decodes to %v, want %v", name, Encoding(enc), e, want)
					}
				}
			}
			// The event's own bytes, cut, are the bytes of its encoding.
			if a, b := mustBytes(decoded.Bytes(Binary)), mustBytes(raw.Bytes(Binary)); string(a) != string(b) {
				t.Fatalf("%s: EventFrameOf's bytes differ from the encoded event's:\n%x\n%x", name, b, a)
			}
		})
	}
	for _, k := range []string{"game_started", "hand_started", "dealt", "bid_made", "card_played", "trick_won",
		"hand_ended", "timer_started", "trump_chosen", "columns_dealt", "view_synced", "game_ended",
		"hand_committed", "hand_revealed", "player_away", "player_back"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event came up", k)
		}
	}
	if timers == 0 || columns == 0 || columnZero == 0 || declarations == 0 {
		t.Errorf("never saw: timer %d, column %d, column 0 %d, declaration %d", timers, columns, columnZero, declarations)
	}
	t.Logf("%d games: %v", games, kinds)
}

// TestSheet_RealSheetsComeBackFromBothEncodings does the same for every
// sheet update of random games (and of games where some seats make every
// hand, so that premia, moshla and struck hands come up), names in many
// scripts and with characters JSON escapes included.
func TestSheet_RealSheetsComeBackFromBothEncodings(t *testing.T) {
	var cov sheetCoverage
	check := func(u *scoringv1.SheetUpdate) {
		cov.count(u)
		want := proto.CloneOf(u)
		want.Trace = nil
		name := "sheet " + u.GetSheet().GetGameId() + " v" + strconv.FormatUint(u.GetVersion(), 10)
		for enc, got := range roundTrip(t, name, NewFrame(Sheet("t1", "2-0", proto.CloneOf(u)))) {
			s := got.GetSheet()
			if s.GetTable() != "t1" || s.GetId() != "2-0" || !proto.Equal(s.GetUpdate(), want) {
				t.Fatalf("%s: %s frame decodes to %v, want %v", name, Encoding(enc), s, want)
			}
		}
	}
	games := 16
	if testing.Short() {
		games = 4
	}
	for g := range games {
		gameSheets(t, uint64(g), check)
		premiaSheets(t, uint64(g), check)
	}
	if cov.bidZero == 0 || cov.bidUnset == 0 || cov.khishti == 0 || cov.struck == 0 || cov.premia == 0 ||
		cov.moshla == 0 || cov.finished == 0 || cov.onCourse == 0 || cov.final == 0 || cov.nonASCII == 0 || cov.escaped == 0 {
		t.Errorf("the sheets missed something: %+v", cov)
	}
}

// seating stands for the gateway's visibility.Folds: the kinds that move a
// seat are decoded whole by EventHead.
func seating(num protowire.Number) bool {
	return num == 10 || num == 11 || num == 12 || num == 13 || num == 31
}

// checkHead holds head, EventHead of ev's encoding, to ev: its visibility,
// and all of ev when its kind is one seating decodes whole.
func checkHead(tb testing.TB, name string, head, ev *tablev1.Event) {
	tb.Helper()
	m := ev.ProtoReflect()
	fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("event"))
	want := &tablev1.Event{Visibility: ev.GetVisibility()}
	if fd != nil && seating(fd.Number()) {
		want = ev
	}
	if !proto.Equal(head, want) {
		tb.Fatalf("%s: head %v, want %v", name, head, want)
	}
}

// BenchmarkEvent is the fan-out's cost per event: one event frame (a card
// played carrying the next seat's timer, the commonest frame of a game)
// encoded once per encoding, the runner's fields cleared first.
func BenchmarkEvent(b *testing.B) {
	ev := benchEvent()
	benchFrame(b, func() *gatewayv1.ServerFrame { return Event("0123456789abcdef", "1740830400125-0", ev) })
}

// BenchmarkEventEntry is a gateway's work on one entry of a table's event
// stream before its fan-out: what it reads of the event (who may see it;
// its seating) and the frame's binary encoding. "decode" is how it was
// done before EventFrameOf: the event decoded whole, then encoded.
func BenchmarkEventEntry(b *testing.B) {
	data, err := proto.Marshal(benchEvent())
	if err != nil {
		b.Fatal(err)
	}
	const table, id = "0123456789abcdef", "1740830400125-0"
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ev := &tablev1.Event{}
			if err := proto.Unmarshal(data, ev); err != nil {
				b.Fatal(err)
			}
			if _, err := NewFrame(Event(table, id, ev)).Bytes(Binary); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("EventFrameOf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f, _, err := EventFrameOf(table, id, data, seating)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Bytes(Binary); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSheet is the same for the sheet of a whole classic game (24 hands
// and the final version): every client of a table gets one after every hand.
func BenchmarkSheet(b *testing.B) {
	u := benchSheet(b, 24)
	benchFrame(b, func() *gatewayv1.ServerFrame { return Sheet("0123456789abcdef", "1740830400125-0", u) })
}

// benchFrame measures making frame's Frame and encoding it, in each encoding.
func benchFrame(b *testing.B, frame func() *gatewayv1.ServerFrame) {
	for _, enc := range []Encoding{Binary, JSON} {
		b.Run(enc.String(), func(b *testing.B) {
			size := 0
			b.ReportAllocs()
			for b.Loop() {
				f, err := NewFrame(frame()).Bytes(enc)
				if err != nil {
					b.Fatal(err)
				}
				size = len(f)
			}
			b.ReportMetric(float64(size), "B/frame")
		})
	}
}

func benchEvent() *tablev1.Event {
	at := time.Date(2025, 3, 1, 12, 0, 0, 123_000_000, time.UTC)
	return &tablev1.Event{Seq: 412, TableId: "0123456789abcdef", GameId: "0123456789abcdef.9e3779b97f4a7c15",
		Epoch: 3, OccurredAt: timestamppb.New(at), CausedBy: "player-1/k-118", CommandEntryId: "1740830400123-0",
		Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Seat: 1, Card: commonv1.Card_CARD_JOKER_2,
			Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}}},
		Timer: &tablev1.TimerStarted{Seat: 2, Phase: tablev1.Phase_PHASE_PLAY, Deadline: timestamppb.New(at.Add(20 * time.Second))}}
}
