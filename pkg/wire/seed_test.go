package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// The seed frame (docs/fair-play.md): a hand number and exactly 64 hex
// digits, else invalid_message before anything reaches the table.
func TestParse_RefusesBadSeedFrames(t *testing.T) {
	for _, tt := range []struct {
		name  string
		frame string
		code  string
	}{
		{"seed without hand", `{"type":"seed","table":"t1","seed":"` + strings.Repeat("ab", 32) + `"}`, CodeInvalid},
		{"seed hand not a number", `{"type":"seed","table":"t1","hand":"1","seed":"` + strings.Repeat("ab", 32) + `"}`, CodeBadJSON},
		{"seed hand negative", `{"type":"seed","table":"t1","hand":-1,"seed":"` + strings.Repeat("ab", 32) + `"}`, CodeBadJSON},
		{"seed missing", `{"type":"seed","table":"t1","hand":0}`, CodeInvalid},
		{"seed 63 hex digits", `{"type":"seed","table":"t1","hand":0,"seed":"` + strings.Repeat("a", 63) + `"}`, CodeInvalid},
		{"seed 66 hex digits", `{"type":"seed","table":"t1","hand":0,"seed":"` + strings.Repeat("a", 66) + `"}`, CodeInvalid},
		{"seed not hex", `{"type":"seed","table":"t1","hand":0,"seed":"` + strings.Repeat("g", 64) + `"}`, CodeInvalid},
		{"seed base64", `{"type":"seed","table":"t1","hand":0,"seed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`, CodeInvalid},
		{"seed without table", `{"type":"seed","hand":0,"seed":"` + strings.Repeat("ab", 32) + `"}`, CodeInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.frame))
			if got := CodeOf(err); got != tt.code {
				t.Fatalf("Parse(%s) code = %q (%v), want %q", tt.frame, got, err, tt.code)
			}
		})
	}
}

func TestCommand_MapsTheSeedFrame(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	for _, tt := range []struct {
		name string
		msg  ClientMsg
		want *tablev1.Command
	}{
		{"seed", ClientMsg{Type: TypeSeed, Table: "t1", Hand: u(7), Seed: "000102030405060708090a0b0c0d0e0f101112131415161718191A1B1C1D1E1F"},
			&tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{HandIndex: 7,
				Seed: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}}}}},
		{"seed of hand 0", ClientMsg{Type: TypeSeed, Table: "t1", Hand: u(0), Seed: strings.Repeat("00", 32)},
			&tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{Seed: make([]byte, 32)}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(tt.msg)
			m, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%s): %v", raw, err)
			}
			if !m.IsTableCommand() {
				t.Fatal("a seed is not a table command")
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
