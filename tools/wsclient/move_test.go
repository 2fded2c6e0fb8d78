package wsclient

import (
	"errors"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

func TestParseMove_ReadsWhatPeopleTypeAndWritesItBack(t *testing.T) {
	tests := []struct{ in, out string }{
		{"bid 2", "bid 2"},
		{"  BID 0 ", "bid 0"},
		{"trump h", "trump H"},
		{"trump none", "trump none"},
		{"play AS", "play AS"},
		{"play 10h", "play 10H"},
		{"p th", "play 10H"},
		{"play JK1 take", "play JK1 take"},
		{"play jk2 highest d", "play JK2 highest D"},
		{"play JK1 give C", "play JK1 give C"},
		{"play CARD_KING_OF_CLUBS", "play KC"},
	}
	for _, tt := range tests {
		m, err := ParseMove(tt.in)
		if err != nil {
			t.Fatalf("ParseMove(%q): %v", tt.in, err)
		}
		if got := m.String(); got != tt.out {
			t.Fatalf("ParseMove(%q) = %q, want %q", tt.in, got, tt.out)
		}
		again, err := ParseMove(m.String())
		if err != nil || again.String() != tt.out {
			t.Fatalf("round trip of %q: %v %v", tt.out, again, err)
		}
	}
	if m, _ := ParseMove("trump none"); m.Suit != cards.NoSuit {
		t.Fatal("trump none is not NoSuit")
	}
}

func TestParseMove_RefusesWhatTheGatewayWouldRefuse(t *testing.T) {
	for _, in := range []string{"", "bid", "bid x", "bid 10", "bid -1", "trump X", "trump", "play 6S",
		"play JK1", "play JK1 eat", "play JK1 highest", "play AS take", "play JK1 take H", "dance AS", "play JK1 give H x"} {
		if _, err := ParseMove(in); !errors.Is(err, ErrBadMove) {
			t.Errorf("ParseMove(%q) = %v, want ErrBadMove", in, err)
		}
	}
}
