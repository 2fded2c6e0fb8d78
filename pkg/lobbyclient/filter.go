package lobbyclient

import lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"

// Match reports whether t passes every set field of f (a nil filter passes
// everything).
func Match(f *lobbyv1.TableFilter, t *lobbyv1.TableSummary) bool {
	if f == nil {
		return true
	}
	s := t.GetSettings()
	if f.GetGame() != lobbyv1.Game_GAME_UNSPECIFIED && s.GetGame() != f.GetGame() {
		return false
	}
	if f.GetClassicVariant() != lobbyv1.ClassicVariant_CLASSIC_VARIANT_UNSPECIFIED &&
		(s.GetGame() != lobbyv1.Game_GAME_CLASSIC || s.GetClassicVariant() != f.GetClassicVariant()) {
		return false
	}
	if f.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_UNSPECIFIED && t.GetStatus() != f.GetStatus() {
		return false
	}
	if f.GetHasFreeSeat() && FreeSeats(t) == 0 {
		return false
	}
	if f.GetWithoutPassword() && s.GetHasPassword() {
		return false
	}
	switch k := s.GetStake().GetKind().(type) {
	case *lobbyv1.Stake_Free:
	case *lobbyv1.Stake_Coins:
		if f.GetFreeOnly() || (f.GetMaxStake() > 0 && k.Coins.GetAmount() > f.GetMaxStake()) {
			return false
		}
	default:
		// No stake at all reads as free (the lobby always stores one); a
		// stake of a kind this reader does not know is never shown as free.
		if s.GetStake() != nil {
			return false
		}
	}
	return true
}

// FreeSeats counts the seats nobody (player or bot) occupies.
func FreeSeats(t *lobbyv1.TableSummary) int {
	n := 0
	for _, s := range t.GetSeats() {
		if s.GetPlayerId() == "" && !s.GetBot() {
			n++
		}
	}
	return n
}
