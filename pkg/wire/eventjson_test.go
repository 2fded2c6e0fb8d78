package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// fastKinds are the oneof members the hand-written encoder writes; every
// other member goes to protojson. TestEventJSON_CoversExactlyTheFastKinds
// keeps this list and eventjson.go in step.
var fastKinds = map[string]bool{
	"player_left": true, "seat_taken_by_bot": true, "player_away": true, "player_back": true,
	"hand_started": true, "dealt": true, "trump_turned": true, "trump_chosen": true,
	"bid_made": true, "timer_started": true, "card_played": true, "trick_won": true,
	"hand_ended": true, "pulka_ended": true,
	"hand_committed": true, "client_seed_accepted": true, "hand_revealed": true,
}

// commitRevealKinds are the fast kinds of the per-hand commit–reveal deal.
// The random games' players send no client seeds (a hand is dealt at its
// seed deadline), so client_seed_accepted never comes up in them; and until
// pkg/table deals commit–reveal, neither do the other two. The real-games
// test asks only for what the games make; TestEventJSON_Rules covers all
// three either way.
var commitRevealKinds = map[string]bool{"hand_committed": true, "client_seed_accepted": true, "hand_revealed": true}

// madeByRandomGames reports whether the random games of these tests make
// events of kind, once dealsCommitted says pkg/table deals commit–reveal.
func madeByRandomGames(kind string, dealsCommitted bool) bool {
	if !commitRevealKinds[kind] {
		return true
	}
	return dealsCommitted && kind != "client_seed_accepted"
}

// kindOf names ev's oneof member ("" when none is set).
func kindOf(ev *tablev1.Event) string {
	m := ev.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("event")); fd != nil {
		return string(fd.Name())
	}
	return ""
}

// referenceBody is what Event wrote before the fast encoder: protojson of ev
// without the fields that stay between services.
func referenceBody(ev *tablev1.Event) ([]byte, error) {
	out := proto.CloneOf(ev)
	out.Epoch, out.Trace, out.CommandEntryId = 0, nil, ""
	return protoJSON.Marshal(out)
}

// tokens is b's JSON token stream: equal streams mean the same keys in the
// same order with the same values and types.
func tokens(b []byte) ([]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out []any
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tok)
	}
}

func decode(tb testing.TB, what string, b []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("%s is not JSON: %v: %s", what, err, b)
	}
	return v
}

// checkSameJSON checks a fast encoder's output got against protojson's
// want: valid compact JSON, equal to protojson's after decoding, with
// protojson's keys in protojson's order. And, stricter than that, the very
// bytes protojson writes once its random spaces are compacted away: the
// encoders escape strings and write numbers, timestamps and durations
// exactly as protojson does.
func checkSameJSON(tb testing.TB, name string, got, want []byte) {
	tb.Helper()
	if !json.Valid(got) {
		tb.Fatalf("%s: fast output is not JSON: %s", name, got)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, got); err != nil || !bytes.Equal(c.Bytes(), got) {
		tb.Errorf("%s: fast output is not compact: %s", name, got)
	}
	if g, w := decode(tb, name+": fast output", got), decode(tb, name+": protojson", want); !reflect.DeepEqual(g, w) {
		tb.Errorf("%s: fast output differs from protojson\n got %s\nwant %s", name, got, want)
	}
	gt, gerr := tokens(got)
	wt, werr := tokens(want)
	if gerr != nil || werr != nil || !reflect.DeepEqual(gt, wt) {
		tb.Errorf("%s: fast output is not protojson's keys in protojson's order\n got %s\nwant %s", name, got, want)
	}
	c.Reset()
	if err := json.Compact(&c, want); err != nil || !bytes.Equal(c.Bytes(), got) {
		tb.Errorf("%s: fast output is not protojson's bytes\n got %s\nwant %s", name, got, want)
	}
}

// codec is one hand-written encoder under test: its fast path, the frame
// function built on it, and what protojson (the definition) gives.
type codec[M proto.Message] struct {
	what      string                             // the frame function, for messages
	fast      func(b []byte, m M) ([]byte, bool) // appends m's body, or declines
	frame     func(m M) ([]byte, error)          // the production frame
	reference func(m M) ([]byte, error)          // protojson of the body
	// wantFrame is the frame as it was before the fast encoder, given the
	// reference body.
	wantFrame func(m M, body []byte) ([]byte, error)
}

