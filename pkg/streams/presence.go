package streams

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Presence reports travel on a table's command stream beside the commands:
// entries without data whose header says who came or went. Gateways write
// them (a player's first connection to a table, their last one closing); the
// table-runner turns them into the table's away/back inputs. This file is the
// one definition of that layout for both sides.
const (
	headerPresence = "presence"
	headerPlayer   = "player"
	presenceAway   = "away"
	presenceBack   = "back"
)

// ErrBadPresence is returned for an entry that claims to be a presence report
// but is not a well-formed one.
var ErrBadPresence = errors.New("streams: malformed presence report")

// PresenceEntry is the report that player went away (away true) or came back
// to table tableID.
func PresenceEntry(tableID, player string, away bool) Entry {
	what := presenceBack
	if away {
		what = presenceAway
	}
	return Entry{Stream: TableCommands(tableID), Header: map[string]string{headerPresence: what, headerPlayer: player}}
}

// ParsePresence reads a presence report. isPresence is false for an ordinary
// command entry; err is ErrBadPresence for a presence entry without a player
// or with an unknown value.
func ParsePresence(m Message) (player string, away, isPresence bool, err error) {
	what, ok := m.Header[headerPresence]
	if !ok {
		return "", false, false, nil
	}
	player = m.Header[headerPlayer]
	if player == "" || (what != presenceAway && what != presenceBack) {
		return "", false, true, ErrBadPresence
	}
	return player, what == presenceAway, true, nil
}

// NowMsLua defines now_ms() for a Lua script: the time in Unix ms by
// Redis's clock (TIME), or ARGV[1] when that is not empty (a test's clock).
// Scripts that score presence by time share it, so that gateways and
// runners whose own clocks disagree still agree on what has expired.
const NowMsLua = `
local function now_ms()
  if ARGV[1] ~= '' then return tonumber(ARGV[1]) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

// connectedScript: KEYS[1] = a TablePresence key; ARGV[1] = "" (Redis's
// clock). How many of its connections are live, by the clock the gateways
// score them with.
var connectedScript = redis.NewScript(NowMsLua + `
return redis.call('ZCOUNT', KEYS[1], now_ms(), '+inf')`)

// Connected reports whether player has a live connection to the table, by
// the gateways' presence set (TablePresence) and Redis's clock.
func Connected(ctx context.Context, rdb redis.Scripter, tableID, player string) (bool, error) {
	n, err := connectedScript.Run(ctx, rdb, []string{TablePresence(tableID, player)}, "").Int()
	if err != nil {
		return false, fmt.Errorf("streams: presence of %s at %s: %w", player, tableID, err)
	}
	return n > 0, nil
}
