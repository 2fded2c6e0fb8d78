package table

import (
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// TestClassicBot_PlaysAtTheTablesLevel_TimeoutsAtTheStrongLevel: a bot seat
// moves as classic.BotFor(the table's level) would from the same state; a
// player whose time runs out gets the strong bot's move, whatever the
// table's level.
func TestClassicBot_PlaysAtTheTablesLevel_TimeoutsAtTheStrongLevel(t *testing.T) {
	def := botRules(scoring.DefaultSettings())
	for _, tc := range []struct {
		rule  string
		level classic.Level
		bot   bool
		want  classic.Player
	}{
		{"an easy table's bot is the baseline", classic.LevelEasy, true, classic.Bot{}},
		{"a normal table's bot is the normal strong bot", classic.LevelNormal, true, classic.BotForRules(classic.LevelNormal, def)},
		{"a strong table's bot is the strong bot", classic.LevelStrong, true, classic.BotForRules(classic.LevelStrong, def)},
		{"a timed-out player gets the strong bot at an easy table", classic.LevelEasy, false, classic.BotForRules(classic.LevelStrong, def)},
		{"a table from before levels keeps the baseline bot, so its log replays", 0, true, classic.Bot{}},
		{"a table from before levels keeps the baseline timer move, so its log replays", 0, false, classic.Bot{}},
	} {
		if got := classicBot(tc.level, tc.bot, scoring.DefaultSettings()); got != tc.want {
			t.Errorf("%s: %#v, want %#v", tc.rule, got, tc.want)
		}
	}
}

// TestBotRules_TellTheBotTheTablesSheet: the strong bot prices a khishti
// and the premia as the table scores them.
func TestBotRules_TellTheBotTheTablesSheet(t *testing.T) {
	s := scoring.DefaultSettings()
	s.Khishti, s.Premia, s.Moshla = scoring.KhishtiPerCard, false, false
	r := botRules(s)
	if r.Khishti[9] != 900 || r.Khishti[1] != 100 || !r.NoPremia || !r.NoMoshla {
		t.Fatalf("per-card khishti, no premia or moshla: %+v", r)
	}
	if d := botRules(scoring.DefaultSettings()); d.Khishti[5] != 200 || d.NoPremia || d.NoMoshla {
		t.Fatalf("default sheet: %+v", d)
	}
}

// TestClassicBot_TheTableMovesItsBotsAtItsLevel plays the start of a game
// with one player and three bots and checks every bot move against the
// level's bot, and every timed-out move of the player against the strong
// bot.
func TestClassicBot_TheTableMovesItsBotsAtItsLevel(t *testing.T) {
	for _, level := range []classic.Level{classic.LevelEasy, classic.LevelStrong} {
		seats := []SeatInfo{{PlayerID: "p0", Name: "Ana"}, {Bot: true, Name: "B1"}, {Bot: true, Name: "B2"}, {Bot: true, Name: "B3"}}
		s := classicSet(classic.Standard, time.Second)
		s.BotLevel = level
		h := newHarness(t, s, 11, seats)
		moves := 0
		for moves < 40 && !h.t.Over() {
			e := h.t.eng.(*classicEngine)
			seat := e.g.ToMove()
			if seat < 0 {
				t.Fatalf("level %v: nobody to move", level)
			}
			p := classic.BotForRules(level, botRules(s.Classic))
			if seat == 0 {
				p = classic.BotForRules(classic.LevelStrong, botRules(s.Classic)) // Ana never moves: her timer runs out
			}
			want, _ := p.Choose(&e.g, seat)
			g := e.g
			if _, err := g.Apply(want, nil); err != nil {
				t.Fatal(err)
			}
			d, ok := h.t.NextDeadline()
			if !ok {
				t.Fatal("no deadline")
			}
			h.tick(d)
			if got := e.g; g.HandIndex() == got.HandIndex() && g.Phase() != classic.PhaseDeal && got != g {
				t.Fatalf("level %v move %d: seat %d did not play %v", level, moves, seat, want)
			}
			moves++
		}
	}
}

// TestJapaneseTimer_PlaysTheStrongMove: a Japanese player whose time runs
// out gets the strong bot's move; at a table from before levels, the
// baseline's.
func TestJapaneseTimer_PlaysTheStrongMove(t *testing.T) {
	for _, level := range []classic.Level{0, classic.LevelStrong} {
		s := japaneseSet(21)
		s.BotLevel = level
		h := newHarness(t, s, 5, humans(2))
		differs := false
		for moves := 0; moves < 60 && !h.t.Over(); moves++ {
			e := h.t.eng.(*japaneseEngine)
			seat := e.g.ToMove()
			var p japanese.Player = japanese.StrongBot{}
			if level == 0 {
				p = japanese.Bot{}
			}
			want, _ := p.Choose(&e.g, seat)
			base, _ := japanese.Bot{}.Choose(&e.g, seat)
			differs = differs || want != base
			g := e.g
			if _, err := g.Apply(want, nil); err != nil {
				t.Fatal(err)
			}
			d, ok := h.t.NextDeadline()
			if !ok {
				t.Fatal("no deadline")
			}
			h.tick(d)
			if got := e.g; g.Hand() == got.Hand() && g.Phase() != japanese.PhaseDeal && got != g {
				t.Fatalf("level %v move %d: seat %d did not play %v", level, moves, seat, want)
			}
		}
		if level != 0 && !differs {
			t.Fatal("the strong and baseline moves never differed: the test shows nothing")
		}
	}
}

// withoutBotLevel makes t a table from before bot levels, as every table
// written in a legacy snapshot layout is.
func withoutBotLevel(t *Table) {
	t.set.BotLevel = 0
	switch e := t.eng.(type) {
	case *classicEngine:
		e.level = 0
	case *japaneseEngine:
		e.level = 0
	}
}

// TestBotLevel_SurvivesASnapshot: a restored table's bots play at the
// level the table was created with (a replay makes the same moves).
func TestBotLevel_SurvivesASnapshot(t *testing.T) {
	for _, s := range []tablesettings.Settings{classicSet(classic.Standard, 0), japaneseSet(21)} {
		for _, level := range []classic.Level{0, classic.LevelEasy, classic.LevelNormal, classic.LevelStrong} {
			if s.Game == tablesettings.Japanese && level != 0 && level != classic.LevelStrong {
				continue
			}
			s.BotLevel = level
			h := newHarness(t, s, 3, humans(s.Game.Seats()))
			r, err := Restore(state(t, h.t))
			if err != nil {
				t.Fatal(err)
			}
			var got classic.Level
			switch e := r.eng.(type) {
			case *classicEngine:
				got = e.level
			case *japaneseEngine:
				got = e.level
			}
			if got != level || r.set.BotLevel != level {
				t.Errorf("%v level %v: restored as %v (settings %v)", s.Game, level, got, r.set.BotLevel)
			}
		}
	}
}
