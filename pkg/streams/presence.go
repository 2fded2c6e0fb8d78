package streams

import "errors"

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
