package table

import (
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

func public() *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC}
}

func toSeat(s int) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: uint32(s)}
}

func toPlayer(p string) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PLAYER, PlayerId: p}
}

// addPlay adds card c, and for a joker its declaration d, to plays: the
// engines list a joker once per declaration, LegalMoves once with all of
// them. Moves of one card come together.
func addPlay(plays []*tablev1.LegalPlay, c cards.Card, d *tablev1.JokerDeclaration) []*tablev1.LegalPlay {
	if n := len(plays); n > 0 && d != nil && plays[n-1].GetCard() == cardpb.Card(c) {
		plays[n-1].Declarations = append(plays[n-1].Declarations, d)
		return plays
	}
	p := &tablev1.LegalPlay{Card: cardpb.Card(c)}
	if d != nil {
		p.Declarations = []*tablev1.JokerDeclaration{d}
	}
	return append(plays, p)
}
