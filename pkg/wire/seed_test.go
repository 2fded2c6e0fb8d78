package wire

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// The seed frame (docs/fair-play.md): a hand number and exactly 32 bytes,
// else invalid_message before anything reaches the table.
func TestParse_RefusesBadSeedFrames(t *testing.T) {
	for _, tt := range []struct {
		name  string
		frame string
		code  string
	}{
		{"seed hand not a number", cmdJSON(`"seed":{"hand_index":"x","seed":"` + seed32 + `"}`), CodeBadJSON},
		{"seed hand negative", cmdJSON(`"seed":{"hand_index":-1,"seed":"` + seed32 + `"}`), CodeBadJSON},
		{"seed missing", cmdJSON(`"seed":{"hand_index":0}`), CodeInvalid},
		{"seed of 31 bytes", cmdJSON(`"seed":{"hand_index":0,"seed":"` + strings.Repeat("A", 42) + `=="}`), CodeInvalid},
		{"seed of 33 bytes", cmdJSON(`"seed":{"hand_index":0,"seed":"` + strings.Repeat("A", 44) + `"}`), CodeInvalid},
		{"seed not base64", cmdJSON(`"seed":{"hand_index":0,"seed":"` + strings.Repeat("!", 44) + `"}`), CodeBadJSON},
		{"seed without table", `{"command":{"seed":{"hand_index":0,"seed":"` + seed32 + `"}}}`, CodeInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.frame), JSON)
			if got := CodeOf(err); got != tt.code {
				t.Fatalf("Parse(%s) code = %q (%v), want %q", tt.frame, got, err, tt.code)
			}
		})
	}
}

func TestCommand_MapsTheSeedFrame(t *testing.T) {
	for _, tt := range []struct {
		name  string
		frame string
		want  *tablev1.Command
	}{
		{"seed", cmdJSON(`"seed":{"hand_index":7,"seed":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}`),
			&tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{HandIndex: 7,
				Seed: []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}}}}},
		{"seed of hand 0", cmdJSON(`"seed":{"seed":"` + strings.Repeat("A", 43) + `="}`),
			&tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{Seed: make([]byte, 32)}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.frame), JSON)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.frame, err)
			}
			if FrameType(m) != TypeSeed {
				t.Fatalf("a seed frame is a %q", FrameType(m))
			}
			got, err := Command(m.GetCommand(), "p1", CommandID("p1", "k1"))
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
