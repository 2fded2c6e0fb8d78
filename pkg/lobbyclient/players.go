package lobbyclient

import "strings"

// GuestPrefix starts the player id of every guest session (docs/protocol.md:
// "u-<hex> for accounts, g-<hex> for guests"). The gateway issues the ids;
// the lobby reads this prefix to keep guests to free tables (they have no
// Domino Coin account).
const GuestPrefix = "g-"

// IsGuest reports whether playerID is a guest's.
func IsGuest(playerID string) bool { return strings.HasPrefix(playerID, GuestPrefix) }
