package wire

import (
	"strings"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
)

// LobbyFilter is which tables a client wants to see, in the words of the
// HTTP API's query (GET /api/v1/tables) and of the lobby frame's "filter":
// game classic|japanese, variant standard|nines, status
// waiting|playing|finished; unset fields do not filter.
type LobbyFilter struct {
	Game            string `json:"game,omitempty"`
	Variant         string `json:"variant,omitempty"`
	Status          string `json:"status,omitempty"`
	FreeSeat        bool   `json:"free_seat,omitempty"`
	FreeOnly        bool   `json:"free_only,omitempty"`
	WithoutPassword bool   `json:"without_password,omitempty"`
	// MaxStake is the highest Domino Coin stake shown; 0 does not filter.
	MaxStake int64 `json:"max_stake,omitempty"`
}

// The filter's words and what they select: read-only tables as functions,
// no package state.
func filterGame(v string) (lobbyv1.Game, bool) {
	switch v {
	case "classic":
		return lobbyv1.Game_GAME_CLASSIC, true
	case "japanese":
		return lobbyv1.Game_GAME_JAPANESE, true
	}
	return 0, false
}

func filterVariant(v string) (lobbyv1.ClassicVariant, bool) {
	switch v {
	case "standard":
		return lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD, true
	case "nines":
		return lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES, true
	}
	return 0, false
}

func filterStatus(v string) (lobbyv1.TableStatus, bool) {
	switch v {
	case "waiting":
		return lobbyv1.TableStatus_TABLE_STATUS_WAITING, true
	case "playing":
		return lobbyv1.TableStatus_TABLE_STATUS_PLAYING, true
	case "finished":
		return lobbyv1.TableStatus_TABLE_STATUS_FINISHED, true
	}
	return 0, false
}

// Proto checks the filter and returns it as the lobby's TableFilter; its
// errors are *Error with CodeInvalid.
func (f LobbyFilter) Proto() (*lobbyv1.TableFilter, error) {
	out := &lobbyv1.TableFilter{HasFreeSeat: f.FreeSeat, FreeOnly: f.FreeOnly, WithoutPassword: f.WithoutPassword, MaxStake: f.MaxStake}
	var err error
	if out.Game, err = filterEnum("game", f.Game, filterGame); err != nil {
		return nil, err
	}
	if out.ClassicVariant, err = filterEnum("variant", f.Variant, filterVariant); err != nil {
		return nil, err
	}
	if out.Status, err = filterEnum("status", f.Status, filterStatus); err != nil {
		return nil, err
	}
	if f.MaxStake < 0 {
		return nil, Errorf(CodeInvalid, "max_stake is a number of coins, not %d", f.MaxStake)
	}
	return out, nil
}

func filterEnum[E ~int32](name, v string, lookup func(string) (E, bool)) (E, error) {
	if v == "" {
		return 0, nil
	}
	v = strings.ToLower(v)
	e, ok := lookup(v)
	if !ok {
		return 0, Errorf(CodeInvalid, "%s=%q is not one of the allowed values", name, clip(v))
	}
	return e, nil
}
