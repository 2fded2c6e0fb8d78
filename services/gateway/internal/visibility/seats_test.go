package visibility

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/golden"
	"github.com/pulka/pulka/pkg/wire"
)

// TestFolds_TheHeadsOfRealGamesSeatAsTheirEvents folds every event of many
// recorded games (seats taken, left, handed to bots and back, resyncs)
// twice: whole, and as the gateway reads it, wire.EventHead with Folds —
// in turn, and each event alone onto an empty seating and a stranger's.
// The seatings must agree after every event, and every kind Folds names
// must have come up. A seating event Apply reads but Folds leaves out
// fails it.
func TestFolds_TheHeadsOfRealGamesSeatAsTheirEvents(t *testing.T) {
	seen := map[protoreflect.Name]int{}
	games := golden.Games(golden.SetWire, golden.KindEvents)
	if len(games) == 0 {
		t.Fatal("no recorded games")
	}
	for _, g := range games {
		evs, err := golden.Events(golden.SetWire, g, golden.KindEvents)
		if err != nil {
			t.Fatal(err)
		}
		var whole, heads Seats
		for _, ev := range evs {
			data, err := proto.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			head, err := wire.EventHead(data, Folds)
			if err != nil {
				t.Fatalf("%s seq %d: %v", g, ev.GetSeq(), err)
			}
			// Also onto seatings the game never had (a view over strangers).
			for _, base := range []Seats{{}, {"x", "y", "z", "w"}} {
				a, b := base, base
				if a.Apply(ev) {
					seen[kind(ev)]++
				}
				if b.Apply(head); a != b {
					t.Fatalf("%s seq %d (%s) onto %q: seating %q from the head, %q from the event", g, ev.GetSeq(), kind(ev), base, b, a)
				}
			}
			whole.Apply(ev)
			heads.Apply(head)
			if whole != heads {
				t.Fatalf("%s seq %d (%s): seating %q from the heads, %q from the events", g, ev.GetSeq(), kind(ev), heads, whole)
			}
		}
	}
	for _, k := range []protoreflect.Name{"game_started", "player_seated", "player_left", "seat_taken_by_bot", "view_synced"} {
		if seen[k] == 0 {
			t.Errorf("no %s changed a seating: the games did not test it (seen %v)", k, seen)
		}
	}
}

// TestFolds_NoOtherKindMovesASeat: an event of any kind Folds leaves out,
// even one whose message is set, changes no seating; and Folds names
// nothing but kinds.
func TestFolds_NoOtherKindMovesASeat(t *testing.T) {
	full := Seats{"a", "b", "c", "d"}
	ev := &tablev1.Event{}
	m := ev.ProtoReflect()
	kinds := m.Descriptor().Oneofs().ByName("event").Fields()
	for i := range kinds.Len() {
		fd := kinds.Get(i)
		e := &tablev1.Event{}
		e.ProtoReflect().Set(fd, e.ProtoReflect().NewField(fd))
		s := full
		if s.Apply(e) && !Folds(fd.Number()) {
			t.Errorf("%s (%d) moves a seat but Folds leaves it out", fd.Name(), fd.Number())
		}
	}
	// Folds names kinds only: any other field would have every event
	// decoded whole.
	for n := protowire.Number(1); n <= 1000; n++ {
		if Folds(n) && kinds.ByNumber(n) == nil {
			t.Errorf("Folds names field %d, which is not a kind of event", n)
		}
	}
}

func kind(ev *tablev1.Event) protoreflect.Name {
	m := ev.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("event")); fd != nil {
		return fd.Name()
	}
	return ""
}