// check checks c against protojson for m and reports whether the fast path
// took it:
//   - when protojson fails, the fast encoder fails and the frame function
//     returns an error;
//   - otherwise the fast output, if any, is protojson's (checkSameJSON), and
//     appends to what it is given;
//   - the frame decodes as wantFrame's, and m is unchanged.
func (c codec[M]) check(tb testing.TB, name string, m M) (fast bool) {
	tb.Helper()
	before := proto.Clone(m)
	want, werr := c.reference(m)
	got, ok := c.fast([]byte("prefix"), m)
	if ok && !bytes.HasPrefix(got, []byte("prefix")) {
		tb.Fatalf("%s: the fast encoder lost what it appended to", name)
	}
	got = bytes.TrimPrefix(got, []byte("prefix"))
	frame, ferr := c.frame(m)
	if !proto.Equal(m, before) {
		tb.Fatalf("%s: encoding changed the message", name)
	}
	if werr != nil {
		if ok {
			tb.Errorf("%s: protojson fails (%v) but the fast encoder wrote %s", name, werr, got)
		}
		if ferr == nil {
			tb.Errorf("%s: protojson fails (%v) but %s wrote %s", name, werr, c.what, frame)
		}
		return ok
	}
	if ferr != nil {
		tb.Fatalf("%s: %s: %v", name, c.what, ferr)
	}
	if ok {
		checkSameJSON(tb, name, got, want)
	}
	wantFrame, err := c.wantFrame(m, want)
	if err != nil {
		tb.Fatal(err)
	}
	if g, w := decode(tb, name+": frame", frame), decode(tb, name+": want frame", wantFrame); !reflect.DeepEqual(g, w) {
		tb.Errorf("%s: %s frame differs\n got %s\nwant %s", name, c.what, frame, wantFrame)
	}
	return ok
}

// eventCodec is the events' encoder; its frames are those of table t1,
// entry 1-0.
var eventCodec = codec[*tablev1.Event]{
	what:      "Event",
	fast:      appendEventJSON,
	frame:     func(ev *tablev1.Event) ([]byte, error) { return Event("t1", "1-0", ev) },
	reference: referenceBody,
	wantFrame: func(_ *tablev1.Event, body []byte) ([]byte, error) {
		return json.Marshal(struct {
			Type  string          `json:"type"`
			Table string          `json:"table"`
			ID    string          `json:"id"`
			Event json.RawMessage `json:"event"`
		}{TypeEvent, "t1", "1-0", body})
	},
}

// checkEvent is eventCodec.check: the fast encoder and Event against
// protojson for ev.
func checkEvent(tb testing.TB, name string, ev *tablev1.Event) (fast bool) {
	tb.Helper()
	return eventCodec.check(tb, name, ev)
}

// game plays one random game through pkg/table's public API, the way a
// runner and its players would: seeded random settings and seats, players
// sending plausible (sometimes refused) moves, ticks at the deadlines (timer
// and bot moves), dropped and returning connections, leaves, resyncs. It
// calls visit with every event, in order.
func game(tb testing.TB, seed uint64, visit func(*tablev1.Event)) {
	tb.Helper()
	playGame(tb, seed, nil, func(_ *table.Table, ev *tablev1.Event) { visit(ev) })
}

