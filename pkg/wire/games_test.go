package wire

// Real games and score sheets, played through pkg/table and pkg/sheets as
// the runner and the scoring service play them, for the tests of the frames
// that carry them: every event and sheet of many games must come back from
// both encodings as the runner wrote it, minus what stays between services.

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/sheets"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// kindOf names ev's oneof member ("" when none is set).
func kindOf(ev *tablev1.Event) string {
	m := ev.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("event")); fd != nil {
		return string(fd.Name())
	}
	return ""
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

// scoredGame is what the scoring service stores of one game (sheets.Game),
// from the scoring inputs the runner derives from the table's events
// (table.ScoringInputs).
type scoredGame struct {
	tableID, gameID string
	start           *scoringv1.GameStarted
	hands           []*scoringv1.HandResult // in order: the inputs come in order here
	end             *scoringv1.GameEnded
}

// add takes one scoring input and reports whether it changes the sheet.
func (g *scoredGame) add(in *scoringv1.ScoringInput) bool {
	g.tableID, g.gameID = in.GetTableId(), in.GetGameId()
	switch x := in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		g.start = x.GameStarted
	case *scoringv1.ScoringInput_HandResult:
		g.hands = append(g.hands, x.HandResult)
	case *scoringv1.ScoringInput_GameEnded:
		g.end = x.GameEnded
	default:
		return false
	}
	return g.start != nil
}

// update is the sheet update the scoring service publishes for g: the sheet
// and version sheets.Build computes, and the trace the scorer adds.
func (g *scoredGame) update(tb testing.TB) *scoringv1.SheetUpdate {
	tb.Helper()
	game := sheets.Game{TableID: g.tableID, GameID: g.gameID, Start: g.start, End: g.end,
		Hands: make(map[uint32]*scoringv1.HandResult, len(g.hands))}
	for _, h := range g.hands {
		game.Hands[h.GetHandIndex()] = h
	}
	res, err := sheets.Build(game)
	if err != nil || res.Refused != nil || res.Waiting != 0 {
		tb.Fatalf("game %s: %v (refused %v, waiting %d)", g.gameID, err, res.Refused, res.Waiting)
	}
	return &scoringv1.SheetUpdate{Version: res.Version, Sheet: res.Sheet,
		Trace: &commonv1.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
}

// sheetNames are display names as people choose them: mostly not ASCII,
// some with characters JSON escapes or that look like markup.
var sheetNames = []string{
	"ნინო", "გიორგი ბერიძე", "Нина Петрова", "Şükrü Öztürk", "İlkay Ağaoğlu", "José 🃏",
	"👨‍👩‍👧 family", "日本語", "Player 1", `O'Brien "Ace"`, `back\slash`, "tab\tand\nnewline",
	"<b>&amp;</b>", "line\u2028sep", "del\x7f", "bell\x07", "\ufffdreplacement", "  ",
}

// gameSheets plays game seed (playGame, with sheetNames) and calls visit
// with every sheet update the scoring service publishes for it: one when
// the game starts, one per hand and one at the end. The scoring rules
// (khishti, premia, moshla) vary with the seed, as tables choose them.
func gameSheets(tb testing.TB, seed uint64, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7368656574))
	var g scoredGame
	playGame(tb, seed, sheetNames, func(tbl *table.Table, ev *tablev1.Event) {
		for _, in := range tbl.ScoringInputs([]*tablev1.Event{ev}) {
			if gs := in.GetGameStarted(); gs != nil && gs.GetSettings().GetGame() == lobbyv1.Game_GAME_CLASSIC {
				gs.Settings = proto.CloneOf(gs.GetSettings())
				gs.Settings.Khishti = lobbyv1.KhishtiPenalty(1 + rng.IntN(4))
				gs.Settings.Premia, gs.Settings.Moshla, gs.Settings.RestDocked = rng.IntN(4) != 0, rng.IntN(4) != 0, rng.IntN(2) == 0
			}
			if g.add(in) {
				visit(g.update(tb))
			}
		}
	})
}

// premiaSheets are the sheet updates of a classic game whose hands are
// random but where the seats in premia (a bit mask) always make their bid,
// so that premia, moshla and struck hands come up, which they almost never
// do in random play.
func premiaSheets(tb testing.TB, seed uint64, premia uint, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7072656d6961))
	rules := scoring.DefaultSettings()
	if seed%3 == 0 {
		rules.Variant = classic.Nines
	}
	rules.Khishti = scoring.Khishti(rng.IntN(4))
	rules.RestDocked = seed%2 == 0
	ts := tablesettings.ClassicSettings(rules).Proto()
	var players []*scoringv1.SheetPlayer
	for seat := range uint32(scoring.Seats) {
		players = append(players, &scoringv1.SheetPlayer{Seat: seat, PlayerId: "p" + strconv.Itoa(int(seat)),
			DisplayName: sheetNames[(int(seed)+int(seat))%len(sheetNames)]})
	}
	id := "tbl" + strconv.FormatUint(seed, 10)
	g := scoredGame{tableID: id, gameID: id + ".premia", start: &scoringv1.GameStarted{Settings: ts, Players: players}}
	visit(g.update(tb))
	for h := range rules.Variant.Hands() {
		n := rules.Variant.CardsInHand(h)
		hr := &scoringv1.HandResult{HandIndex: uint32(h), CardsPerSeat: uint32(n)}
		var tricks [scoring.Seats]int
		for range n {
			tricks[rng.IntN(scoring.Seats)]++
		}
		for seat := range scoring.Seats {
			bid := rng.IntN(n + 1)
			if premia&(1<<seat) != 0 {
				bid = tricks[seat]
			}
			hr.Seats = append(hr.Seats, &scoringv1.SeatTricks{Seat: uint32(seat), Bid: uint32(bid), Tricks: uint32(tricks[seat])})
		}
		g.hands = append(g.hands, hr)
		visit(g.update(tb))
	}
	g.end = &scoringv1.GameEnded{Completed: true, HandsPlayed: uint32(rules.Variant.Hands())}
	visit(g.update(tb))
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
	premiaSheets(tb, 1, 0b0010, func(u *scoringv1.SheetUpdate) {
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
			for enc, got := range roundTrip(t, name, NewFrame(Event("t1", "1-0", in))) {
				e := got.GetEvent()
				if e.GetTable() != "t1" || e.GetId() != "1-0" || !proto.Equal(e.GetEvent(), want) {
					t.Fatalf("%s: %s frame decodes to %v, want %v", name, Encoding(enc), e, want)
				}
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
		premiaSheets(t, uint64(g), uint(g%16), check)
	}
	if cov.bidZero == 0 || cov.bidUnset == 0 || cov.khishti == 0 || cov.struck == 0 || cov.premia == 0 ||
		cov.moshla == 0 || cov.finished == 0 || cov.onCourse == 0 || cov.final == 0 || cov.nonASCII == 0 || cov.escaped == 0 {
		t.Errorf("the sheets missed something: %+v", cov)
	}
}

// BenchmarkEvent is the fan-out's cost per event: one event frame (a card
// played carrying the next seat's timer, the commonest frame of a game)
// encoded once per encoding, the runner's fields cleared first.
func BenchmarkEvent(b *testing.B) {
	ev := benchEvent()
	benchFrame(b, func() *gatewayv1.ServerFrame { return Event("0123456789abcdef", "1740830400125-0", ev) })
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
