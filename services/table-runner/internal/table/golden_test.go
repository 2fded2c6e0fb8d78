package table

// The games of pkg/golden: played here, where the table is, and written
// there for the tests outside the runner that read a table's events (the
// WebSocket frames, the Go client's model, game records) and for the
// scoring service's golden sheets, which are made from the scoring inputs
// written here. TestGolden checks the files on every run; -update rewrites
// them (see pkg/golden).

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/golden"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// goldenRoot is pkg/golden's directory from this package's.
const goldenRoot = "../../../../pkg/golden"

// How many games each set has: what the tests that read them played
// themselves when they could (pkg/wire: 40 random games for the events and
// 16 for the sheets; tools/record: its short run's 60 games).
const (
	goldenWireGames   = 40
	goldenNamedGames  = 16
	goldenRecordGames = 60
	goldenModelSeeds  = 6
)

// TestGolden plays every game of pkg/golden and checks its files: the same
// events and scoring inputs, and no file of a game not played here.
func TestGolden(t *testing.T) {
	if testing.Short() && !*updateFixtures {
		t.Skip("plays some 170 whole games")
	}
	check := func(set string, kind golden.Kind, names []string, game func(i int) []*tablev1.Event) {
		t.Helper()
		for i, name := range names {
			diff, err := golden.Check(goldenRoot, *updateFixtures, set, name, kind, game(i), func() *tablev1.Event { return &tablev1.Event{} })
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Errorf("golden %s/%s (%s): %s\nIf the table's events are meant to change, rewrite the games:\n"+
					"  go test ./services/table-runner/internal/table -run TestGolden -update\n"+
					"  go test ./services/scoring/internal/sheets -run TestGolden -update", set, name, kind, diff)
			}
		}
		if !*updateFixtures {
			if files := golden.Games(set, kind); !slices.Equal(files, names) {
				t.Errorf("golden %s (%s) has files of %v, the games played here are %v: remove the others", set, kind, files, names)
			}
		}
	}
	numbered := func(n, from int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = golden.GameName(uint64(from + i))
		}
		return out
	}

	check(golden.SetWire, golden.KindEvents, numbered(goldenWireGames, 0), func(i int) []*tablev1.Event {
		var evs []*tablev1.Event
		wireGame(t, uint64(i), nil, func(_ *Table, ev *tablev1.Event) { evs = append(evs, ev) })
		return evs
	})

	for i, name := range numbered(goldenNamedGames, 0) {
		var in []*scoringv1.ScoringInput
		wireGame(t, uint64(i), golden.DisplayNames(), func(tbl *Table, ev *tablev1.Event) {
			in = append(in, tbl.ScoringInputs([]*tablev1.Event{ev})...)
		})
		diff, err := golden.Check(goldenRoot, *updateFixtures, golden.SetWireNamed, name, golden.KindScoring, in,
			func() *scoringv1.ScoringInput { return &scoringv1.ScoringInput{} })
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Errorf("golden %s/%s (scoring inputs): %s; rewrite with -update if meant (then scoring's TestGolden -update)", golden.SetWireNamed, name, diff)
		}
	}
	if files := golden.Games(golden.SetWireNamed, golden.KindScoring); !*updateFixtures && !slices.Equal(files, numbered(goldenNamedGames, 0)) {
		t.Errorf("golden %s has the scoring inputs of %v, the games played here are %v", golden.SetWireNamed, files, numbered(goldenNamedGames, 0))
	}

	check(golden.SetRecord, golden.KindPublicEvents, numbered(goldenRecordGames, 1000), func(i int) []*tablev1.Event {
		return recordGame(t, uint64(1000+i), i%3 == 2)
	})

	model := map[string]func() []*tablev1.Event{}
	for seed := uint64(1); seed <= goldenModelSeeds; seed++ {
		for _, v := range []classic.Variant{classic.Standard, classic.Nines} {
			model[fmt.Sprintf("classic-%v-%d", v, seed)] = func() []*tablev1.Event {
				return modelGame(t, tablesettings.ClassicSettings(scoring.Settings{Variant: v, Khishti: scoring.Khishti200}), seed)
			}
		}
		model[fmt.Sprintf("japanese-%d", seed)] = func() []*tablev1.Event { return modelGame(t, tablesettings.JapaneseSettings(11), seed) }
	}
	names := slices.Sorted(maps.Keys(model)) // as golden.Games lists them
	check(golden.SetModel, golden.KindEvents, names, func(i int) []*tablev1.Event { return model[names[i]]() })
}