// playGame is game with the table passed along with each event, and, when
// names is not empty, the seats' names taken from it in turn (the game is
// otherwise the same: the random choices do not change).
func playGame(tb testing.TB, seed uint64, names []string, visit func(*table.Table, *tablev1.Event)) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x776972650a))
	japanese := seed%2 == 1
	var s tablesettings.Settings
	var seats []table.SeatInfo
	if japanese {
		s = tablesettings.JapaneseSettings([]int{11, 15, 21, 31}[rng.IntN(4)])
		seats = make([]table.SeatInfo, 2)
	} else {
		sc := scoring.DefaultSettings()
		if rng.IntN(3) == 0 {
			sc.Variant = classic.Nines
		}
		s = tablesettings.ClassicSettings(sc)
		s.BotDelay = []time.Duration{0, 300 * time.Millisecond, tablesettings.DefaultBotDelay}[rng.IntN(3)]
		seats = make([]table.SeatInfo, 4)
	}
	s.MoveTimeout = time.Duration(1+rng.IntN(30)) * time.Second
	s.ReconnectGrace = time.Duration(1+rng.IntN(90)) * time.Second
	for i := range seats {
		seats[i] = table.SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "Player " + strconv.Itoa(i)}
		switch {
		case !japanese && rng.IntN(3) == 0:
			seats[i] = table.SeatInfo{Bot: true, Name: "Bot " + strconv.Itoa(i)}
		case rng.IntN(4) == 0:
			seats[i].Name = "ნიკა " + strconv.Itoa(i) // game_started then falls back
		}
		if len(names) > 0 {
			seats[i].Name = names[(int(seed)*len(seats)+i)%len(names)]
		}
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(365*24*3600)) * time.Second)
	tbl, evs, err := table.New("tbl"+strconv.FormatUint(seed, 10), "game"+strconv.FormatUint(seed, 10), s, seats, now,
		table.Entropy(fairdeal.LocalKey(seed, 0)))
	if err != nil {
		tb.Fatalf("game %d: %v", seed, err)
	}
	for _, ev := range evs {
		visit(tbl, ev)
	}
	entry, cmdNo := uint64(now.UnixMilli()), 0
	send := func(in table.Input) {
		in.Entropy = table.Entropy(fairdeal.LocalKey(seed, rng.Uint32())) // the runner's crypto/rand
		evs, _ := tbl.Apply(in)                                           // refused moves are part of the game
		for _, ev := range evs {
			visit(tbl, ev)
		}
	}
	command := func(player string, c *tablev1.Command) {
		cmdNo++
		entry++
		c.CommandId = CommandID(player, "k"+strconv.Itoa(cmdNo))
		c.PlayerId, c.TableId = player, tbl.ID()
		send(table.CommandInput(c, strconv.FormatUint(entry, 10)+"-0", now))
	}
	for step := 0; step < 20000 && !tbl.Over(); step++ {
		// Real clocks have nanoseconds, and whole seconds, milliseconds and
		// microseconds happen too: all of protojson's fraction lengths. The
		// clock is rounded up to one of them, so that it never goes back.
		now = now.Add(time.Duration(rng.Int64N(int64(3 * time.Second))))
		if g := []time.Duration{time.Second, time.Millisecond, time.Microsecond, 1}[rng.IntN(4)]; now.Sub(now.Truncate(g)) != 0 {
			now = now.Truncate(g).Add(g)
		}
		who := "p" + strconv.Itoa(rng.IntN(len(seats)))
		switch r := rng.IntN(100); {
		case r < 60:
			v := tbl.View(-1)
			turn := int(v.GetTurnSeat())
			p := v.GetSeats()[turn].GetPlayer().GetPlayerId()
			if p == "" || v.GetDeadline() == nil {
				if next, ok := tbl.NextDeadline(); ok && next.After(now) {
					now = next
				}
				send(table.Tick(now))
				continue
			}
			command(p, randomMove(rng, tbl.View(turn), turn, japanese))
		case r < 85:
			if next, ok := tbl.NextDeadline(); ok && next.After(now) {
				now = next
			}
			send(table.Tick(now))
		case r < 90:
			if !japanese || rng.IntN(10) == 0 {
				send(table.Away(who, now))
			}
		case r < 96:
			send(table.Back(who, now))
		case r < 98:
			command(who, &tablev1.Command{Command: &tablev1.Command_Reconnect{Reconnect: &tablev1.ReconnectCommand{}}})
		case r < 99:
			if !japanese || rng.IntN(50) == 0 {
				command(who, &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}})
			}
		default:
			command(who, &tablev1.Command{Command: &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: uint32(rng.IntN(len(seats)))}}})
		}
	}
}

// randomMove is a plausible move for seat from what it sees: a bid, a trump,
// or a card from its hand (or, in Japanese, its face-up columns).
func randomMove(rng *rand.Rand, v *tablev1.TableView, seat int, japanese bool) *tablev1.Command {
	switch v.GetPhase() {
	case tablev1.Phase_PHASE_BID:
		return &tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{
			Tricks: uint32(rng.IntN(int(v.GetCardsPerSeat()) + 1))}}}
	case tablev1.Phase_PHASE_CHOOSE_TRUMP:
		return &tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{
			Trump: commonv1.Suit(1 + rng.IntN(5))}}}
	}
	hand := append([]commonv1.Card(nil), v.GetYourHand()...)
	for _, c := range v.GetSeats()[seat].GetColumnsFaceUp() {
		if c != commonv1.Card_CARD_UNSPECIFIED {
			hand = append(hand, c)
		}
	}
	pc := &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_1}
	if len(hand) > 0 {
		pc.Card = hand[rng.IntN(len(hand))]
	}
	if pc.Card == commonv1.Card_CARD_JOKER_1 || pc.Card == commonv1.Card_CARD_JOKER_2 {
		suit := commonv1.Suit(1 + rng.IntN(4))
		switch {
		case japanese && len(v.GetTrick()) > 0:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}
		case japanese:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: suit}
		case len(v.GetTrick()) > 0:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction(1 + rng.IntN(2))}
		default:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction(3 + rng.IntN(2)), Suit: suit}
		}
	}
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: pc}}
}

