package classic

import "testing"

func TestStructure_StandardIs24HandsIn4Pulkas(t *testing.T) {
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 9, 9, 9}
	if Standard.Hands() != len(want) {
		t.Fatalf("hands = %d, want %d", Standard.Hands(), len(want))
	}
	for h, n := range want {
		if got := Standard.CardsInHand(h); got != n {
			t.Errorf("hand %d: %d cards, want %d", h, got, n)
		}
	}
	pulkaOf := []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3}
	for h, p := range pulkaOf {
		if got := Standard.PulkaOf(h); got != p {
			t.Errorf("hand %d in pulka %d, want %d", h, got, p)
		}
	}
}

func TestStructure_NinesIs16NineCardHands(t *testing.T) {
	if Nines.Hands() != 16 {
		t.Fatalf("hands = %d, want 16", Nines.Hands())
	}
	for h := range 16 {
		if Nines.CardsInHand(h) != 9 || Nines.PulkaOf(h) != h/4 {
			t.Errorf("hand %d: %d cards in pulka %d", h, Nines.CardsInHand(h), Nines.PulkaOf(h))
		}
	}
	if first, end := Nines.PulkaHands(2); first != 8 || end != 12 {
		t.Errorf("pulka III = [%d,%d), want [8,12)", first, end)
	}
}
