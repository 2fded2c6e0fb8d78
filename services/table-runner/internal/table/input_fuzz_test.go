package table

import (
	"bytes"
	"testing"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// FuzzUnmarshalInput: the runner's log format never panics on any bytes,
// and a version 2 input it accepts round-trips (the entropy included, or
// its absence).
func FuzzUnmarshalInput(f *testing.F) {
	cmd := &tablev1.Command{CommandId: "c1", PlayerId: "p0", TableId: "t1",
		Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{HandIndex: 3, Seed: make([]byte, 32)}}}
	with := Tick(t0)
	with.Entropy = entropyOf(1, 1)
	for _, in := range []Input{CommandInput(cmd, "5-1", t0), Tick(t0), with, Away("p1", t0)} {
		b, err := MarshalInput(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{inputVersionV1, byte(InputTick), 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := UnmarshalInput(data)
		if err != nil || data[0] != inputVersion {
			return
		}
		b, err := MarshalInput(in)
		if err != nil {
			t.Fatalf("an accepted input does not encode: %v", err)
		}
		// Lengths are uvarints, which have more than one form: the
		// encoding is compared after a second round trip.
		again, err := UnmarshalInput(b)
		if err != nil {
			t.Fatalf("a re-encoded input is refused: %v", err)
		}
		b2, _ := MarshalInput(again)
		if !bytes.Equal(b, b2) || again.Entropy != in.Entropy || again.Kind != in.Kind || !again.At.Equal(in.At) {
			t.Fatalf("input %x does not round-trip: %x then %x", data, b, b2)
		}
	})
}
