package tablesettings

import (
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/scoring"
)

// everyRules is every valid table rule set: each classic variant, khishti
// and flag combination, and each Japanese target, with times other than the
// defaults.
func everyRules() []Settings {
	var out []Settings
	for _, v := range []classic.Variant{classic.Standard, classic.Nines} {
		for _, k := range []scoring.Khishti{scoring.Khishti200, scoring.Khishti500, scoring.Khishti100, scoring.KhishtiPerCard} {
			for flags := range 8 {
				c := ClassicSettings(scoring.Settings{Variant: v, Khishti: k,
					Premia: flags&1 != 0, Moshla: flags&2 != 0, RestDocked: flags&4 != 0})
				c.BotLevel = classic.Level(flags % 4) // 0: the default level
				out = append(out, c)
			}
		}
	}
	for i, target := range []int{11, 15, 21, 31} {
		j := JapaneseSettings(target)
		if i%2 == 1 {
			j.BotLevel = classic.LevelStrong // a Japanese table's only level
		}
		out = append(out, j)
	}
	for i := range out {
		out[i].MoveTimeout = time.Duration(5+i) * time.Second
		out[i].ReconnectGrace = time.Duration(1+i) * time.Minute
	}
	return out
}

func TestSettings_ProtoRoundTripOfEveryRuleSetFillsTheTablesFields(t *testing.T) {
	set := map[protoreflect.Name]bool{}
	for _, s := range everyRules() {
		p := s.Proto()
		got, err := FromProto(p)
		if err != nil || got != s {
			t.Fatalf("round trip of %+v: %+v, %v", s, got, err)
		}
		p.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			set[fd.Name()] = true
			return true
		})
	}
	// The table's part of the settings, each field written by some rule set;
	// stake, visibility and password are the lobby's.
	want := []protoreflect.Name{"game", "classic_variant", "khishti", "premia", "moshla", "rest_docked",
		"japanese_target", "move_time", "reconnect_grace", "bot_level"}
	var got []protoreflect.Name
	for n := range set {
		got = append(got, n)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Proto wrote the fields %v, want %v", got, want)
	}
}

func TestRulesToProto_ReadBackAndLeaveTheLobbysFieldsAlone(t *testing.T) {
	for _, s := range everyRules() {
		p := &lobbyv1.TableSettings{Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE, HasPassword: true}
		if s.Game == Japanese {
			JapaneseRulesToProto(p, uint32(s.JapaneseTarget))
			if p.GetGame() != lobbyv1.Game_GAME_JAPANESE || p.GetJapaneseTarget() != uint32(s.JapaneseTarget) {
				t.Fatalf("Japanese %d: %v", s.JapaneseTarget, p)
			}
		} else {
			ClassicRulesToProto(p, s.Classic)
			if got, err := ClassicRulesFromProto(p); err != nil || got != s.Classic || p.GetGame() != lobbyv1.Game_GAME_CLASSIC {
				t.Fatalf("classic %+v: %v read back as %+v", s.Classic, p, got)
			}
		}
		if p.GetVisibility() != lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE || !p.GetHasPassword() {
			t.Fatalf("%+v: the lobby's fields changed: %v", s, p)
		}
	}
}

// A variant or khishti value that names none is refused, also one beyond a
// byte that a plain conversion would wrap around to a valid rule (257 - 1 is
// 0 as a byte: standard, or khishti 200). The lobby refuses them too; the
// runner and scoring must not take them for something else.
func TestClassicRulesFromProto_RefusesValuesThatNameNone(t *testing.T) {
	for _, tc := range []struct {
		variant lobbyv1.ClassicVariant
		khishti lobbyv1.KhishtiPenalty
	}{
		{0, lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200},
		{lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD, 0},
		{3, lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200},
		{257, lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200},
		{-1, lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200},
		{lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES, 5},
		{lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES, 257},
	} {
		ts := &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: tc.variant, Khishti: tc.khishti}
		if r, err := ClassicRulesFromProto(ts); !errors.Is(err, ErrInvalid) {
			t.Errorf("variant %d khishti %d: %+v, %v; want ErrInvalid", tc.variant, tc.khishti, r, err)
		}
		if _, err := FromProto(ts); !errors.Is(err, ErrInvalid) {
			t.Errorf("FromProto, variant %d khishti %d: %v; want ErrInvalid", tc.variant, tc.khishti, err)
		}
	}
}

