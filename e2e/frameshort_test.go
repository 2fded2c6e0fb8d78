package e2e

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// clientFrame builds a pulka.gateway.v1 ClientFrame from the tests'
// shorthand: a flat map with "type" naming the frame (wire.Type…) and its
// fields in players' notation ("card": "AS", "suit": "H", "joker":
// {"action": "take"}, "hand" and "seed" as hex), so that the scenarios
// read as moves. It panics on what the shorthand cannot say: a test that
// sends a malformed frame writes its bytes (sendRaw).
func clientFrame(m map[string]any) *gatewayv1.ClientFrame {
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) uint32 {
		switch v := m[k].(type) {
		case int:
			return uint32(v)
		case uint32:
			return v
		}
		return 0
	}
	f := &gatewayv1.ClientFrame{Ref: str("ref")}
	tc := &gatewayv1.TableCommand{Table: str("table"), Cmd: str("cmd")}
	switch t := str("type"); t {
	case wire.TypeHello:
		f.Frame = &gatewayv1.ClientFrame_Hello{Hello: &gatewayv1.Hello{Token: str("token")}}
		return f
	case wire.TypeJoin:
		f.Frame = &gatewayv1.ClientFrame_Join{Join: &gatewayv1.Join{Table: str("table"), LastEventId: str("last_event_id")}}
		return f
	case wire.TypeUnjoin:
		f.Frame = &gatewayv1.ClientFrame_Unjoin{Unjoin: &gatewayv1.Unjoin{Table: str("table")}}
		return f
	case wire.TypePing:
		f.Frame = &gatewayv1.ClientFrame_Ping{Ping: &gatewayv1.Ping{}}
		return f
	case wire.TypeLobby:
		w, _ := m["watch"].(bool)
		f.Frame = &gatewayv1.ClientFrame_Lobby{Lobby: &gatewayv1.WatchLobby{Watch: w}}
		return f
	case wire.TypeBid:
		tc.Command = &gatewayv1.TableCommand_Bid{Bid: &tablev1.BidCommand{Tricks: num("tricks")}}
	case wire.TypeTrump:
		s := cards.NoSuit
		if !strings.EqualFold(str("suit"), "none") {
			var err error
			if s, err = cards.ParseSuit(str("suit")); err != nil {
				panic(err)
			}
		}
		tc.Command = &gatewayv1.TableCommand_Trump{Trump: &tablev1.ChooseTrumpCommand{Trump: cardpb.Suit(s)}}
	case wire.TypePlay:
		c, err := wire.ParseCard(str("card"))
		if err != nil {
			panic(err)
		}
		pc := &tablev1.PlayCardCommand{Card: cardpb.Card(c)}
		if j, ok := m["joker"].(map[string]string); ok {
			if pc.Declaration, err = wire.ParseJoker(wire.JokerDecl{Action: j["action"], Suit: j["suit"]}); err != nil {
				panic(err)
			}
		}
		tc.Command = &gatewayv1.TableCommand_Play{Play: pc}
	case wire.TypeResign:
		tc.Command = &gatewayv1.TableCommand_Resign{Resign: &tablev1.ResignCommand{}}
	case wire.TypeLeave:
		tc.Command = &gatewayv1.TableCommand_Leave{Leave: &tablev1.LeaveCommand{}}
	case wire.TypeSit:
		tc.Command = &gatewayv1.TableCommand_Sit{Sit: &tablev1.SitCommand{Seat: num("seat")}}
	case wire.TypeSeed:
		tc.Command = &gatewayv1.TableCommand_Seed{Seed: seedOf(m)}
	default:
		panic(fmt.Sprintf("no shorthand for a %q frame", t))
	}
	if _, ok := m["seed"]; ok && str("type") != wire.TypeSeed {
		tc.AttachedSeed = seedOf(m)
	}
	f.Frame = &gatewayv1.ClientFrame_Command{Command: tc}
	return f
}

func seedOf(m map[string]any) *tablev1.ClientSeedCommand {
	h, _ := m["hand"].(int)
	s, _ := m["seed"].(string)
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return &tablev1.ClientSeedCommand{HandIndex: uint32(h), Seed: b}
}
