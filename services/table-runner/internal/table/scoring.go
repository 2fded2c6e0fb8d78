package table

import (
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// ScoringInputs returns what scoring must hear about evs: the game's start,
// each finished hand and the game's end, keyed by (game id, kind, hand
// index) so that publishing them again after a replay is harmless. It
// derives everything from the events, so a runner that restored a table can
// call it on the replayed events too. Trace contexts are the runner's to set.
func (t *Table) ScoringInputs(evs []*tablev1.Event) []*scoringv1.ScoringInput {
	var out []*scoringv1.ScoringInput
	for _, ev := range evs {
		in := &scoringv1.ScoringInput{TableId: ev.GetTableId(), GameId: ev.GetGameId()}
		switch e := ev.GetEvent().(type) {
		case *tablev1.Event_GameStarted:
			ps := make([]*scoringv1.SheetPlayer, len(e.GameStarted.GetSeats()))
			for i, sp := range e.GameStarted.GetSeats() {
				ps[i] = &scoringv1.SheetPlayer{Seat: sp.GetSeat(), PlayerId: sp.GetPlayerId(), DisplayName: sp.GetDisplayName()}
			}
			in.Input = &scoringv1.ScoringInput_GameStarted{GameStarted: &scoringv1.GameStarted{
				Settings: e.GameStarted.GetSettings(), Players: ps}}
		case *tablev1.Event_HandEnded:
			h := e.HandEnded
			n := uint32(japanese.TricksPerHand)
			if t.set.Game == tablesettings.Classic {
				n = uint32(t.set.Classic.Variant.CardsInHand(int(h.GetHandIndex())))
			}
			seats := make([]*scoringv1.SeatTricks, len(h.GetResults()))
			for i, r := range h.GetResults() {
				seats[i] = &scoringv1.SeatTricks{Seat: r.GetSeat(), Bid: r.GetBid(), Tricks: r.GetTricks()}
			}
			in.Input = &scoringv1.ScoringInput_HandResult{HandResult: &scoringv1.HandResult{
				HandIndex: h.GetHandIndex(), CardsPerSeat: n, Seats: seats}}
		case *tablev1.Event_GameEnded:
			g := &scoringv1.GameEnded{
				Completed:   e.GameEnded.GetReason() == tablev1.GameEndReason_GAME_END_REASON_COMPLETED,
				HandsPlayed: e.GameEnded.GetHandsPlayed(),
			}
			if !g.Completed && t.set.Game == tablesettings.Japanese {
				for _, p := range e.GameEnded.GetPlacings() {
					if p.GetPlace() > 1 {
						loser := p.GetSeat()
						g.LoserSeat = &loser
					}
				}
			}
			in.Input = &scoringv1.ScoringInput_GameEnded{GameEnded: g}
		default:
			continue
		}
		out = append(out, in)
	}
	return out
}
