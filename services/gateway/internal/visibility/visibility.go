package visibility

import tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"

// NoSeat is the seat of a viewer who only watches.
const NoSeat = -1

// Viewer is who a client is at a table at the moment of an event.
type Viewer struct {
	// PlayerID is the authenticated player; never empty for a real client.
	PlayerID string
	// Seat is the seat the player holds, or NoSeat.
	Seat int
}

// Allows reports whether v may receive an event with visibility vis.
func Allows(vis *tablev1.Visibility, v Viewer) bool {
	if vis == nil || v.PlayerID == "" {
		return false
	}
	switch vis.GetAudience() {
	case tablev1.Audience_AUDIENCE_PUBLIC:
		return true
	case tablev1.Audience_AUDIENCE_SEAT:
		return v.Seat >= 0 && uint32(v.Seat) == vis.GetSeat()
	case tablev1.Audience_AUDIENCE_PLAYER:
		return vis.GetPlayerId() != "" && vis.GetPlayerId() == v.PlayerID
	default:
		return false
	}
}
