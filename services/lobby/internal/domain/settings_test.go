package domain

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

func classicSettings(mut ...func(*lobbyv1.TableSettings)) *lobbyv1.TableSettings {
	s := &lobbyv1.TableSettings{
		Game:           lobbyv1.Game_GAME_CLASSIC,
		ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
		Khishti:        lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200,
		Premia:         true, Moshla: true, RestDocked: true,
		Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
		BotLevel:   lobbyv1.BotLevel_BOT_LEVEL_NORMAL,
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func japaneseSettings(mut ...func(*lobbyv1.TableSettings)) *lobbyv1.TableSettings {
	s := &lobbyv1.TableSettings{
		Game:           lobbyv1.Game_GAME_JAPANESE,
		JapaneseTarget: 21,
		Visibility:     lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
		BotLevel:       lobbyv1.BotLevel_BOT_LEVEL_STRONG,
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func TestParseSettings_EveryClassicCombinationIsAccepted(t *testing.T) {
	variants := map[lobbyv1.ClassicVariant]classic.Variant{
		lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD: classic.Standard,
		lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES:    classic.Nines,
	}
	khishtis := map[lobbyv1.KhishtiPenalty]scoring.Khishti{
		lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200:      scoring.Khishti200,
		lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_500:      scoring.Khishti500,
		lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_100:      scoring.Khishti100,
		lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD: scoring.KhishtiPerCard,
	}
	n := 0
	for pv, v := range variants {
		for pk, k := range khishtis {
			for flags := range 8 {
				for _, vis := range []lobbyv1.TableVisibility{lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC, lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE} {
					p := classicSettings(func(s *lobbyv1.TableSettings) {
						s.ClassicVariant, s.Khishti, s.Visibility = pv, pk, vis
						s.Premia, s.Moshla, s.RestDocked = flags&1 != 0, flags&2 != 0, flags&4 != 0
						s.BotLevel = lobbyv1.BotLevel(1 + flags%3)
					})
					got, err := ParseSettings(p, false)
					if err != nil {
						t.Fatalf("%v: %v", p, err)
					}
					want := scoring.Settings{Variant: v, Khishti: k, Premia: flags&1 != 0, Moshla: flags&2 != 0, RestDocked: flags&4 != 0}
					if got.Game != tablesettings.Classic || got.Classic != want || got.Seats() != 4 ||
						got.BotLevel != classic.Level(1+flags%3) {
						t.Fatalf("%v: got %+v", p, got)
					}
					// The stored form is complete and reads back the same.
					p.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}}
					if !proto.Equal(got.Proto(), p) {
						t.Fatalf("round trip:\n got %v\nwant %v", got.Proto(), p)
					}
					n++
				}
			}
		}
	}
	if n != 2*4*8*2 {
		t.Fatalf("checked %d combinations", n)
	}
}

func TestParseSettings_JapaneseTargets(t *testing.T) {
	for _, target := range []uint32{11, 15, 21, 31} {
		got, err := ParseSettings(japaneseSettings(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = target }), false)
		if err != nil || got.JapaneseTarget != target || got.Game != tablesettings.Japanese || got.Seats() != 2 {
			t.Errorf("target %d: %+v, %v", target, got, err)
		}
	}
	got, err := ParseSettings(japaneseSettings(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = 0 }), false)
	if err != nil || got.JapaneseTarget != japanese.DefaultTarget {
		t.Errorf("unset target: got %d, %v; want the default 21", got.JapaneseTarget, err)
	}
}

