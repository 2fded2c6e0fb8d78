package wire

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// cmdJSON is a text frame of a table command at table t1.
func cmdJSON(body string) string { return `{"command":{"table":"t1",` + body + `}}` }

var seed32 = strings.Repeat("q", 43) + "=" // base64 of 32 bytes

func TestParse_RefusesBadFramesWithTheirCode(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		code  string
	}{
		{"not JSON", `{"ping":`, CodeBadJSON},
		{"JSON array", `[1,2]`, CodeBadJSON},
		{"two objects", `{"ping":{}}{"ping":{}}`, CodeBadJSON},
		{"wrong field type", cmdJSON(`"bid":{"tricks":"two"}`), CodeBadJSON},
		{"no member", `{"ref":"r1"}`, CodeUnknownType},
		{"unknown member", `{"teleport":{}}`, CodeUnknownType},
		{"command without a command", `{"command":{"table":"t1"}}`, CodeUnknownType},
		{"hello without token", `{"hello":{}}`, CodeInvalid},
		{"hello with a huge token", `{"hello":{"token":"` + strings.Repeat("x", MaxTokenLen+1) + `"}}`, CodeInvalid},
		{"join without table", `{"join":{}}`, CodeInvalid},
		{"table with brace", `{"join":{"table":"a}b"}}`, CodeInvalid},
		{"table with slash", `{"join":{"table":"a/b"}}`, CodeInvalid},
		{"table too long", `{"join":{"table":"` + strings.Repeat("x", MaxIDLen+1) + `"}}`, CodeInvalid},
		{"bad last event id", `{"join":{"table":"t1","last_event_id":"12-x"}}`, CodeInvalid},
		{"unjoin without table", `{"unjoin":{}}`, CodeInvalid},
		{"command without table", `{"command":{"resign":{}}}`, CodeInvalid},
		{"bid too high", cmdJSON(`"bid":{"tricks":10}`), CodeInvalid},
		{"trump without suit", cmdJSON(`"trump":{}`), CodeInvalidSuit},
		{"trump unknown suit", cmdJSON(`"trump":{"trump":9}`), CodeInvalidSuit},
		{"trump suit name unknown", cmdJSON(`"trump":{"trump":"SUIT_STARS"}`), CodeInvalidSuit}, // an unknown name reads as unset
		{"play no card", cmdJSON(`"play":{}`), CodeInvalidCard},
		{"play unknown card number", cmdJSON(`"play":{"card":99}`), CodeInvalidCard},
		{"play joker undeclared", cmdJSON(`"play":{"card":"CARD_JOKER_1"}`), CodeInvalidJoker},
		{"joker without action", cmdJSON(`"play":{"card":"CARD_JOKER_1","declaration":{}}`), CodeInvalidJoker},
		{"highest without suit", cmdJSON(`"play":{"card":"CARD_JOKER_2","declaration":{"action":"JOKER_ACTION_HIGHEST"}}`), CodeInvalidJoker},
		{"give with no-suit", cmdJSON(`"play":{"card":"CARD_JOKER_2","declaration":{"action":"JOKER_ACTION_GIVE","suit":"SUIT_NONE"}}`), CodeInvalidJoker},
		{"take with suit", cmdJSON(`"play":{"card":"CARD_JOKER_2","declaration":{"action":"JOKER_ACTION_TAKE","suit":"SUIT_HEARTS"}}`), CodeInvalidJoker},
		{"declaration on plain card", cmdJSON(`"play":{"card":"CARD_ACE_OF_SPADES","declaration":{"action":"JOKER_ACTION_TAKE"}}`), CodeInvalidJoker},
		{"move with a short seed", cmdJSON(`"trump":{"trump":"SUIT_HEARTS"},"attached_seed":{"hand_index":1,"seed":"q83v"}`), CodeInvalid},
		{"move with a hand and no seed", cmdJSON(`"play":{"card":"CARD_ACE_OF_SPADES"},"attached_seed":{"hand_index":1}`), CodeInvalid},
		{"seed on a command that is no move", cmdJSON(`"resign":{},"attached_seed":{"hand_index":1,"seed":"` + seed32 + `"}`), CodeInvalid},
		{"sit seat 4", cmdJSON(`"sit":{"seat":4}`), CodeInvalid},
		{"lobby filter unknown game", `{"lobby":{"watch":true,"filter":{"game":7}}}`, CodeInvalid},
		{"lobby filter unknown status", `{"lobby":{"watch":true,"filter":{"status":9}}}`, CodeInvalid},
		{"lobby filter negative stake", `{"lobby":{"watch":true,"filter":{"max_stake":"-1"}}}`, CodeInvalid},
		{"lobby negative limit", `{"lobby":{"watch":true,"limit":-1}}`, CodeBadJSON},
		{"cmd with space", cmdJSON(`"resign":{},"cmd":"a b"`), CodeInvalid},
		{"ref too long", `{"ping":{},"ref":"` + strings.Repeat("r", MaxRefLen+1) + `"}`, CodeInvalid},
		{"ref with a control character", `{"ping":{},"ref":"a\u001b[2Jb"}`, CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.frame), JSON)
			if got := CodeOf(err); got != tt.code {
				t.Fatalf("Parse(%s) code = %q (%v), want %q", tt.frame, got, err, tt.code)
			}
		})
	}
}

