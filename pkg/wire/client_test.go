package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"google.golang.org/protobuf/proto"
)

func TestParse_RefusesBadFramesWithTheirCode(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		code  string
	}{
		{"not JSON", `{"type":`, CodeBadJSON},
		{"JSON array", `[1,2]`, CodeBadJSON},
		{"two objects", `{"type":"ping"}{"type":"ping"}`, CodeBadJSON},
		{"wrong field type", `{"type":"bid","table":"t1","tricks":"two"}`, CodeBadJSON},
		{"missing type", `{"table":"t1"}`, CodeInvalid},
		{"unknown type", `{"type":"teleport"}`, CodeUnknownType},
		{"hello without token", `{"type":"hello"}`, CodeInvalid},
		{"join without table", `{"type":"join"}`, CodeInvalid},
		{"table with brace", `{"type":"join","table":"a}b"}`, CodeInvalid},
		{"table with slash", `{"type":"join","table":"a/b"}`, CodeInvalid},
		{"table too long", `{"type":"join","table":"` + strings.Repeat("x", MaxIDLen+1) + `"}`, CodeInvalid},
		{"bad last event id", `{"type":"join","table":"t1","last_event_id":"12-x"}`, CodeInvalid},
		{"bid without tricks", `{"type":"bid","table":"t1"}`, CodeInvalid},
		{"bid too high", `{"type":"bid","table":"t1","tricks":10}`, CodeInvalid},
		{"trump without suit", `{"type":"trump","table":"t1"}`, CodeInvalidSuit},
		{"trump bad suit", `{"type":"trump","table":"t1","suit":"X"}`, CodeInvalidSuit},
		{"play no card", `{"type":"play","table":"t1"}`, CodeInvalidCard},
		{"play black six", `{"type":"play","table":"t1","card":"6S"}`, CodeInvalidCard},
		{"play joker undeclared", `{"type":"play","table":"t1","card":"JK1"}`, CodeInvalidJoker},
		{"joker bad action", `{"type":"play","table":"t1","card":"JK1","joker":{"action":"eat"}}`, CodeInvalidJoker},
		{"highest without suit", `{"type":"play","table":"t1","card":"JK2","joker":{"action":"highest"}}`, CodeInvalidJoker},
		{"take with suit", `{"type":"play","table":"t1","card":"JK2","joker":{"action":"take","suit":"H"}}`, CodeInvalidJoker},
		{"declaration on plain card", `{"type":"play","table":"t1","card":"AS","joker":{"action":"take"}}`, CodeInvalidJoker},
		{"move with a seed and no hand", `{"type":"bid","table":"t1","tricks":1,"seed":"abababababababababababababababababababababababababababababababab"}`, CodeInvalid},
		{"move with a hand and no seed", `{"type":"play","table":"t1","card":"AS","hand":1}`, CodeInvalid},
		{"move with a short seed", `{"type":"trump","table":"t1","suit":"H","hand":1,"seed":"abcd"}`, CodeInvalid},
		{"seed on a frame that is no move", `{"type":"resign","table":"t1","hand":1,"seed":"abababababababababababababababababababababababababababababababab"}`, CodeInvalid},
		{"sit without seat", `{"type":"sit","table":"t1"}`, CodeInvalid},
		{"sit seat 4", `{"type":"sit","table":"t1","seat":4}`, CodeInvalid},
		{"lobby without watch", `{"type":"lobby"}`, CodeInvalid},
		{"lobby filter unknown game", `{"type":"lobby","watch":true,"filter":{"game":"poker"}}`, CodeInvalid},
		{"lobby filter unknown status", `{"type":"lobby","watch":true,"filter":{"status":"sleeping"}}`, CodeInvalid},
		{"lobby filter negative stake", `{"type":"lobby","watch":true,"filter":{"max_stake":-1}}`, CodeInvalid},
		{"lobby negative limit", `{"type":"lobby","watch":true,"limit":-1}`, CodeBadJSON},
		{"cmd with space", `{"type":"resign","table":"t1","cmd":"a b"}`, CodeInvalid},
		{"ref too long", `{"type":"ping","ref":"` + strings.Repeat("r", MaxRefLen+1) + `"}`, CodeInvalid},
		{"ref with a control character", `{"type":"ping","ref":"a\u001b[2Jb"}`, CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.frame))
			if got := CodeOf(err); got != tt.code {
				t.Fatalf("Parse(%s) code = %q (%v), want %q", tt.frame, got, err, tt.code)
			}
		})
	}
}

func TestParse_KeepsRefOfAnInvalidFrame(t *testing.T) {
	m, err := Parse([]byte(`{"type":"bid","table":"t1","ref":"r7"}`))
	if err == nil || m.Ref != "r7" {
		t.Fatalf("ref = %q, err = %v; want r7 and an error", m.Ref, err)
	}
}

