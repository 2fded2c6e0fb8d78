package golden

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

func TestEncode_DecodesToTheSameMessagesAndRefusesGarbage(t *testing.T) {
	msgs := []*tablev1.Event{{Seq: 1, TableId: "t1"}, {}, {Seq: 3, CausedBy: strings.Repeat("x", 70000)}}
	data, err := Encode(msgs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, func() *tablev1.Event { return &tablev1.Event{} })
	if err != nil || Diff(got, msgs) != "" {
		t.Fatalf("decoded %d messages (%v): %s", len(got), err, Diff(got, msgs))
	}
	if _, err := Decode(data[:len(data)/2], func() *tablev1.Event { return &tablev1.Event{} }); err == nil {
		t.Fatal("half a file decoded")
	}
	if _, err := Decode([]byte("not gzip"), func() *tablev1.Event { return &tablev1.Event{} }); err == nil {
		t.Fatal("garbage decoded")
	}
}

func TestDiff_NamesTheFirstDifference(t *testing.T) {
	a := []*tablev1.Event{{Seq: 1}, {Seq: 2}}
	if d := Diff(a, []*tablev1.Event{{Seq: 1}, {Seq: 3}}); !strings.Contains(d, "message 1") {
		t.Errorf("Diff = %q", d)
	}
	if d := Diff(a, a[:1]); !strings.Contains(d, "made 2 messages, the file has 1") {
		t.Errorf("Diff = %q", d)
	}
	if d := Diff(a, []*tablev1.Event{proto.CloneOf(a[0]), proto.CloneOf(a[1])}); d != "" {
		t.Errorf("Diff of equal messages = %q", d)
	}
}

// TestGames_EverySetHasItsGamesAndEveryFileReads: the owners wrote every
// set, and every file decodes (a file cut short or of another type would
// fail here, not in a reader's test).
func TestGames_EverySetHasItsGamesAndEveryFileReads(t *testing.T) {
	for _, tt := range []struct {
		set  string
		kind Kind
	}{
		{SetWire, KindEvents}, {SetWireNamed, KindScoring}, {SetWireNamed, KindSheets}, {SetPremia, KindSheets},
		{SetRecord, KindPublicEvents}, {SetModel, KindEvents},
	} {
		games := Games(tt.set, tt.kind)
		if len(games) == 0 {
			t.Errorf("%s has no %s", tt.set, tt.kind)
		}
		for _, g := range games {
			var n int
			var err error
			switch tt.kind {
			case KindScoring:
				var in []*scoringv1.ScoringInput
				in, err = ScoringInputs(tt.set, g)
				n = len(in)
			case KindSheets:
				var s []*scoringv1.SheetUpdate
				s, err = Sheets(tt.set, g)
				n = len(s)
			default:
				var evs []*tablev1.Event
				evs, err = Events(tt.set, g, tt.kind)
				n = len(evs)
			}
			if err != nil || n == 0 {
				t.Errorf("%s/%s (%s): %d messages, %v", tt.set, g, tt.kind, n, err)
			}
		}
	}
	if _, err := Events(SetWire, "no-such-game", KindEvents); !errors.Is(err, ErrNoGame) {
		t.Error("a game that is not there read")
	}
}