// TestEventJSON_RealGamesEqualProtoJSON encodes every event of many random
// classic and Japanese games both ways. Real events have ASCII ids and known
// enums, so the fast path must take every event of a fast kind; and every
// fast kind, the timer field, an optional column and a joker declaration
// must have come up, or the games did not test what they should.
func TestEventJSON_RealGamesEqualProtoJSON(t *testing.T) {
	games := 40
	if testing.Short() {
		games = 8
	}
	fastHits := map[string]int{}
	fallbacks := map[string]int{}
	var timers, columns, columnZero, declarations, events int
	for g := range games {
		game(t, uint64(g), func(ev *tablev1.Event) {
			events++
			kind := kindOf(ev)
			if checkEvent(t, "game "+strconv.Itoa(g)+" event "+strconv.FormatUint(ev.GetSeq(), 10)+" ("+kind+")", ev) {
				fastHits[kind]++
				if ev.GetTimer() != nil {
					timers++
				}
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
				return
			}
			fallbacks[kind]++
			if fastKinds[kind] {
				t.Fatalf("game %d: a real %s event fell back to protojson: %v", g, kind, ev)
			}
		})
		if t.Failed() {
			t.FailNow()
		}
	}
	dealsCommitted := fastHits["hand_committed"] > 0
	for kind := range fastKinds {
		if fastHits[kind] == 0 && madeByRandomGames(kind, dealsCommitted) {
			t.Errorf("no %s event took the fast path", kind)
		}
	}
	if timers == 0 || columns == 0 || columnZero == 0 || declarations == 0 {
		t.Errorf("fast path never saw: timer %d, column %d, column 0 %d, declaration %d", timers, columns, columnZero, declarations)
	}
	t.Logf("%d events of %d games; fast: %v; protojson: %v", events, games, fastHits, fallbacks)
}