// A binary frame is refused with bad_frame when it is no ClientFrame, and
// with the codes of its members' checks otherwise, as a text frame is.
func TestParse_BinaryFramesAreCheckedAsTextOnes(t *testing.T) {
	if _, err := Parse([]byte{0xff, 0xff, 0xff}, Binary); CodeOf(err) != CodeBadFrame {
		t.Fatalf("garbage: %v, want bad_frame", err)
	}
	for _, tt := range []struct {
		frame *gatewayv1.ClientFrame
		code  string
	}{
		{&gatewayv1.ClientFrame{}, CodeUnknownType},
		{&gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{Table: "t1",
			Command: &gatewayv1.TableCommand_Bid{Bid: &tablev1.BidCommand{Tricks: 12}}}}}, CodeInvalid},
		{&gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{Table: "t1",
			Command: &gatewayv1.TableCommand_Play{Play: &tablev1.PlayCardCommand{Card: commonv1.Card(77)}}}}}, CodeInvalidCard},
		{&gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Join{Join: &gatewayv1.Join{Table: "a b"}}}, CodeInvalid},
		{&gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Ping{Ping: &gatewayv1.Ping{}}}, ""},
	} {
		b, err := proto.Marshal(tt.frame)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(b, Binary); CodeOf(err) != tt.code || (tt.code == "") != (err == nil) {
			t.Errorf("Parse(%v) = %v, want code %q", tt.frame, err, tt.code)
		}
	}
	// A member this gateway does not know (a newer client's) is dropped:
	// the frame is refused as unknown_type, not as malformed.
	unknown := []byte{0xfa, 0x01, 0x00} // field 31, an empty message
	if _, err := Parse(unknown, Binary); CodeOf(err) != CodeUnknownType {
		t.Fatalf("a frame of an unknown member: %v, want unknown_type", err)
	}
}

func TestParse_KeepsRefOfAnInvalidFrame(t *testing.T) {
	m, err := Parse([]byte(`{"ref":"r7","command":{"table":"t1","bid":{"tricks":11}}}`), JSON)
	if err == nil || m.GetRef() != "r7" {
		t.Fatalf("ref = %q, err = %v; want r7 and an error", m.GetRef(), err)
	}
}