// wireGame plays one random game through the table's public API, the way a
// runner and its players would: seeded random settings and seats, players
// sending plausible (sometimes refused) moves, ticks at the deadlines (timer
// and bot moves), dropped and returning connections, leaves, resyncs. It
// calls visit with the table and every event, in order. When names is not
// empty, the seats' names are taken from it in turn (the game is otherwise
// the same: the random choices do not change).
func wireGame(tb testing.TB, seed uint64, names []string, visit func(*Table, *tablev1.Event)) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x776972650a))
	isJapanese := seed%2 == 1
	var s tablesettings.Settings
	var seats []SeatInfo
	if isJapanese {
		s = tablesettings.JapaneseSettings([]int{11, 15, 21, 31}[rng.IntN(4)])
		seats = make([]SeatInfo, 2)
	} else {
		sc := scoring.DefaultSettings()
		if rng.IntN(3) == 0 {
			sc.Variant = classic.Nines
		}
		s = tablesettings.ClassicSettings(sc)
		s.BotDelay = []time.Duration{0, 300 * time.Millisecond, tablesettings.DefaultBotDelay}[rng.IntN(3)]
		seats = make([]SeatInfo, 4)
	}
	s.MoveTimeout = time.Duration(1+rng.IntN(30)) * time.Second
	s.ReconnectGrace = time.Duration(1+rng.IntN(90)) * time.Second
	for i := range seats {
		seats[i] = SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "Player " + strconv.Itoa(i)}
		switch {
		case !isJapanese && rng.IntN(3) == 0:
			seats[i] = SeatInfo{Bot: true, Name: "Bot " + strconv.Itoa(i)}
		case rng.IntN(4) == 0:
			seats[i].Name = "ნიკა " + strconv.Itoa(i) // game_started then falls back
		}
		if len(names) > 0 {
			seats[i].Name = names[(int(seed)*len(seats)+i)%len(names)]
		}
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(365*24*3600)) * time.Second)
	tbl, evs, err := New("tbl"+strconv.FormatUint(seed, 10), "game"+strconv.FormatUint(seed, 10), s, seats, now,
		Entropy(fairdeal.LocalKey(seed, 0)))
	if err != nil {
		tb.Fatalf("game %d: %v", seed, err)
	}
	for _, ev := range evs {
		visit(tbl, ev)
	}
	entry, cmdNo := uint64(now.UnixMilli()), 0
	send := func(in Input) {
		in.Entropy = Entropy(fairdeal.LocalKey(seed, rng.Uint32())) // the runner's crypto/rand
		evs, _ := tbl.Apply(in)                                     // refused moves are part of the game
		for _, ev := range evs {
			visit(tbl, ev)
		}
	}
	command := func(player string, c *tablev1.Command) {
		cmdNo++
		entry++
		c.CommandId = wire.CommandID(player, "k"+strconv.Itoa(cmdNo))
		c.PlayerId, c.TableId = player, tbl.ID()
		send(CommandInput(c, strconv.FormatUint(entry, 10)+"-0", now))
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
				send(Tick(now))
				continue
			}
			command(p, randomWireMove(rng, tbl.View(turn), turn, isJapanese))
		case r < 85:
			if next, ok := tbl.NextDeadline(); ok && next.After(now) {
				now = next
			}
			send(Tick(now))
		case r < 90:
			if !isJapanese || rng.IntN(10) == 0 {
				send(Away(who, now))
			}
		case r < 96:
			send(Back(who, now))
		case r < 98:
			command(who, &tablev1.Command{Command: &tablev1.Command_Reconnect{Reconnect: &tablev1.ReconnectCommand{}}})
		case r < 99:
			if !isJapanese || rng.IntN(50) == 0 {
				command(who, &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}})
			}
		default:
			command(who, &tablev1.Command{Command: &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: uint32(rng.IntN(len(seats)))}}})
		}
	}
}

// randomWireMove is a plausible move for seat from what it sees: a bid, a
// trump, or a card from its hand (or, in Japanese, its face-up columns).
func randomWireMove(rng *rand.Rand, v *tablev1.TableView, seat int, isJapanese bool) *tablev1.Command {
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
		case isJapanese && len(v.GetTrick()) > 0:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}
		case isJapanese:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: suit}
		case len(v.GetTrick()) > 0:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction(1 + rng.IntN(2))}
		default:
			pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction(3 + rng.IntN(2)), Suit: suit}
		}
	}
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: pc}}
}