func TestCommand_MapsEveryTableCommand(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	tests := []struct {
		name string
		msg  ClientMsg
		want *tablev1.Command
	}{
		{"bid", ClientMsg{Type: TypeBid, Table: "t1", Tricks: u(3)},
			&tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 3}}}},
		{"pass", ClientMsg{Type: TypeBid, Table: "t1", Tricks: u(0)},
			&tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 0}}}},
		{"trump hearts", ClientMsg{Type: TypeTrump, Table: "t1", Suit: "h"},
			&tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit_SUIT_HEARTS}}}},
		{"no trump", ClientMsg{Type: TypeTrump, Table: "t1", Suit: "none"},
			&tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit_SUIT_NONE}}}},
		{"ace of spades", ClientMsg{Type: TypePlay, Table: "t1", Card: "AS"},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_ACE_OF_SPADES}}}},
		{"ten of hearts", ClientMsg{Type: TypePlay, Table: "t1", Card: "10H"},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_TEN_OF_HEARTS}}}},
		{"enum name", ClientMsg{Type: TypePlay, Table: "t1", Card: "CARD_KING_OF_CLUBS"},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_KING_OF_CLUBS}}}},
		{"joker takes", ClientMsg{Type: TypePlay, Table: "t1", Card: "JK1", Joker: &JokerDecl{Action: "take"}},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_1,
				Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}}}}},
		{"joker discards", ClientMsg{Type: TypePlay, Table: "t1", Card: "jk2", Joker: &JokerDecl{Action: "DISCARD"}},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_2,
				Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_DISCARD}}}}},
		{"joker demands highest diamond", ClientMsg{Type: TypePlay, Table: "t1", Card: "JK2", Joker: &JokerDecl{Action: "highest", Suit: "D"}},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_2,
				Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: commonv1.Suit_SUIT_DIAMONDS}}}}},
		{"joker gives clubs", ClientMsg{Type: TypePlay, Table: "t1", Card: "JK1", Joker: &JokerDecl{Action: "give", Suit: "c"}},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_1,
				Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_GIVE, Suit: commonv1.Suit_SUIT_CLUBS}}}}},
		{"resign", ClientMsg{Type: TypeResign, Table: "t1"},
			&tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}}},
		{"leave", ClientMsg{Type: TypeLeave, Table: "t1"},
			&tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}}},
		{"sit", ClientMsg{Type: TypeSit, Table: "t1", Seat: u(2)},
			&tablev1.Command{Command: &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: 2}}}},
		{"bid with the seed of the hand ahead", ClientMsg{Type: TypeBid, Table: "t1", Tricks: u(1), Hand: u(4), Seed: strings.Repeat("ab", 32)},
			&tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 1}},
				AttachedSeed: &tablev1.ClientSeedCommand{HandIndex: 4, Seed: bytes.Repeat([]byte{0xab}, 32)}}},
		{"play with the seed of the hand ahead", ClientMsg{Type: TypePlay, Table: "t1", Card: "AS", Hand: u(2), Seed: strings.Repeat("01", 32)},
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_ACE_OF_SPADES}},
				AttachedSeed: &tablev1.ClientSeedCommand{HandIndex: 2, Seed: bytes.Repeat([]byte{0x01}, 32)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.msg)
			m, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%s): %v", raw, err)
			}
			got, err := Command(m, "p1", CommandID("p1", "k1"))
			if err != nil {
				t.Fatal(err)
			}
			tt.want.CommandId, tt.want.TableId, tt.want.PlayerId = "p1/k1", "t1", "p1"
			if !proto.Equal(got, tt.want) {
				t.Fatalf("Command = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCommand_RefusesNonTableMessages(t *testing.T) {
	for _, typ := range []string{TypeHello, TypeJoin, TypeUnjoin, TypePing, TypeLobby} {
		m := ClientMsg{Type: typ, Table: "t1"}
		if m.IsTableCommand() {
			t.Errorf("%s is a table command", typ)
		}
		if _, err := Command(m, "p1", "c"); err == nil {
			t.Errorf("Command(%s) succeeded", typ)
		}
	}
}

func TestParseCard_EveryCardOfTheDeckRoundTrips(t *testing.T) {
	for c := cards.Card(0); c < cards.DeckSize; c++ {
		got, err := ParseCard(c.String())
		if err != nil || got != c {
			t.Fatalf("ParseCard(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
		pc := CardToProto(c)
		if int(pc) != int(c)+1 {
			t.Fatalf("CardToProto(%v) = %d, want %d", c, pc, int(c)+1)
		}
		byName, err := ParseCard(pc.String())
		if err != nil || byName != c {
			t.Fatalf("ParseCard(%q) = %v, %v; want %v", pc.String(), byName, err, c)
		}
	}
	if CardToProto(cards.Joker1) != commonv1.Card_CARD_JOKER_1 || CardToProto(cards.Joker2) != commonv1.Card_CARD_JOKER_2 {
		t.Fatal("jokers map to the wrong enum values")
	}
	if _, err := ParseCard("CARD_UNSPECIFIED"); err == nil {
		t.Fatal("CARD_UNSPECIFIED parsed as a card")
	}
}

func TestCommandID_ScopesTheClientKeyToThePlayer(t *testing.T) {
	if CommandID("p1", "k") == CommandID("p2", "k") {
		t.Fatal("two players' equal keys give the same command id")
	}
}

func TestValidStreamID(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "0-0": true, "1700000000000-12": true,
		"": false, "-": false, "1-": false, "a-1": false, "1-2-3": false, "$": false, ">": false,
	} {
		if got := ValidStreamID(s); got != want {
			t.Errorf("ValidStreamID(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"type":"play","table":"t1","card":"JK1","joker":{"action":"highest","suit":"S"}}`))
	f.Add([]byte(`{"type":"bid","table":"t","tricks":3,"cmd":"x"}`))
	f.Add([]byte(`{"type":"join","table":"t","last_event_id":"1-0"}`))
	f.Add([]byte(`{"type":"seed","table":"t","hand":3,"seed":"` + strings.Repeat("0f", 32) + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if m.IsTableCommand() {
			if _, err := Command(m, "p", "p/c"); err != nil {
				t.Fatalf("valid %s frame does not map: %v", m.Type, err)
			}
		}
	})
}