func TestCommand_MapsEveryTableCommand(t *testing.T) {
	seed := bytes.Repeat([]byte{0xaa}, 32) // seed32
	joker := func(c commonv1.Card, a tablev1.JokerAction, s commonv1.Suit) *tablev1.PlayCardCommand {
		return &tablev1.PlayCardCommand{Card: c, Declaration: &tablev1.JokerDeclaration{Action: a, Suit: s}}
	}
	tests := []struct {
		name  string
		frame string
		typ   string
		want  *tablev1.Command
	}{
		{"bid", cmdJSON(`"bid":{"tricks":3}`), TypeBid,
			&tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 3}}}},
		{"pass", cmdJSON(`"bid":{}`), TypeBid,
			&tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 0}}}},
		{"trump hearts", cmdJSON(`"trump":{"trump":"SUIT_HEARTS"}`), TypeTrump,
			&tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit_SUIT_HEARTS}}}},
		{"no trump", cmdJSON(`"trump":{"trump":"SUIT_NONE"}`), TypeTrump,
			&tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit_SUIT_NONE}}}},
		{"ace of spades", cmdJSON(`"play":{"card":"CARD_ACE_OF_SPADES"}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_ACE_OF_SPADES}}}},
		{"a card by number", cmdJSON(`"play":{"card":36}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_ACE_OF_CLUBS}}}},
		{"joker takes", cmdJSON(`"play":{"card":"CARD_JOKER_1","declaration":{"action":"JOKER_ACTION_TAKE"}}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: joker(commonv1.Card_CARD_JOKER_1, tablev1.JokerAction_JOKER_ACTION_TAKE, 0)}}},
		{"joker discards", cmdJSON(`"play":{"card":"CARD_JOKER_2","declaration":{"action":"JOKER_ACTION_DISCARD"}}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: joker(commonv1.Card_CARD_JOKER_2, tablev1.JokerAction_JOKER_ACTION_DISCARD, 0)}}},
		{"joker demands highest diamond", cmdJSON(`"play":{"card":"CARD_JOKER_2","declaration":{"action":"JOKER_ACTION_HIGHEST","suit":"SUIT_DIAMONDS"}}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: joker(commonv1.Card_CARD_JOKER_2, tablev1.JokerAction_JOKER_ACTION_HIGHEST, commonv1.Suit_SUIT_DIAMONDS)}}},
		{"joker gives clubs", cmdJSON(`"play":{"card":"CARD_JOKER_1","declaration":{"action":"JOKER_ACTION_GIVE","suit":"SUIT_CLUBS"}}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: joker(commonv1.Card_CARD_JOKER_1, tablev1.JokerAction_JOKER_ACTION_GIVE, commonv1.Suit_SUIT_CLUBS)}}},
		{"resign", cmdJSON(`"resign":{}`), TypeResign,
			&tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}}},
		{"leave", cmdJSON(`"leave":{}`), TypeLeave,
			&tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}}},
		{"sit", cmdJSON(`"sit":{"seat":2}`), TypeSit,
			&tablev1.Command{Command: &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: 2}}}},
		{"bid with the seed of the hand ahead", cmdJSON(`"bid":{"tricks":1},"attached_seed":{"hand_index":4,"seed":"` + seed32 + `"}`), TypeBid,
			&tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: 1}},
				AttachedSeed: &tablev1.ClientSeedCommand{HandIndex: 4, Seed: seed}}},
		{"play with the seed of the hand ahead", cmdJSON(`"play":{"card":"CARD_ACE_OF_SPADES"},"attachedSeed":{"handIndex":2,"seed":"` + seed32 + `"}`), TypePlay,
			&tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_ACE_OF_SPADES}},
				AttachedSeed: &tablev1.ClientSeedCommand{HandIndex: 2, Seed: seed}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.frame), JSON)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.frame, err)
			}
			if typ := FrameType(m); typ != tt.typ {
				t.Fatalf("FrameType = %q, want %q", typ, tt.typ)
			}
			tt.want.CommandId, tt.want.TableId, tt.want.PlayerId = "p1/k1", "t1", "p1"
			got, err := Command(m.GetCommand(), "p1", CommandID("p1", "k1"))
			if err != nil || !proto.Equal(got, tt.want) {
				t.Fatalf("Command = %v, %v; want %v", got, err, tt.want)
			}
			// The same frame in binary maps the same.
			bin, _ := proto.Marshal(m)
			mb, err := Parse(bin, Binary)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := Command(mb.GetCommand(), "p1", "p1/k1"); err != nil || !proto.Equal(got, tt.want) {
				t.Fatalf("binary: Command = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestFrameType_NamesEveryFrame(t *testing.T) {
	for frame, want := range map[string]string{
		`{"hello":{"token":"x"}}`:  TypeHello,
		`{"join":{"table":"t"}}`:   TypeJoin,
		`{"unjoin":{"table":"t"}}`: TypeUnjoin,
		`{"ping":{}}`:              TypePing,
		`{"lobby":{"watch":true}}`: TypeLobby,
		`{"lobby":{}}`:             TypeLobby,
		cmdJSON(`"seed":{"hand_index":3,"seed":"` + seed32 + `"}`): TypeSeed,
	} {
		m, err := Parse([]byte(frame), JSON)
		if err != nil || FrameType(m) != want {
			t.Errorf("%s: %q, %v; want %q", frame, FrameType(m), err, want)
		}
	}
}

func TestParseCard_EveryCardOfTheDeckRoundTrips(t *testing.T) {
	for c := cards.Card(0); c < cards.DeckSize; c++ {
		got, err := ParseCard(c.String())
		if err != nil || got != c {
			t.Fatalf("ParseCard(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
		pc := cardpb.Card(c)
		if int(pc) != int(c)+1 {
			t.Fatalf("cardpb.Card(%v) = %d, want %d", c, pc, int(c)+1)
		}
		byName, err := ParseCard(pc.String())
		if err != nil || byName != c {
			t.Fatalf("ParseCard(%q) = %v, %v; want %v", pc.String(), byName, err, c)
		}
	}
	if cardpb.Card(cards.Joker1) != commonv1.Card_CARD_JOKER_1 || cardpb.Card(cards.Joker2) != commonv1.Card_CARD_JOKER_2 {
		t.Fatal("jokers map to the wrong enum values")
	}
	if _, err := ParseCard("CARD_UNSPECIFIED"); err == nil {
		t.Fatal("CARD_UNSPECIFIED parsed as a card")
	}
	if _, err := ParseCard("6S"); CodeOf(err) != CodeInvalidCard {
		t.Fatal("the black six (a joker's slot) parsed as a card")
	}
}

func TestParseJoker_ReadsTheWordsPeopleType(t *testing.T) {
	for _, tt := range []struct {
		d    JokerDecl
		want *tablev1.JokerDeclaration
	}{
		{JokerDecl{Action: "take"}, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}},
		{JokerDecl{Action: "DISCARD"}, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_DISCARD}},
		{JokerDecl{Action: "highest", Suit: "d"}, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: commonv1.Suit_SUIT_DIAMONDS}},
		{JokerDecl{Action: "give", Suit: "C"}, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_GIVE, Suit: commonv1.Suit_SUIT_CLUBS}},
	} {
		got, err := ParseJoker(tt.d)
		if err != nil || !proto.Equal(got, tt.want) {
			t.Errorf("ParseJoker(%+v) = %v, %v; want %v", tt.d, got, err, tt.want)
		}
	}
	for _, d := range []JokerDecl{{Action: "eat"}, {Action: "highest"}, {Action: "take", Suit: "H"}} {
		if _, err := ParseJoker(d); CodeOf(err) != CodeInvalidJoker {
			t.Errorf("ParseJoker(%+v) = %v, want invalid_joker", d, err)
		}
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

// FuzzParse: whatever a client sends, in either encoding, Parse refuses it
// with a code or accepts a frame that names its type, whose table command
// maps, and which the same check accepts again after a round trip through
// the other encoding.
func FuzzParse(f *testing.F) {
	f.Add([]byte(cmdJSON(`"play":{"card":"CARD_JOKER_1","declaration":{"action":"JOKER_ACTION_HIGHEST","suit":"SUIT_SPADES"}}`)), false)
	f.Add([]byte(cmdJSON(`"bid":{"tricks":3},"cmd":"x"`)), false)
	f.Add([]byte(`{"join":{"table":"t","last_event_id":"1-0"}}`), false)
	f.Add([]byte(cmdJSON(`"seed":{"hand_index":3,"seed":"`+seed32+`"}`)), false)
	bin, _ := proto.Marshal(&gatewayv1.ClientFrame{Ref: "r", Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{
		Table: "t", Command: &gatewayv1.TableCommand_Sit{Sit: &tablev1.SitCommand{Seat: 1}}}}})
	f.Add(bin, true)
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		enc := JSON
		if binary {
			enc = Binary
		}
		m, err := Parse(data, enc)
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if FrameType(m) == "" {
			t.Fatalf("an accepted frame has no type: %v", m)
		}
		if c := m.GetCommand(); c != nil {
			if _, err := Command(c, "p", "p/c"); err != nil {
				t.Fatalf("valid %s frame does not map: %v", FrameType(m), err)
			}
		}
		var again []byte
		if enc == JSON {
			again, err = proto.Marshal(m)
		} else {
			again, err = protojson.Marshal(m)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(again, 1-enc); err != nil {
			t.Fatalf("%v accepted, but not in the other encoding: %v", m, err)
		}
	})
}