// TestEventJSON_Rules pins each of protojson's rules the encoder follows, and
// the cases it leaves to protojson, with the exact compact body where the
// fast path writes one.
func TestEventJSON_Rules(t *testing.T) {
	ts := func(secs int64, nanos int32) *timestamppb.Timestamp {
		return &timestamppb.Timestamp{Seconds: secs, Nanos: nanos}
	}
	bid := func(ev *tablev1.Event) *tablev1.Event {
		ev.Event = &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 1}}
		return ev
	}
	at := func(tsv *timestamppb.Timestamp) *tablev1.Event { return bid(&tablev1.Event{OccurredAt: tsv}) }
	const t0 = 1740830400 // 2025-03-01T12:00:00Z
	for _, tc := range []struct {
		name string
		ev   *tablev1.Event
		fast bool   // the fast path writes it
		want string // the exact fast body, when fast
		err  bool   // protojson (and so Event) fails
	}{
		{name: "zero fields omitted", ev: &tablev1.Event{Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{}}},
			fast: true, want: `{"bid_made":{}}`},
		{name: "zero seat, tricks and by_server omitted", ev: &tablev1.Event{Seq: 1, Event: &tablev1.Event_BidMade{
			BidMade: &tablev1.BidMade{Seat: 0, Tricks: 0, ByServer: false}}},
			fast: true, want: `{"seq":"1","bid_made":{}}`},
		{name: "every scalar set", ev: &tablev1.Event{Seq: 7, TableId: "t1", GameId: "t1.00ab", CausedBy: "p1/k2",
			Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 3, Tricks: 9, ByServer: true}}},
			fast: true, want: `{"seq":"7","table_id":"t1","game_id":"t1.00ab","caused_by":"p1/k2","bid_made":{"seat":3,"tricks":9,"by_server":true}}`},
		{name: "optional column 0 written", ev: &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{
			Card: commonv1.Card_CARD_ACE_OF_CLUBS, Column: proto.Uint32(0)}}},
			fast: true, want: `{"card_played":{"card":"CARD_ACE_OF_CLUBS","column":0}}`},
		{name: "optional column unset omitted", ev: &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{
			Seat: 1, Card: commonv1.Card_CARD_JOKER_1, ByServer: true}}},
			fast: true, want: `{"card_played":{"seat":1,"card":"CARD_JOKER_1","by_server":true}}`},
		{name: "empty sub-messages written as {}", ev: &tablev1.Event{Visibility: &tablev1.Visibility{},
			OccurredAt: &timestamppb.Timestamp{}, Timer: &tablev1.TimerStarted{},
			Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Declaration: &tablev1.JokerDeclaration{}}}},
			fast: true, want: `{"occurred_at":"1970-01-01T00:00:00Z","visibility":{},"card_played":{"declaration":{}},"timer":{}}`},
		{name: "oneof member in its place, timer last", ev: &tablev1.Event{Seq: 2, CausedBy: "c",
			Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: 2},
			Timer:      &tablev1.TimerStarted{Seat: 3, Phase: tablev1.Phase_PHASE_PLAY, Deadline: ts(t0, 5e8)},
			Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Seat: 2, Card: commonv1.Card_CARD_JOKER_2,
				Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: commonv1.Suit_SUIT_HEARTS},
				Column:      proto.Uint32(4)}}},
			fast: true, want: `{"seq":"2","visibility":{"audience":"AUDIENCE_SEAT","seat":2},"caused_by":"c",` +
				`"card_played":{"seat":2,"card":"CARD_JOKER_2","declaration":{"action":"JOKER_ACTION_HIGHEST","suit":"SUIT_HEARTS"},"column":4},` +
				`"timer":{"seat":3,"phase":"PHASE_PLAY","deadline":"2025-03-01T12:00:00.500Z"}}`},
		{name: "repeated fields, zero elements kept", ev: &tablev1.Event{Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{
			Seat: 1, Cards: []commonv1.Card{commonv1.Card_CARD_UNSPECIFIED, commonv1.Card_CARD_SIX_OF_HEARTS}}}},
			fast: true, want: `{"dealt":{"seat":1,"cards":["CARD_UNSPECIFIED","CARD_SIX_OF_HEARTS"]}}`},
		{name: "empty repeated omitted", ev: &tablev1.Event{Event: &tablev1.Event_TrickWon{TrickWon: &tablev1.TrickWon{
			TricksTaken: []uint32{}}}}, fast: true, want: `{"trick_won":{}}`},
		{name: "repeated uint32", ev: &tablev1.Event{Event: &tablev1.Event_TrickWon{TrickWon: &tablev1.TrickWon{
			TrickIndex: 4, Seat: 1, TricksTaken: []uint32{0, 5, 0}}}},
			fast: true, want: `{"trick_won":{"trick_index":4,"seat":1,"tricks_taken":[0,5,0]}}`},
		{name: "64-bit integers quoted", ev: &tablev1.Event{Seq: math.MaxUint64, Event: &tablev1.Event_HandEnded{HandEnded: &tablev1.HandEnded{
			HandIndex: 3, Results: []*tablev1.SeatHandResult{{Seat: 0, Bid: 2, Tricks: 0, Penalty: -200}, {}, {Seat: 2, Points: math.MaxInt64}, {Points: math.MinInt64}}}}},
			fast: true, want: `{"seq":"18446744073709551615","hand_ended":{"hand_index":3,"results":[{"bid":2,"penalty":"-200"},{},` +
				`{"seat":2,"points":"9223372036854775807"},{"points":"-9223372036854775808"}]}}`},
		{name: "pulka results", ev: &tablev1.Event{Event: &tablev1.Event_PulkaEnded{PulkaEnded: &tablev1.PulkaEnded{
			PulkaIndex: 1, Results: []*tablev1.SeatPulkaResult{{Seat: 1, Premia: 450, Moshla: -300, Total: 1250}}}}},
			fast: true, want: `{"pulka_ended":{"pulka_index":1,"results":[{"seat":1,"premia":"450","moshla":"-300","total":"1250"}]}}`},
		{name: "presence", ev: &tablev1.Event{Event: &tablev1.Event_PlayerAway{PlayerAway: &tablev1.PlayerAway{
			Seat: 1, PlayerId: "p1", GraceDeadline: ts(t0, 0)}}},
			fast: true, want: `{"player_away":{"seat":1,"player_id":"p1","grace_deadline":"2025-03-01T12:00:00Z"}}`},
		{name: "hand committed", ev: &tablev1.Event{Seq: 4, Event: &tablev1.Event_HandCommitted{HandCommitted: &tablev1.HandCommitted{
			HandIndex: 2, Commitment: []byte{0xfb, 0xff, 0x00, 0x3e}, SeedDeadline: ts(t0, 0), AwaitedSeats: []uint32{0, 2}}}},
			fast: true, want: `{"seq":"4","hand_committed":{"hand_index":2,"commitment":"+/8APg==","seed_deadline":"2025-03-01T12:00:00Z","awaited_seats":[0,2]}}`},
		{name: "hand committed, hand 0, nobody awaited", ev: &tablev1.Event{Event: &tablev1.Event_HandCommitted{HandCommitted: &tablev1.HandCommitted{
			Commitment: make([]byte, 32)}}},
			fast: true, want: `{"hand_committed":{"commitment":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}`},
		{name: "client seed accepted", ev: &tablev1.Event{Event: &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: &tablev1.ClientSeedAccepted{
			HandIndex: 1, Seat: 3}}},
			fast: true, want: `{"client_seed_accepted":{"hand_index":1,"seat":3}}`},
		{name: "hand revealed, empty seeds kept", ev: &tablev1.Event{Event: &tablev1.Event_HandRevealed{HandRevealed: &tablev1.HandRevealed{
			HandIndex: 5, ServerSeed: []byte("abc"), ClientSeeds: [][]byte{{1}, {}, nil, {1, 2}}, Commitment: []byte("ab")}}},
			fast: true, want: `{"hand_revealed":{"hand_index":5,"server_seed":"YWJj","client_seeds":["AQ==","","","AQI="],"commitment":"YWI="}}`},
		{name: "hand revealed, empty bytes omitted", ev: &tablev1.Event{Event: &tablev1.Event_HandRevealed{HandRevealed: &tablev1.HandRevealed{
			ServerSeed: []byte{}, ClientSeeds: [][]byte{}}}},
			fast: true, want: `{"hand_revealed":{}}`},
		{name: "invalid seed deadline", ev: &tablev1.Event{Event: &tablev1.Event_HandCommitted{HandCommitted: &tablev1.HandCommitted{
			SeedDeadline: ts(t0, -1)}}}, err: true},
		{name: "bot reason", ev: &tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{
			Seat: 2, Reason: tablev1.BotReason_BOT_REASON_GRACE_EXPIRED}}},
			fast: true, want: `{"seat_taken_by_bot":{"seat":2,"reason":"BOT_REASON_GRACE_EXPIRED"}}`},

		// Enums protojson writes as numbers: left to it.
		{name: "unknown card", ev: &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Card: 99}}}},
		{name: "negative card", ev: &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Card: -1}}}},
		{name: "unknown card in a list", ev: &tablev1.Event{Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{
			Cards: []commonv1.Card{commonv1.Card_CARD_JOKER_1, 37}}}}},
		{name: "unknown audience", ev: bid(&tablev1.Event{Visibility: &tablev1.Visibility{Audience: 4}})},
		{name: "unknown timer phase", ev: bid(&tablev1.Event{Timer: &tablev1.TimerStarted{Phase: 6}})},
		{name: "unknown joker action", ev: &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{
			Declaration: &tablev1.JokerDeclaration{Action: 5}}}}},
		{name: "unknown suit", ev: &tablev1.Event{Event: &tablev1.Event_TrumpChosen{TrumpChosen: &tablev1.TrumpChosen{Trump: 6}}}},
		{name: "unknown bot reason", ev: &tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{Reason: 4}}}},

		// Strings are written byte for byte as protojson writes them
		// (TestAppendProtoString_ByteForByteProtoJSON has the whole table).
		{name: "non-ASCII string", ev: bid(&tablev1.Event{CausedBy: "ნიკა/1"}),
			fast: true, want: `{"caused_by":"ნიკა/1","bid_made":{"seat":1}}`},
		{name: "quote", ev: bid(&tablev1.Event{TableId: `t"1`}),
			fast: true, want: `{"table_id":"t\"1","bid_made":{"seat":1}}`},
		{name: "backslash", ev: bid(&tablev1.Event{GameId: `g\1`}),
			fast: true, want: `{"game_id":"g\\1","bid_made":{"seat":1}}`},
		{name: "control character", ev: &tablev1.Event{Event: &tablev1.Event_PlayerBack{PlayerBack: &tablev1.PlayerBack{PlayerId: "p\n1\x01"}}},
			fast: true, want: `{"player_back":{"player_id":"p\n1\u0001"}}`},
		{name: "U+2028", ev: bid(&tablev1.Event{Visibility: &tablev1.Visibility{PlayerId: "p\u2028"}}),
			fast: true, want: "{\"visibility\":{\"player_id\":\"p\u2028\"},\"bid_made\":{\"seat\":1}}"},
		{name: "invalid UTF-8 fails as before", ev: &tablev1.Event{Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{PlayerId: "p\xff"}}}, err: true},
		{name: "invalid UTF-8 in a dropped field is fine", ev: bid(&tablev1.Event{CommandEntryId: "\xff"}), fast: true,
			want: `{"bid_made":{"seat":1}}`},

		// Timestamps: 0, 3, 6 or 9 digits, exactly as protojson trims them.
		{name: "timestamp 0 digits", ev: at(ts(t0, 0)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00Z","bid_made":{"seat":1}}`},
		{name: "timestamp 3 digits", ev: at(ts(t0, 120_000_000)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00.120Z","bid_made":{"seat":1}}`},
		{name: "timestamp 3 digits, leading zeros", ev: at(ts(t0, 1_000_000)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00.001Z","bid_made":{"seat":1}}`},
		{name: "timestamp 6 digits", ev: at(ts(t0, 123_450_000)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00.123450Z","bid_made":{"seat":1}}`},
		{name: "timestamp 6 digits, leading zeros", ev: at(ts(t0, 1_000)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00.000001Z","bid_made":{"seat":1}}`},
		{name: "timestamp 9 digits", ev: at(ts(t0, 123_456_789)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00.123456789Z","bid_made":{"seat":1}}`},
		{name: "timestamp 9 digits, trailing zero", ev: at(ts(t0, 100)), fast: true, want: `{"occurred_at":"2025-03-01T12:00:00.000000100Z","bid_made":{"seat":1}}`},
		{name: "timestamp before 1970", ev: at(ts(-1, 999_999_999)), fast: true, want: `{"occurred_at":"1969-12-31T23:59:59.999999999Z","bid_made":{"seat":1}}`},
		{name: "timestamp earliest", ev: at(ts(minTimestampSeconds, 0)), fast: true, want: `{"occurred_at":"0001-01-01T00:00:00Z","bid_made":{"seat":1}}`},
		{name: "timestamp latest", ev: at(ts(maxTimestampSeconds, 999_999_999)), fast: true, want: `{"occurred_at":"9999-12-31T23:59:59.999999999Z","bid_made":{"seat":1}}`},

		// Timestamps protojson refuses: Event fails as before, and the fast
		// path writes nothing.
		{name: "timestamp seconds too small", ev: at(ts(minTimestampSeconds-1, 0)), err: true},
		{name: "timestamp seconds too large", ev: at(ts(maxTimestampSeconds+1, 0)), err: true},
		{name: "timestamp nanos negative", ev: at(ts(t0, -1)), err: true},
		{name: "timestamp nanos a whole second", ev: at(ts(t0, 1_000_000_000)), err: true},
		{name: "invalid timer deadline", ev: bid(&tablev1.Event{Timer: &tablev1.TimerStarted{Deadline: ts(math.MaxInt64, 0)}}), err: true},
		{name: "invalid grace deadline", ev: &tablev1.Event{Event: &tablev1.Event_PlayerAway{PlayerAway: &tablev1.PlayerAway{
			GraceDeadline: ts(0, math.MinInt32)}}}, err: true},

		// Between services only: never written.
		{name: "epoch, trace and command_entry_id never written", ev: &tablev1.Event{Seq: 3, Epoch: 12, CommandEntryId: "1700000000000-0",
			Trace: &commonv1.TraceContext{Traceparent: "00-abc-def-01", Tracestate: "x=1"},
			Event: &tablev1.Event_TrumpTurned{TrumpTurned: &tablev1.TrumpTurned{Card: commonv1.Card_CARD_JOKER_2, Trump: commonv1.Suit_SUIT_NONE}}},
			fast: true, want: `{"seq":"3","trump_turned":{"card":"CARD_JOKER_2","trump":"SUIT_NONE"}}`},

		// Shapes left to protojson.
		{name: "no member", ev: &tablev1.Event{Seq: 1, TableId: "t1"}},
		{name: "member holding nil", ev: &tablev1.Event{Event: &tablev1.Event_HandStarted{}}},
		{name: "nil result", ev: &tablev1.Event{Event: &tablev1.Event_HandEnded{HandEnded: &tablev1.HandEnded{
			Results: []*tablev1.SeatHandResult{{Seat: 1}, nil}}}}},
		{name: "nil pulka result", ev: &tablev1.Event{Event: &tablev1.Event_PulkaEnded{PulkaEnded: &tablev1.PulkaEnded{
			Results: []*tablev1.SeatPulkaResult{nil}}}}},
		{name: "a kind the fast path does not cover", ev: &tablev1.Event{Seq: 1, Event: &tablev1.Event_MoveRejected{
			MoveRejected: &tablev1.MoveRejected{Reason: tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN, Message: "wait"}}}},
		{name: "nil event", ev: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ev == nil {
				if _, ok := appendEventJSON(nil, nil); ok {
					t.Fatal("fast path took a nil event")
				}
				if _, err := Event("t1", "1-0", nil); err != nil {
					t.Fatalf("Event(nil): %v", err)
				}
				return
			}
			fast := checkEvent(t, tc.name, tc.ev)
			if fast != tc.fast {
				t.Errorf("fast path took it: %v, want %v", fast, tc.fast)
			}
			if _, err := Event("t1", "1-0", tc.ev); (err != nil) != tc.err {
				t.Errorf("Event error %v, want error: %v", err, tc.err)
			}
			if tc.fast {
				if got, _ := appendEventJSON(nil, tc.ev); string(got) != tc.want {
					t.Errorf("fast body\n got %s\nwant %s", got, tc.want)
				}
			}
			if got, ok := appendEventJSON(nil, tc.ev); ok && (strings.Contains(string(got), `"epoch"`) ||
				strings.Contains(string(got), `"trace"`) || strings.Contains(string(got), `"command_entry_id"`)) {
				t.Errorf("fast body has a field Event leaves out: %s", got)
			}
		})
	}
}

// populate sets every field of m to a non-default value (lists get two
// elements, messages are filled recursively), except the members of m's
// oneofs: whatever a covered message gains, the fast path must write it.
func populate(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic():
			continue
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range 2 {
				if fd.Message() != nil {
					e := l.NewElement()
					populate(e.Message())
					l.Append(e)
				} else {
					l.Append(scalar(fd))
				}
			}
		case fd.Message() != nil:
			populate(m.Mutable(fd).Message())
		default:
			m.Set(fd, scalar(fd))
		}
	}
}

// scalar is a valid non-zero value of fd's kind: an enum's last value, 7,
// true or "x7" (7 seconds and 7 ns make a valid Timestamp).
func scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		vs := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vs.Get(vs.Len() - 1).Number())
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x7")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("x7"))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(7)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(7)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(7)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(7)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(7)
	default:
		return protoreflect.ValueOfFloat64(7)
	}
}

// TestEventJSON_CoversExactlyTheFastKinds fills every field of the envelope
// and of each oneof member and checks that the fast path takes exactly the
// fastKinds and writes all of their fields, so that a field added to the
// proto but not to eventjson.go fails here.
func TestEventJSON_CoversExactlyTheFastKinds(t *testing.T) {
	members := (&tablev1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("event").Fields()
	seen := 0
	for i := range members.Len() {
		fd := members.Get(i)
		ev := &tablev1.Event{}
		m := ev.ProtoReflect()
		populate(m)
		member := m.NewField(fd)
		populate(member.Message())
		m.Set(fd, member)
		kind := string(fd.Name())
		if fast := checkEvent(t, kind, ev); fast != fastKinds[kind] {
			t.Errorf("%s: fast path took it: %v, want %v", kind, fast, fastKinds[kind])
		}
		if fastKinds[kind] {
			seen++
		}
	}
	if seen != len(fastKinds) {
		t.Errorf("%d of the %d fast kinds are oneof members", seen, len(fastKinds))
	}
}

// FuzzEventJSON decodes the input as an Event and checks the fast encoder
// against protojson (checkEvent): equal when protojson succeeds, failing
// when protojson fails.
func FuzzEventJSON(f *testing.F) {
	seen := map[string]int{}
	for g := range uint64(2) {
		game(f, 100+g, func(ev *tablev1.Event) {
			kind := kindOf(ev)
			if seen[kind] >= 3 {
				return
			}
			seen[kind]++
			if b, err := proto.Marshal(ev); err == nil {
				f.Add(b)
			}
		})
	}
	for _, ev := range []*tablev1.Event{
		{Seq: 1, Epoch: 2, OccurredAt: &timestamppb.Timestamp{Seconds: maxTimestampSeconds + 1},
			Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Column: proto.Uint32(0), Card: 40}}},
		{Timer: &tablev1.TimerStarted{Deadline: &timestamppb.Timestamp{Nanos: -1}},
			Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Cards: []commonv1.Card{0, 1, 36}}}},
		{Seq: 9, Event: &tablev1.Event_HandCommitted{HandCommitted: &tablev1.HandCommitted{HandIndex: 3,
			Commitment: []byte{0xfb, 0xef, 0xbe}, SeedDeadline: &timestamppb.Timestamp{Seconds: 1}, AwaitedSeats: []uint32{1, 3}}}},
		{Event: &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: &tablev1.ClientSeedAccepted{HandIndex: 3, Seat: 1}}},
		{Event: &tablev1.Event_HandRevealed{HandRevealed: &tablev1.HandRevealed{HandIndex: 3, ServerSeed: make([]byte, 32),
			ClientSeeds: [][]byte{{0xff}, {}, make([]byte, 32)}, Commitment: []byte{1}}}},
	} {
		if b, err := proto.Marshal(ev); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev := &tablev1.Event{}
		if err := proto.Unmarshal(data, ev); err != nil {
			t.Skip()
		}
		checkEvent(t, "fuzzed event", ev)
	})
}