// The bot level is the creator's choice for a classic table; unspecified is
// classic.LevelDefault (normal), written into the description.
func TestParseSettings_BotLevelDefaultsToNormalAndIsDescribed(t *testing.T) {
	got, err := ParseSettings(classicSettings(func(s *lobbyv1.TableSettings) { s.BotLevel = 0 }), false)
	if err != nil || got.BotLevel != classic.LevelDefault || classic.LevelDefault != classic.LevelNormal {
		t.Fatalf("unset bot level: %v, %v; want normal", got.BotLevel, err)
	}
	if d := got.Proto().GetBotLevel(); d != lobbyv1.BotLevel_BOT_LEVEL_NORMAL {
		t.Fatalf("the description says bot level %v, want normal", d)
	}
	for l, want := range map[lobbyv1.BotLevel]classic.Level{
		lobbyv1.BotLevel_BOT_LEVEL_EASY: classic.LevelEasy, lobbyv1.BotLevel_BOT_LEVEL_NORMAL: classic.LevelNormal,
		lobbyv1.BotLevel_BOT_LEVEL_STRONG: classic.LevelStrong,
	} {
		got, err := ParseSettings(classicSettings(func(s *lobbyv1.TableSettings) { s.BotLevel = l }), false)
		if err != nil || got.BotLevel != want || got.Proto().GetBotLevel() != l {
			t.Errorf("bot level %v: %v, %v", l, got.BotLevel, err)
		}
	}
	// A Japanese table's only bot is the move timer's: strong.
	if got, err := ParseSettings(japaneseSettings(), false); err != nil || got.BotLevel != classic.LevelStrong ||
		got.Proto().GetBotLevel() != lobbyv1.BotLevel_BOT_LEVEL_STRONG {
		t.Errorf("a Japanese table has bot level %v (%v), want strong", got.BotLevel, err)
	}
}

func TestParseSettings_DefaultsAndDerivedFields(t *testing.T) {
	p := classicSettings(func(s *lobbyv1.TableSettings) { s.HasPassword = false })
	got, err := ParseSettings(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasPassword {
		t.Error("has_password must follow the password actually given, not the client's flag")
	}
	if got.Stake.Kind != StakeFree {
		t.Errorf("missing stake: got %+v, want free", got.Stake)
	}
	got, err = ParseSettings(classicSettings(func(s *lobbyv1.TableSettings) { s.HasPassword = true }), false)
	if err != nil || got.HasPassword {
		t.Errorf("has_password without a password: %v, %v", got.HasPassword, err)
	}
	got, err = ParseSettings(classicSettings(func(s *lobbyv1.TableSettings) {
		s.MoveTime, s.ReconnectGrace = durationpb.New(30*time.Second), durationpb.New(2*time.Minute)
	}), false)
	if err != nil || got.MoveTime != 30*time.Second || got.ReconnectGrace != 2*time.Minute {
		t.Errorf("timers: %+v, %v", got, err)
	}
	got, err = ParseSettings(classicSettings(func(s *lobbyv1.TableSettings) {
		s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 50}}}
	}), false)
	if err != nil || got.Stake != (Stake{Kind: StakeCoins, Coins: 50}) {
		t.Errorf("coin stake parses (policy is NewTable's): %+v, %v", got.Stake, err)
	}
}

