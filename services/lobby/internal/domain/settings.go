package domain

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/payout"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// Visibility says whether a table is listed.
type Visibility uint8

// The visibilities.
const (
	Public Visibility = iota + 1
	Private
)

// StakeKind is what a seat costs. The kind is an enum (not a "coins > 0"
// convention) so later kinds are new values, never a changed meaning of old
// ones.
type StakeKind uint8

// The stake kinds.
const (
	StakeFree StakeKind = iota + 1
	StakeCoins
)

// Stake is a table's stake.
type Stake struct {
	Kind StakeKind
	// Coins each player stakes (StakeCoins only).
	Coins int64
}

// Bounds of the timing settings (zero means the server's default).
const (
	MinMoveTime       = 5 * time.Second
	MaxMoveTime       = 5 * time.Minute
	MinReconnectGrace = 10 * time.Second
	MaxReconnectGrace = 10 * time.Minute
)

// Settings are a table's complete, validated settings. Classic scoring rules
// are a scoring.Settings embedded as a value, so a new table-level setting
// (a stake kind, a timer) never changes how a sheet is scored.
type Settings struct {
	Game tablesettings.Game
	// Classic holds the classic scoring rules (zero for Japanese).
	Classic scoring.Settings
	// BotLevel is how well the server's bots play: the creator's choice for
	// the bots in empty classic seats (unspecified is classic.LevelDefault,
	// written out so the description shows it); always strong at a Japanese
	// table, whose seats bots never fill (it names the move-timer bot).
	BotLevel classic.Level
	// JapaneseTarget is 11, 15, 21 or 31 (zero for classic).
	JapaneseTarget uint32
	Visibility     Visibility
	HasPassword    bool
	Stake          Stake
	// MoveTime and ReconnectGrace are zero for the server's default.
	MoveTime       time.Duration
	ReconnectGrace time.Duration
}

// Seats is the number of seats of the game.
func (s Settings) Seats() int {
	return s.Game.Seats()
}

// ParseSettings validates wire settings and fills the defaults the rules
// give (Japanese target 21, free stake). hasPassword is whether the creator
// gave a password: the lobby decides has_password, never the client.
//
// It is strict where a silent fix would mislead the table description:
// classic-only settings on a Japanese table (and the reverse) are refused,
// not dropped.
func ParseSettings(p *lobbyv1.TableSettings, hasPassword bool) (Settings, error) {
	if p == nil {
		return Settings{}, invalid("settings", "missing")
	}
	s := Settings{HasPassword: hasPassword}
	switch p.GetGame() {
	case lobbyv1.Game_GAME_CLASSIC:
		s.Game = tablesettings.Classic
		if err := parseClassic(p, &s); err != nil {
			return Settings{}, err
		}
	case lobbyv1.Game_GAME_JAPANESE:
		s.Game = tablesettings.Japanese
		if err := parseJapanese(p, &s); err != nil {
			return Settings{}, err
		}
	default:
		return Settings{}, invalid("game", fmt.Sprintf("must be classic or japanese, not %v", p.GetGame()))
	}
	switch p.GetVisibility() {
	case lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC:
		s.Visibility = Public
	case lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE:
		s.Visibility = Private
	default:
		return Settings{}, invalid("visibility", "must be public or private")
	}
	stake, err := parseStake(p.GetStake())
	if err != nil {
		return Settings{}, err
	}
	s.Stake = stake
	if s.MoveTime, err = parseDuration("move_time", p.GetMoveTime(), MinMoveTime, MaxMoveTime); err != nil {
		return Settings{}, err
	}
	if s.ReconnectGrace, err = parseDuration("reconnect_grace", p.GetReconnectGrace(), MinReconnectGrace, MaxReconnectGrace); err != nil {
		return Settings{}, err
	}
	return s, nil
}

func parseClassic(p *lobbyv1.TableSettings, s *Settings) error {
	if _, ok := tablesettings.ClassicVariantFromProto(p.GetClassicVariant()); !ok {
		return invalid("classic_variant", "must be standard or nines")
	}
	if _, ok := tablesettings.KhishtiFromProto(p.GetKhishti()); !ok {
		return invalid("khishti", "must be 200, 500, 100 or per-card")
	}
	r, err := tablesettings.ClassicRulesFromProto(p)
	if err != nil {
		return invalid("classic", err.Error())
	}
	if p.GetJapaneseTarget() != 0 {
		return invalid("japanese_target", "applies to Japanese tables only")
	}
	l, ok := tablesettings.BotLevelFromProto(p.GetBotLevel())
	if !ok {
		return invalid("bot_level", "must be easy, normal or strong")
	}
	if l == 0 {
		l = classic.LevelDefault
	}
	s.BotLevel = l
	s.Classic = r
	if err := s.Classic.Validate(); err != nil {
		return invalid("classic", err.Error())
	}
	return nil
}

