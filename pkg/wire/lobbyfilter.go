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

var (
	filterGames    = map[string]lobbyv1.Game{"classic": lobbyv1.Game_GAME_CLASSIC, "japanese": lobbyv1.Game_GAME_JAPANESE}
	filterVariants = map[string]lobbyv1.ClassicVariant{
		"standard": lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD, "nines": lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES}
	filterStatuses = map[string]lobbyv1.TableStatus{"waiting": lobbyv1.TableStatus_TABLE_STATUS_WAITING,
		"playing": lobbyv1.TableStatus_TABLE_STATUS_PLAYING, "finished": lobbyv1.TableStatus_TABLE_STATUS_FINISHED}
)

// Proto checks the filter and returns it as the lobby's TableFilter; its
// errors are *Error with CodeInvalid.
func (f LobbyFilter) Proto() (*lobbyv1.TableFilter, error) {
	out := &lobbyv1.TableFilter{HasFreeSeat: f.FreeSeat, FreeOnly: f.FreeOnly, WithoutPassword: f.WithoutPassword, MaxStake: f.MaxStake}
	var err error
	if out.Game, err = filterEnum("game", f.Game, filterGames); err != nil {
		return nil, err
	}
	if out.ClassicVariant, err = filterEnum("variant", f.Variant, filterVariants); err != nil {
		return nil, err
	}
	if out.Status, err = filterEnum("status", f.Status, filterStatuses); err != nil {
		return nil, err
	}
	if f.MaxStake < 0 {
		return nil, Errorf(CodeInvalid, "max_stake is a number of coins, not %d", f.MaxStake)
	}
	return out, nil
}

func filterEnum[E ~int32](name, v string, values map[string]E) (E, error) {
	if v == "" {
		return 0, nil
	}
	v = strings.ToLower(v)
	e, ok := values[v]
	if !ok {
		return 0, Errorf(CodeInvalid, "%s=%q is not one of the allowed values", name, clip(v))
	}
	return e, nil
}
