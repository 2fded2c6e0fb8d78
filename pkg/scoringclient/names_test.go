package scoringclient_test

import (
	"errors"
	"strings"
	"testing"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
)

func TestCheckID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"42", true}, {"0b5e-uuid-like_id.x", true}, {"", false}, {"a{b", false}, {"a}b", false},
		{"a:b", false}, {"a b", false}, {"a\nb", false}, {strings.Repeat("x", scoringclient.MaxIDLen), true},
		{strings.Repeat("x", scoringclient.MaxIDLen+1), false},
	} {
		err := scoringclient.CheckID("game", tc.id)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, scoringclient.ErrBadID)) {
			t.Errorf("CheckID(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
	}
}

func TestEntryTime(t *testing.T) {
	for _, tc := range []struct {
		id string
		ms int64
		ok bool
	}{{"1700000000123-0", 1700000000123, true}, {"1700000000123", 1700000000123, true}, {"x-1", 0, false}, {"", 0, false}} {
		got, ok := scoringclient.EntryTime(tc.id)
		if ok != tc.ok || (ok && got.UnixMilli() != tc.ms) {
			t.Errorf("EntryTime(%q) = %v %v", tc.id, got, ok)
		}
	}
}

func TestInputEntry_RefusesIDsThatBreakKeys(t *testing.T) {
	if _, err := scoringclient.InputEntry(&scoringv1.ScoringInput{TableId: "t{1}", GameId: "g"}); !errors.Is(err, scoringclient.ErrBadID) {
		t.Fatalf("want ErrBadID, got %v", err)
	}
	e, err := scoringclient.InputEntry(&scoringv1.ScoringInput{TableId: "t1", GameId: "g1"})
	if err != nil || e.Stream != scoringclient.HandsStream {
		t.Fatalf("%+v %v", e, err)
	}
}
