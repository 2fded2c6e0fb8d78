package record_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/tools/record"
	"google.golang.org/protobuf/proto"
)

// playedTable is a game played through pkg/table: the public events, as
// any watcher receives them, and its final placings.
type playedTable struct {
	public   []*tablev1.Event
	game     table.Game
	placings []*tablev1.Placing
}

// playTable plays a whole game at a table: bots (classic) and humans who
// never move themselves (the move timer plays for them, a server move),
// who send their client seed or not (the seed deadline deals without it)
// and who, in a Japanese match, may resign.
func playTable(tb testing.TB, seed uint64, japaneseGame bool) playedTable {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var s table.Settings
	var seats []table.SeatInfo
	if japaneseGame {
		s = table.JapaneseSettings([]int{11, 15, 21, 31}[rng.IntN(4)])
		seats = []table.SeatInfo{{PlayerID: "p0", Name: "Ana"}, {PlayerID: "p1", Name: "Levan"}}
	} else {
		v := classic.Standard
		if rng.IntN(2) == 0 {
			v = classic.Nines
		}
		s = table.ClassicSettings(scoring.Settings{Variant: v, Khishti: scoring.KhishtiPerCard, Premia: true, Moshla: rng.IntN(2) == 0, RestDocked: true})
		for i := range classic.Seats {
			if rng.IntN(2) == 0 {
				seats = append(seats, table.SeatInfo{Name: "bot", Bot: true})
			} else {
				seats = append(seats, table.SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "P" + strconv.Itoa(i)})
			}
		}
	}
	s.BotDelay = 0
	entropy := func() table.Entropy {
		var e table.Entropy
		for i := range e {
			e[i] = byte(rng.Uint32())
		}
		return e
	}
	now := time.Unix(1_800_000_000, 0)
	tb0, evs, err := table.New("t"+strconv.FormatUint(seed, 36), fmt.Sprintf("%032x", seed), s, seats, now, entropy())
	if err != nil {
		tb.Fatal(err)
	}
	p := playedTable{game: s.Game}
	keep := func(evs []*tablev1.Event) {
		for _, e := range evs {
			if e.GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC {
				p.public = append(p.public, e)
			}
			if g := e.GetGameEnded(); g != nil {
				p.placings = g.GetPlacings()
			}
		}
	}
	keep(evs)
	ms := now.UnixMilli()
	apply := func(in table.Input) {
		in.Entropy = entropy()
		evs, err := tb0.Apply(in)
		var rej *table.RejectError
		if err != nil && !errors.As(err, &rej) {
			tb.Fatalf("game %d: %v", seed, err)
		}
		keep(evs)
	}
	command := func(player string, c *tablev1.Command) {
		ms++
		c.CommandId, c.PlayerId, c.TableId = "c"+strconv.FormatInt(ms, 10), player, tb0.ID()
		apply(table.CommandInput(c, strconv.FormatInt(ms, 10)+"-0", now))
	}
	for step := 0; step < 5000 && !tb0.Over(); step++ {
		if hs, ok := tb0.CurrentSeeds(); ok && !hs.Dealt && rng.IntN(3) > 0 {
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
		if japaneseGame && rng.IntN(400) == 0 {
			command(seats[rng.IntN(2)].PlayerID, &tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}})
			continue
		}
		at, ok := tb0.NextDeadline()
		if !ok {
			tb.Fatalf("game %d: not over and nothing to wait for", seed)
		}
		if at.After(now) {
			now = at
		}
		apply(table.Tick(now))
	}
	if !tb0.Over() {
		tb.Fatalf("game %d did not end", seed)
	}
	return p
}

// TestFromEvents_ATablesPublicEventsReplayAndVerify: for many games played
// through pkg/table (bots, server moves, client seeds sent and missing,
// resignations), the record FromEvents builds from the public events alone
// verifies hand by hand (every commitment, every re-deal), replays to the
// end, and its final scores are the table's; a tampered event (a server
// seed, a client seed, a card) fails.
func TestFromEvents_ATablesPublicEventsReplayAndVerify(t *testing.T) {
	games := 300
	if testing.Short() {
		games = 60
	}
	hands := 0
	for g := range games {
		p := playTable(t, uint64(1000+g), g%3 == 2)
		rec, err := record.FromEvents(p.public)
		if err != nil {
			t.Fatalf("game %d: %v", g, err)
		}
		reps, err := record.Verify(rec)
		if err != nil || len(reps) == 0 || len(reps) != len(rec.Hands) {
			t.Fatalf("game %d: verify: %d hands of %d: %v", g, len(reps), len(rec.Hands), err)
		}
		hands += len(reps)
		res, err := record.Replay(rec)
		if err != nil || !res.Over {
			t.Fatalf("game %d: replay (over %v): %v", g, res != nil && res.Over, err)
		}
		for _, pl := range p.placings {
			var got int64
			if p.game == table.Classic {
				got = int64(res.Sheet.Total[pl.GetSeat()])
			} else {
				got = int64(res.Scores[pl.GetSeat()])
			}
			if got != pl.GetScore() {
				t.Fatalf("game %d: seat %d: the record replays to %d, the table ended on %d", g, pl.GetSeat(), got, pl.GetScore())
			}
		}
		if g < 8 {
			checkTampering(t, g, p.public)
		}
	}
	t.Logf("%d games, %d hands verified from their public events", games, hands)
}

// checkTampering changes one event of a copy of the game's events at a
// time and checks the record no longer verifies.
func checkTampering(t *testing.T, g int, public []*tablev1.Event) {
	t.Helper()
	tamper := map[string]func(e *tablev1.Event) bool{
		"a revealed server seed": func(e *tablev1.Event) bool {
			if r := e.GetHandRevealed(); r != nil {
				r.ServerSeed[0] ^= 1
				return true
			}
			return false
		},
		"a revealed client seed": func(e *tablev1.Event) bool {
			if r := e.GetHandRevealed(); r != nil {
				r.ClientSeeds[len(r.ClientSeeds)-1][5] ^= 0x80
				return true
			}
			return false
		},
		"a card played": func(e *tablev1.Event) bool {
			if c := e.GetCardPlayed(); c != nil {
				c.Card = c.GetCard()%36 + 1 // the next card (the wire enum is 1…36)
				return true
			}
			return false
		},
	}
	for what, f := range tamper {
		evs := make([]*tablev1.Event, len(public))
		done := false
		for i, e := range public {
			evs[i] = e
			if !done && i > len(public)/3 {
				c := proto.Clone(e).(*tablev1.Event)
				if f(c) {
					evs[i], done = c, true
				}
			}
		}
		if !done {
			t.Fatalf("game %d: nothing to tamper with for %s", g, what)
		}
		rec, err := record.FromEvents(evs)
		if err != nil {
			continue // refused already (a reveal not as committed)
		}
		if _, err := record.Verify(rec); err == nil {
			t.Fatalf("game %d: the record verifies with %s changed", g, what)
		}
	}
}