func TestParseSettings_InvalidSettingsNameTheirField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    *lobbyv1.TableSettings
		field string
	}{
		{"missing", nil, "settings"},
		{"no game", classicSettings(func(s *lobbyv1.TableSettings) { s.Game = 0 }), "game"},
		{"unknown game", classicSettings(func(s *lobbyv1.TableSettings) { s.Game = 9 }), "game"},
		{"classic without variant", classicSettings(func(s *lobbyv1.TableSettings) { s.ClassicVariant = 0 }), "classic_variant"},
		{"unknown variant", classicSettings(func(s *lobbyv1.TableSettings) { s.ClassicVariant = 3 }), "classic_variant"},
		{"wrapping variant", classicSettings(func(s *lobbyv1.TableSettings) { s.ClassicVariant = 257 }), "classic_variant"},
		{"classic without khishti", classicSettings(func(s *lobbyv1.TableSettings) { s.Khishti = 0 }), "khishti"},
		{"unknown khishti", classicSettings(func(s *lobbyv1.TableSettings) { s.Khishti = 5 }), "khishti"},
		{"classic with target", classicSettings(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = 21 }), "japanese_target"},
		{"japanese target 12", japaneseSettings(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = 12 }), "japanese_target"},
		{"japanese target 100", japaneseSettings(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = 100 }), "japanese_target"},
		{"japanese with variant", japaneseSettings(func(s *lobbyv1.TableSettings) { s.ClassicVariant = 1 }), "classic_variant"},
		{"japanese with khishti", japaneseSettings(func(s *lobbyv1.TableSettings) { s.Khishti = 1 }), "khishti"},
		{"japanese with premia", japaneseSettings(func(s *lobbyv1.TableSettings) { s.Premia = true }), "premia"},
		{"japanese with moshla", japaneseSettings(func(s *lobbyv1.TableSettings) { s.Moshla = true }), "moshla"},
		{"japanese with restDocked", japaneseSettings(func(s *lobbyv1.TableSettings) { s.RestDocked = true }), "rest_docked"},
		{"unknown bot level", classicSettings(func(s *lobbyv1.TableSettings) { s.BotLevel = 4 }), "bot_level"},
		{"negative bot level", classicSettings(func(s *lobbyv1.TableSettings) { s.BotLevel = -1 }), "bot_level"},
		{"wrapping bot level", classicSettings(func(s *lobbyv1.TableSettings) { s.BotLevel = 257 }), "bot_level"},
		{"japanese with bot level easy", japaneseSettings(func(s *lobbyv1.TableSettings) { s.BotLevel = lobbyv1.BotLevel_BOT_LEVEL_EASY }), "bot_level"},
		{"no visibility", classicSettings(func(s *lobbyv1.TableSettings) { s.Visibility = 0 }), "visibility"},
		{"unknown visibility", classicSettings(func(s *lobbyv1.TableSettings) { s.Visibility = 7 }), "visibility"},
		{"unknown stake kind", classicSettings(func(s *lobbyv1.TableSettings) { s.Stake = &lobbyv1.Stake{} }), "stake"},
		{"zero coin stake", classicSettings(func(s *lobbyv1.TableSettings) {
			s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{}}}
		}), "stake"},
		{"negative coin stake", classicSettings(func(s *lobbyv1.TableSettings) {
			s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: -5}}}
		}), "stake"},
		{"move time too short", classicSettings(func(s *lobbyv1.TableSettings) { s.MoveTime = durationpb.New(time.Second) }), "move_time"},
		{"move time too long", classicSettings(func(s *lobbyv1.TableSettings) { s.MoveTime = durationpb.New(time.Hour) }), "move_time"},
		{"negative move time", classicSettings(func(s *lobbyv1.TableSettings) { s.MoveTime = durationpb.New(-time.Minute) }), "move_time"},
		{"grace too short", classicSettings(func(s *lobbyv1.TableSettings) { s.ReconnectGrace = durationpb.New(time.Second) }), "reconnect_grace"},
		{"grace too long", classicSettings(func(s *lobbyv1.TableSettings) { s.ReconnectGrace = durationpb.New(time.Hour) }), "reconnect_grace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSettings(tc.in, false)
			var se *SettingsError
			if !errors.As(err, &se) || !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("err = %v; want a *SettingsError", err)
			}
			if se.Field != tc.field {
				t.Errorf("field = %q (%v); want %q", se.Field, err, tc.field)
			}
			if Reason(err) != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS {
				t.Errorf("reason = %v", Reason(err))
			}
		})
	}
}