// A bot level: unspecified is a table from before levels (kept 0), easy,
// normal and strong are themselves, anything else is refused; a Japanese
// table (whose seats bots never fill) has strong or none.
func TestBotLevelFromProto_MapsEveryLevelAndRefusesTheRest(t *testing.T) {
	for _, tc := range []struct {
		wire lobbyv1.BotLevel
		want classic.Level
		ok   bool
	}{
		{lobbyv1.BotLevel_BOT_LEVEL_UNSPECIFIED, 0, true},
		{lobbyv1.BotLevel_BOT_LEVEL_EASY, classic.LevelEasy, true},
		{lobbyv1.BotLevel_BOT_LEVEL_NORMAL, classic.LevelNormal, true},
		{lobbyv1.BotLevel_BOT_LEVEL_STRONG, classic.LevelStrong, true},
		{4, 0, false},
		{-1, 0, false},
		{257, 0, false},
	} {
		got, ok := BotLevelFromProto(tc.wire)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("BotLevelFromProto(%d) = %v, %v; want %v, %v", tc.wire, got, ok, tc.want, tc.ok)
		}
		ts := ClassicSettings(scoring.DefaultSettings()).Proto()
		ts.BotLevel = tc.wire
		s, err := FromProto(ts)
		if tc.ok != (err == nil) || (tc.ok && s.BotLevel != tc.want) {
			t.Errorf("FromProto with bot level %d: %+v, %v", tc.wire, s, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("FromProto with bot level %d: %v, want ErrInvalid", tc.wire, err)
		}
	}
	for _, l := range []classic.Level{classic.LevelEasy, classic.LevelNormal, 4} {
		j := JapaneseSettings(21)
		j.BotLevel = l
		if _, err := j.WithDefaults(); !errors.Is(err, ErrInvalid) {
			t.Errorf("a Japanese table with bot level %v: %v, want ErrInvalid", l, err)
		}
	}
}

func TestSettings_ProtoRoundTrip(t *testing.T) {
	for _, s := range []Settings{ClassicSettings(scoring.Settings{Variant: classic.Nines, Khishti: scoring.Khishti200}), JapaneseSettings(31)} {
		s.MoveTimeout, s.ReconnectGrace = 15*time.Second, 2*time.Minute
		got, err := FromProto(s.Proto())
		if err != nil || got != s {
			t.Fatalf("round trip of %+v: %+v, %v", s, got, err)
		}
	}
	if _, err := FromProto(&lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("classic without variant: %v", err)
	}
}

// Every game of the contract maps to a Game with its seats, and an unset or
// unknown one is refused.
func TestGameFromProto_MapsEveryGameAndRefusesTheRest(t *testing.T) {
	for _, tc := range []struct {
		in    lobbyv1.Game
		want  Game
		seats int
	}{
		{lobbyv1.Game_GAME_CLASSIC, Classic, 4},
		{lobbyv1.Game_GAME_JAPANESE, Japanese, 2},
	} {
		g, err := GameFromProto(tc.in)
		if err != nil || g != tc.want || g.Seats() != tc.seats {
			t.Errorf("%v: %v (%d seats), %v", tc.in, g, g.Seats(), err)
		}
	}
	for _, bad := range []lobbyv1.Game{lobbyv1.Game_GAME_UNSPECIFIED, 99} {
		if _, err := GameFromProto(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: err = %v, want ErrInvalid", bad, err)
		}
	}
	// Every value the contract names is mapped (a new game must be added here).
	values := lobbyv1.Game_GAME_UNSPECIFIED.Descriptor().Values()
	for i := range values.Len() {
		if v := lobbyv1.Game(values.Get(i).Number()); v != lobbyv1.Game_GAME_UNSPECIFIED {
			if _, err := GameFromProto(v); err != nil {
				t.Errorf("%v is not mapped: %v", v, err)
			}
		}
	}
}
