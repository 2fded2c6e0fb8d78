// Package tablesettings is what a table plays by — the game, its rules and
// its times — with the platform's one set of defaults and the one mapping to
// and from the contract's lobby.v1.TableSettings. The lobby, the runner's
// table, scoring and the tools all read settings with it.
package tablesettings

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// Game is which card game a table plays.
type Game uint8

// The games. The zero value is no game, so a zero Settings is invalid.
const (
	Classic  Game = iota + 1 // four players, bids, 24 or 16 hands
	Japanese                 // two players, columns, up to a target score
)

func (g Game) String() string {
	switch g {
	case Classic:
		return "classic"
	case Japanese:
		return "japanese"
	}
	return fmt.Sprintf("Game(%d)", uint8(g))
}

// GameFromProto is the contract's game as a Game (ErrInvalid for none or an
// unknown one): the one place the enum is mapped.
func GameFromProto(g lobbyv1.Game) (Game, error) {
	switch g {
	case lobbyv1.Game_GAME_CLASSIC:
		return Classic, nil
	case lobbyv1.Game_GAME_JAPANESE:
		return Japanese, nil
	}
	return 0, fmt.Errorf("%w: unknown game %v", ErrInvalid, g)
}

// Seats returns how many seats the game has (0 for no game).
func (g Game) Seats() int {
	switch g {
	case Classic:
		return classic.Seats
	case Japanese:
		return japanese.Seats
	}
	return 0
}

// Defaults of the platform settings.
const (
	DefaultMoveTimeout    = 20 * time.Second
	DefaultReconnectGrace = 60 * time.Second
	// DefaultBotDelay paces bot moves so that people can follow them.
	DefaultBotDelay = 700 * time.Millisecond
	// DefaultSeedTimeout is how long a committed hand waits for the client
	// seeds: a client answers HandCommitted at once, so this only bounds a
	// silent or slow one.
	DefaultSeedTimeout = 3 * time.Second
)

// MaxDuration bounds the durations a table accepts, so that deadlines never
// overflow and a snapshot stays plausible.
const MaxDuration = 24 * time.Hour

// ErrInvalid is the error of settings no table can play by. Every error of this package
// wraps it.
var ErrInvalid = errors.New("tablesettings: invalid settings")

// Settings are the rules a table plays by.
type Settings struct {
	Game Game
	// Classic: variant, khishti, premia, moshla, rest docked.
	Classic scoring.Settings
	// BotLevel is how well the server's bots play: a classic table's bots in
	// empty seats play at it, and a player whose time runs out gets a
	// classic.LevelStrong move (a Japanese table's level is always strong:
	// bots never sit there). 0 is a table created before there were levels:
	// it keeps the baseline everywhere, so its logs replay the same. The
	// lobby always writes a level.
	BotLevel classic.Level
	// JapaneseTarget: 11, 15, 21 or 31; 0 means 21.
	JapaneseTarget int
	// MoveTimeout is the time a player has for one move; 0 means
	// DefaultMoveTimeout.
	MoveTimeout time.Duration
	// ReconnectGrace is the time an away player has to come back; 0 means
	// DefaultReconnectGrace.
	ReconnectGrace time.Duration
	// BotDelay is how long a bot waits before its move. Unlike the two
	// above, 0 is a real value: bots move at once, within the same Apply.
	// FromProto fills DefaultBotDelay.
	BotDelay time.Duration
	// SeedTimeout is how long a committed hand waits for the awaited seats'
	// client seeds before it is dealt without the missing ones; 0 means
	// DefaultSeedTimeout.
	SeedTimeout time.Duration
}

// ClassicSettings are the settings of a classic table with the platform's
// default times.
func ClassicSettings(s scoring.Settings) Settings {
	return Settings{Game: Classic, Classic: s, MoveTimeout: DefaultMoveTimeout,
		ReconnectGrace: DefaultReconnectGrace, BotDelay: DefaultBotDelay, SeedTimeout: DefaultSeedTimeout}
}