// recordGame plays a whole game at a table — bots (classic) and humans who
// never move themselves (the move timer plays for them, a server move),
// who send their client seed or not (the seed deadline deals without it)
// and who, in a Japanese match, may resign — and returns its public
// events, as any watcher receives them.
func recordGame(tb testing.TB, seed uint64, isJapanese bool) []*tablev1.Event {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var s tablesettings.Settings
	var seats []SeatInfo
	if isJapanese {
		s = tablesettings.JapaneseSettings([]int{11, 15, 21, 31}[rng.IntN(4)])
		seats = []SeatInfo{{PlayerID: "p0", Name: "Ana"}, {PlayerID: "p1", Name: "Levan"}}
	} else {
		v := classic.Standard
		if rng.IntN(2) == 0 {
			v = classic.Nines
		}
		s = tablesettings.ClassicSettings(scoring.Settings{Variant: v, Khishti: scoring.KhishtiPerCard, Premia: true, Moshla: rng.IntN(2) == 0, RestDocked: true})
		for i := range classic.Seats {
			if rng.IntN(2) == 0 {
				seats = append(seats, SeatInfo{Name: "bot", Bot: true})
			} else {
				seats = append(seats, SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "P" + strconv.Itoa(i)})
			}
		}
	}
	s.BotDelay = 0
	entropy := func() Entropy {
		var e Entropy
		for i := range e {
			e[i] = byte(rng.Uint32())
		}
		return e
	}
	now := time.Unix(1_800_000_000, 0)
	tbl, evs, err := New("t"+strconv.FormatUint(seed, 36), fmt.Sprintf("%032x", seed), s, seats, now, entropy())
	if err != nil {
		tb.Fatal(err)
	}
	var public []*tablev1.Event
	keep := func(evs []*tablev1.Event) {
		for _, e := range evs {
			if e.GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC {
				public = append(public, e)
			}
		}
	}
	keep(evs)
	ms := now.UnixMilli()
	apply := func(in Input) {
		in.Entropy = entropy()
		evs, err := tbl.Apply(in)
		var rej *RejectError
		if err != nil && !errors.As(err, &rej) {
			tb.Fatalf("game %d: %v", seed, err)
		}
		keep(evs)
	}
	command := func(player string, c *tablev1.Command) {
		ms++
		c.CommandId, c.PlayerId, c.TableId = "c"+strconv.FormatInt(ms, 10), player, tbl.ID()
		apply(CommandInput(c, strconv.FormatInt(ms, 10)+"-0", now))
	}
	for step := 0; step < 5000 && !tbl.Over(); step++ {
		if hs, ok := tbl.CurrentSeeds(); ok && !hs.Dealt && rng.IntN(3) > 0 {
			for _, si := range seats {
				if si.PlayerID != "" && rng.IntN(4) > 0 {
					var c fairdeal.ClientSeed
					for j := range c {
						c[j] = byte(rng.Uint32())
					}
					command(si.PlayerID, &tablev1.Command{Command: &tablev1.Command_ClientSeed{
						ClientSeed: &tablev1.ClientSeedCommand{HandIndex: hs.Hand.Index, Seed: c[:]}}})
				}
			}
		}
		if isJapanese && rng.IntN(400) == 0 {
			command(seats[rng.IntN(2)].PlayerID, &tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}})
			continue
		}
		at, ok := tbl.NextDeadline()
		if !ok {
			tb.Fatalf("game %d: not over and nothing to wait for", seed)
		}
		if at.After(now) {
			now = at
		}
		apply(Tick(now))
	}
	if !tbl.Over() {
		tb.Fatalf("game %d did not end", seed)
	}
	return public
}

// modelGame plays a whole game whose every seat is a player: at each turn
// the seat to move sends a legal move (the engine's baseline bot's for odd
// seeds, a random one for even seeds, which reaches jokers led and
// discarded), one second after the last; nobody sends a client seed, so
// each hand is dealt at its seed deadline. Every command is accepted.
// It returns every event, in order.
func modelGame(tb testing.TB, settings tablesettings.Settings, seed uint64) []*tablev1.Event {
	tb.Helper()
	n := classic.Seats
	if settings.Game == tablesettings.Japanese {
		n = japanese.Seats
	}
	seats := make([]SeatInfo, n)
	for s := range seats {
		seats[s] = SeatInfo{PlayerID: player(s), Name: player(s)}
	}
	now := time.Unix(1_800_000_000, 0)
	tbl, all, err := New("t1", "g1", settings, seats, now, Entropy(fairdeal.LocalKey(seed, 0)))
	if err != nil {
		tb.Fatal(err)
	}
	inputs := 0
	apply := func(in Input) {
		inputs++
		in.Entropy = Entropy(fairdeal.LocalKey(seed, uint32(inputs)))
		evs, err := tbl.Apply(in)
		if err != nil {
			tb.Fatalf("game %d: %v", seed, err)
		}
		all = append(all, evs...)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for step := 0; step < 5000 && !tbl.Over(); step++ {
		if tbl.eng.awaitingDeal() {
			next, ok := tbl.NextDeadline()
			if !ok {
				tb.Fatalf("game %d: a hand waits for its deal without a deadline", seed)
			}
			now = next
			apply(Tick(now))
			continue
		}
		seat := tbl.eng.toMove()
		var cmd *tablev1.Command
		switch e := tbl.eng.(type) {
		case *classicEngine:
			if seed%2 == 1 {
				m, ok := classic.Bot{}.Choose(&e.g, seat)
				if !ok {
					tb.Fatalf("game %d: no bot move", seed)
				}
				cmd = classicCmd(m)
			}
		case *japaneseEngine:
			if seed%2 == 1 {
				m, ok := japanese.Bot{}.Choose(&e.g, seat)
				if !ok {
					tb.Fatalf("game %d: no bot move", seed)
				}
				cmd = japaneseCmd(m)
			}
		}
		if cmd == nil {
			cs := legalCommands(tbl, seat)
			cmd = cs[rng.IntN(len(cs))]
		}
		cmd.CommandId, cmd.PlayerId, cmd.TableId = wire.CommandID(player(seat), "k"+strconv.Itoa(step)), player(seat), "t1"
		now = now.Add(time.Second)
		apply(CommandInput(cmd, strconv.Itoa(step+1)+"-0", now))
	}
	if !tbl.Over() {
		tb.Fatalf("game %d did not end", seed)
	}
	return all
}
