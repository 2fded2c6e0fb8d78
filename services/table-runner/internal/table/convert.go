package table

import (
	"slices"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
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

// legalPlay is one engine move of a card: its joker declaration when
// hasDecl.
type legalPlay struct {
	card    cards.Card
	hasDecl bool
	action  tablev1.JokerAction
	suit    commonv1.Suit // a led joker's named suit
}

// buildLegal is the LegalMoves of an engine's moves: trumps, bids and
// plays (moves of one card together, a joker once per declaration). It is
// built with every player's turn, so it allocates in blocks — the plays
// and the declarations each in one array — not per card.
func buildLegal(seat int, phase tablev1.Phase, trumps []cards.Suit, bids []uint32, plays []legalPlay) *tablev1.LegalMoves {
	lm := &tablev1.LegalMoves{Seat: uint32(seat), Phase: phase}
	if len(trumps) > 0 {
		lm.Trumps = make([]commonv1.Suit, len(trumps))
		for i, s := range trumps {
			lm.Trumps[i] = cardpb.Suit(s)
		}
	}
	if len(bids) > 0 {
		lm.Bids = slices.Clone(bids)
	}
	if len(plays) == 0 {
		return lm
	}
	nCards, nDecls := 0, 0
	for i := range plays {
		p := &plays[i]
		if i == 0 || p.card != plays[i-1].card {
			nCards++
		}
		if p.hasDecl {
			nDecls++
		}
	}
	vals := make([]tablev1.LegalPlay, nCards)
	lm.Plays = make([]*tablev1.LegalPlay, 0, nCards)
	var decls []tablev1.JokerDeclaration
	var dptrs []*tablev1.JokerDeclaration
	if nDecls > 0 {
		decls, dptrs = make([]tablev1.JokerDeclaration, nDecls), make([]*tablev1.JokerDeclaration, nDecls)
	}
	d := 0
	for i := range plays {
		p := &plays[i]
		if i == 0 || p.card != plays[i-1].card {
			lp := &vals[len(lm.Plays)]
			lp.Card = cardpb.Card(p.card)
			lm.Plays = append(lm.Plays, lp)
		}
		if p.hasDecl {
			decls[d].Action, decls[d].Suit = p.action, p.suit
			dptrs[d] = &decls[d]
			lp := lm.Plays[len(lm.Plays)-1]
			if lp.Declarations == nil {
				lp.Declarations = dptrs[d:d:nDecls] // this card's declarations follow one another
			}
			lp.Declarations = append(lp.Declarations, dptrs[d])
			d++
		}
	}
	return lm
}