func parseJapanese(p *lobbyv1.TableSettings, s *Settings) error {
	// Japanese joker has no khishti, premia or moshla (rules.md): a table
	// claiming one would be described wrongly.
	switch {
	case p.GetClassicVariant() != lobbyv1.ClassicVariant_CLASSIC_VARIANT_UNSPECIFIED:
		return invalid("classic_variant", "applies to classic tables only")
	case p.GetKhishti() != lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_UNSPECIFIED:
		return invalid("khishti", "applies to classic tables only")
	case p.GetPremia():
		return invalid("premia", "applies to classic tables only")
	case p.GetMoshla():
		return invalid("moshla", "applies to classic tables only")
	case p.GetRestDocked():
		return invalid("rest_docked", "applies to classic tables only")
	case p.GetBotLevel() != lobbyv1.BotLevel_BOT_LEVEL_UNSPECIFIED && p.GetBotLevel() != lobbyv1.BotLevel_BOT_LEVEL_STRONG:
		return invalid("bot_level", "a Japanese table has no bots in its seats: leave it unset (strong)")
	}
	s.BotLevel = classic.LevelStrong
	t := p.GetJapaneseTarget()
	if t == 0 {
		t = japanese.DefaultTarget
	}
	if (japanese.Settings{Target: int(t)}).Validate() != nil {
		return invalid("japanese_target", fmt.Sprintf("must be 11, 15, 21 or 31, not %d", t))
	}
	s.JapaneseTarget = t
	return nil
}

func parseStake(p *lobbyv1.Stake) (Stake, error) {
	if p == nil {
		return Stake{Kind: StakeFree}, nil
	}
	switch k := p.GetKind().(type) {
	case *lobbyv1.Stake_Free:
		return Stake{Kind: StakeFree}, nil
	case *lobbyv1.Stake_Coins:
		// Only the rungs of the ladder (pkg/payout): a few stakes keep the
		// list's filter and the players' choice simple, and make a table's
		// stake a value the wallet and every client know.
		if a := k.Coins.GetAmount(); !payout.ValidStake(a) {
			return Stake{}, invalid("stake", fmt.Sprintf("a Domino Coin stake must be one of %s, not %d", ladder(), a))
		}
		return Stake{Kind: StakeCoins, Coins: k.Coins.GetAmount()}, nil
	default:
		// Set but of a kind this lobby does not know (a newer client):
		// refuse rather than treat it as free.
		return Stake{}, invalid("stake", "unknown stake kind")
	}
}

// ladder spells the stake ladder for a refusal: "10, 50, 100, 500 or 1000".
func ladder() string {
	st := payout.Stakes()
	parts := make([]string, len(st))
	for i, n := range st {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// Coins reports whether the table is played for Domino Coin.
func (s Settings) Coins() bool { return s.Stake.Kind == StakeCoins }

func parseDuration(field string, d *durationpb.Duration, lo, hi time.Duration) (time.Duration, error) {
	if d == nil {
		return 0, nil
	}
	if err := d.CheckValid(); err != nil {
		return 0, invalid(field, err.Error())
	}
	v := d.AsDuration()
	if v == 0 {
		return 0, nil
	}
	if v < lo || v > hi {
		return 0, invalid(field, fmt.Sprintf("must be zero (server default) or between %v and %v, not %v", lo, hi, v))
	}
	return v, nil
}

// Proto is the complete wire form of the settings.
func (s Settings) Proto() *lobbyv1.TableSettings {
	p := &lobbyv1.TableSettings{HasPassword: s.HasPassword}
	switch s.Game {
	case tablesettings.Classic:
		tablesettings.ClassicRulesToProto(p, s.Classic)
		p.BotLevel = lobbyv1.BotLevel(s.BotLevel)
	case tablesettings.Japanese:
		tablesettings.JapaneseRulesToProto(p, s.JapaneseTarget)
		p.BotLevel = lobbyv1.BotLevel(s.BotLevel)
	}
	switch s.Visibility {
	case Public:
		p.Visibility = lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC
	case Private:
		p.Visibility = lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE
	}
	switch s.Stake.Kind {
	case StakeFree:
		p.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}}
	case StakeCoins:
		// The payout rule travels with the stake, so that every description
		// of the table says how its pot is paid.
		var percent []uint32
		for _, pc := range payout.Table(s.Game) {
			percent = append(percent, uint32(pc))
		}
		p.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: s.Stake.Coins, PayoutPercent: percent}}}
	}
	if s.MoveTime > 0 {
		p.MoveTime = durationpb.New(s.MoveTime)
	}
	if s.ReconnectGrace > 0 {
		p.ReconnectGrace = durationpb.New(s.ReconnectGrace)
	}
	return p
}