func TestSettings_ProtoRoundTripCoversEveryField(t *testing.T) {
	// A coin stake's description carries its game's payout rule
	// (pkg/payout): classic by placing, Japanese winner takes all.
	coins := func(percent ...uint32) *lobbyv1.Stake {
		return &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 50, PayoutPercent: percent}}}
	}
	free := &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}}
	set := map[protoreflect.Name]bool{}
	for _, p := range []*lobbyv1.TableSettings{
		classicSettings(func(s *lobbyv1.TableSettings) {
			s.ClassicVariant, s.Khishti = lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES, lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD
			s.Visibility, s.HasPassword, s.Stake = lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE, true, coins(50, 30, 20, 0)
			s.MoveTime, s.ReconnectGrace = durationpb.New(30*time.Second), durationpb.New(2*time.Minute)
			s.BotLevel = lobbyv1.BotLevel_BOT_LEVEL_STRONG
		}),
		classicSettings(func(s *lobbyv1.TableSettings) { s.Premia, s.Stake = false, free }),
		japaneseSettings(func(s *lobbyv1.TableSettings) {
			s.JapaneseTarget, s.Stake = 15, free
			s.MoveTime, s.ReconnectGrace = durationpb.New(5*time.Minute), durationpb.New(10*time.Second)
		}),
		japaneseSettings(func(s *lobbyv1.TableSettings) {
			s.JapaneseTarget, s.Visibility, s.HasPassword, s.Stake = 31, lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE, true, coins(100, 0)
		}),
	} {
		got, err := ParseSettings(p, p.GetHasPassword())
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		if !proto.Equal(got.Proto(), p) {
			t.Fatalf("round trip:\n got %v\nwant %v", got.Proto(), p)
		}
		p.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			set[fd.Name()] = true
			return true
		})
	}
	// A field added to TableSettings must be added here, and to Proto.
	fields := (&lobbyv1.TableSettings{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		if name := fields.Get(i).Name(); !set[name] {
			t.Errorf("no case sets %s", name)
		}
	}
}

// The payout rule is the lobby's to write: one a creator sends is not
// taken, the game's is.
func TestSettings_APayoutRuleSentInACreationIsReplacedByTheGames(t *testing.T) {
	p := classicSettings(func(s *lobbyv1.TableSettings) {
		s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 100, PayoutPercent: []uint32{100, 0, 0, 0}}}}
	})
	got, err := ParseSettings(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if pc := got.Proto().GetStake().GetCoins().GetPayoutPercent(); fmt.Sprint(pc) != "[50 30 20 0]" {
		t.Fatalf("payout %v, want the classic table [50 30 20 0]", pc)
	}
}

func TestSettings_TheTableReadsTheRulesTheLobbyWrites(t *testing.T) {
	var all []*lobbyv1.TableSettings
	for v := lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD; v <= lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES; v++ {
		for k := lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200; k <= lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD; k++ {
			for flags := range 8 {
				all = append(all, classicSettings(func(s *lobbyv1.TableSettings) {
					s.ClassicVariant, s.Khishti = v, k
					s.Premia, s.Moshla, s.RestDocked = flags&1 != 0, flags&2 != 0, flags&4 != 0
					s.MoveTime = durationpb.New(time.Duration(5+flags) * time.Second)
				}))
			}
		}
	}
	for _, target := range []uint32{0, 11, 15, 21, 31} {
		all = append(all, japaneseSettings(func(s *lobbyv1.TableSettings) {
			s.JapaneseTarget, s.ReconnectGrace = target, durationpb.New(time.Minute)
		}))
	}
	for _, p := range all {
		s, err := ParseSettings(p, false)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		ts, err := tablesettings.FromProto(s.Proto())
		if err != nil {
			t.Fatalf("the table refuses %v: %v", s.Proto(), err)
		}
		want := tablesettings.Settings{Classic: s.Classic, BotLevel: s.BotLevel, JapaneseTarget: int(s.JapaneseTarget),
			MoveTimeout: s.MoveTime, ReconnectGrace: s.ReconnectGrace, BotDelay: tablesettings.DefaultBotDelay,
			SeedTimeout: tablesettings.DefaultSeedTimeout}
		want.Game = tablesettings.Classic
		if s.Game == tablesettings.Japanese {
			want.Game = tablesettings.Japanese
		}
		if want.MoveTimeout == 0 {
			want.MoveTimeout = tablesettings.DefaultMoveTimeout
		}
		if want.ReconnectGrace == 0 {
			want.ReconnectGrace = tablesettings.DefaultReconnectGrace
		}
		if ts != want {
			t.Fatalf("%v: the table reads %+v, want %+v", p, ts, want)
		}
	}
}