// JapaneseSettings are the settings of a Japanese table with the platform's
// default times.
func JapaneseSettings(target int) Settings {
	return Settings{Game: Japanese, JapaneseTarget: target, MoveTimeout: DefaultMoveTimeout,
		ReconnectGrace: DefaultReconnectGrace, BotDelay: DefaultBotDelay, SeedTimeout: DefaultSeedTimeout}
}

// WithDefaults fills the zero durations that mean "default" and checks
// everything.
func (s Settings) WithDefaults() (Settings, error) {
	if s.MoveTimeout == 0 {
		s.MoveTimeout = DefaultMoveTimeout
	}
	if s.ReconnectGrace == 0 {
		s.ReconnectGrace = DefaultReconnectGrace
	}
	if s.SeedTimeout == 0 {
		s.SeedTimeout = DefaultSeedTimeout
	}
	switch s.Game {
	case Classic:
		if err := s.Classic.Validate(); err != nil {
			return s, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if s.BotLevel != 0 && !s.BotLevel.Valid() {
			return s, fmt.Errorf("%w: bot level %d", ErrInvalid, uint8(s.BotLevel))
		}
		s.JapaneseTarget = 0
	case Japanese:
		if s.JapaneseTarget == 0 {
			s.JapaneseTarget = japanese.DefaultTarget
		}
		if err := (japanese.Settings{Target: s.JapaneseTarget}).Validate(); err != nil {
			return s, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		s.Classic = scoring.Settings{}
		if s.BotLevel != 0 && s.BotLevel != classic.LevelStrong {
			return s, fmt.Errorf("%w: bot level %v on a Japanese table (strong or none)", ErrInvalid, s.BotLevel)
		}
	default:
		return s, fmt.Errorf("%w: unknown game %d", ErrInvalid, uint8(s.Game))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
		min  time.Duration
	}{{"move timeout", s.MoveTimeout, 1}, {"reconnect grace", s.ReconnectGrace, 1}, {"bot delay", s.BotDelay, 0},
		{"seed timeout", s.SeedTimeout, 1}} {
		if d.d < d.min || d.d > MaxDuration {
			return s, fmt.Errorf("%w: %s %v out of range", ErrInvalid, d.name, d.d)
		}
	}
	return s, nil
}

// FromProto reads the lobby's table settings. Stake, visibility and
// password are the lobby's and the wallet's business, not the table's.
// BotDelay is DefaultBotDelay and SeedTimeout DefaultSeedTimeout; the runner
// may change them.
func FromProto(ts *lobbyv1.TableSettings) (Settings, error) {
	s := Settings{BotDelay: DefaultBotDelay, SeedTimeout: DefaultSeedTimeout}
	if ts == nil {
		return s, fmt.Errorf("%w: no settings", ErrInvalid)
	}
	if ts.GetMoveTime() != nil {
		s.MoveTimeout = ts.GetMoveTime().AsDuration()
	}
	if ts.GetReconnectGrace() != nil {
		s.ReconnectGrace = ts.GetReconnectGrace().AsDuration()
	}
	game, err := GameFromProto(ts.GetGame())
	if err != nil {
		return s, err
	}
	s.Game = game
	switch game {
	case Classic:
		r, err := ClassicRulesFromProto(ts)
		if err != nil {
			return s, err
		}
		s.Classic = r
		l, ok := BotLevelFromProto(ts.GetBotLevel())
		if !ok {
			return s, fmt.Errorf("%w: bot level %v", ErrInvalid, ts.GetBotLevel())
		}
		s.BotLevel = l
	case Japanese:
		s.JapaneseTarget = int(ts.GetJapaneseTarget())
		l, ok := BotLevelFromProto(ts.GetBotLevel())
		if !ok {
			return s, fmt.Errorf("%w: bot level %v", ErrInvalid, ts.GetBotLevel())
		}
		s.BotLevel = l
	}
	return s.WithDefaults()
}

// Proto returns the settings as the contract's TableSettings (game rules
// and times; no stake, visibility or password).
func (s Settings) Proto() *lobbyv1.TableSettings {
	ts := &lobbyv1.TableSettings{
		MoveTime:       durationpb.New(s.MoveTimeout),
		ReconnectGrace: durationpb.New(s.ReconnectGrace),
	}
	switch s.Game {
	case Classic:
		ClassicRulesToProto(ts, s.Classic)
		ts.BotLevel = lobbyv1.BotLevel(s.BotLevel)
	case Japanese:
		JapaneseRulesToProto(ts, uint32(s.JapaneseTarget))
		ts.BotLevel = lobbyv1.BotLevel(s.BotLevel)
	}
	return ts
}

// The wire form of the game rules, which the lobby writes and reads too
// (with its own Settings, validation and defaults): the game and classic's
// variant, khishti penalty and flags, or the Japanese target. Both wire
// enums are the Go value plus one, so that zero stays "unspecified".

// ClassicRulesToProto writes GAME_CLASSIC and the classic rules r into ts
// and leaves its other fields alone.
func ClassicRulesToProto(ts *lobbyv1.TableSettings, r scoring.Settings) {
	ts.Game = lobbyv1.Game_GAME_CLASSIC
	ts.ClassicVariant = lobbyv1.ClassicVariant(r.Variant + 1)
	ts.Khishti = lobbyv1.KhishtiPenalty(r.Khishti + 1)
	ts.Premia, ts.Moshla, ts.RestDocked = r.Premia, r.Moshla, r.RestDocked
}

// JapaneseRulesToProto writes GAME_JAPANESE and target into ts and leaves
// its other fields alone.
func JapaneseRulesToProto(ts *lobbyv1.TableSettings, target uint32) {
	ts.Game = lobbyv1.Game_GAME_JAPANESE
	ts.JapaneseTarget = target
}

// ClassicVariantFromProto is the variant v names; ok is false for
// "unspecified" and for every value that names none.
func ClassicVariantFromProto(v lobbyv1.ClassicVariant) (_ classic.Variant, ok bool) {
	if v <= 0 || v > 255 { // beyond a Variant's range: it would wrap around to a valid one
		return 0, false
	}
	r := classic.Variant(v - 1)
	return r, r.Valid()
}

// KhishtiFromProto is the khishti penalty k names; ok is false for
// "unspecified" and for every value that names none.
func KhishtiFromProto(k lobbyv1.KhishtiPenalty) (_ scoring.Khishti, ok bool) {
	if k <= 0 || k > 255 {
		return 0, false
	}
	r := scoring.Khishti(k - 1)
	return r, r.Valid()
}

// BotLevelFromProto is the bot level l names: 0 for "unspecified" (the
// default level); ok is false for every value that names none. The wire
// value is classic.Level's.
func BotLevelFromProto(l lobbyv1.BotLevel) (_ classic.Level, ok bool) {
	if l == lobbyv1.BotLevel_BOT_LEVEL_UNSPECIFIED {
		return 0, true
	}
	if l < 0 || l > 255 {
		return 0, false
	}
	r := classic.Level(l)
	return r, r.Valid()
}

// ClassicRulesFromProto reads the classic rules of ts; the error wraps
// ErrInvalid when its variant or khishti penalty is unspecified or names
// none. The table, the lobby and scoring all read the rules with it.
func ClassicRulesFromProto(ts *lobbyv1.TableSettings) (scoring.Settings, error) {
	v, ok := ClassicVariantFromProto(ts.GetClassicVariant())
	if !ok {
		return scoring.Settings{}, fmt.Errorf("%w: classic variant %v", ErrInvalid, ts.GetClassicVariant())
	}
	k, ok := KhishtiFromProto(ts.GetKhishti())
	if !ok {
		return scoring.Settings{}, fmt.Errorf("%w: khishti penalty %v", ErrInvalid, ts.GetKhishti())
	}
	return scoring.Settings{Variant: v, Khishti: k,
		Premia: ts.GetPremia(), Moshla: ts.GetMoshla(), RestDocked: ts.GetRestDocked()}, nil
}
