package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/cards"
)

// owner is the runner the assignment names for the table ("" if none yet).
func owner(s *stack, tableID string) string {
	o, _ := s.Redis().HGet(context.Background(), assign.OwnersKey, tableID).Result()
	return o
}

// TestMigration_SIGKILLOfTheOwnerMidHand_TheGameFinishesOnTheOtherRunner
// runs its own stack with two runners (the kill must not disturb the other
// tests' tables). Four WebSocket players play a nines game; in the middle
// of the second hand the process of the runner owning the table is
// SIGKILLed while the players keep sending moves. The table moves to the
// other runner (a higher lease epoch) and the game finishes; every command
// the players sent is in the log exactly once, no move was made by the
// server (nothing sent was lost), the log replays purely, the sheet equals
// the pure replay, and scoring stored each hand once and wrote one
// standings entry (premia and moshla once: the first pulka, which the kill
// cuts in two, is played to a plan that gives seat 0 its premia).
func TestMigration_SIGKILLOfTheOwnerMidHand_TheGameFinishesOnTheOtherRunner(t *testing.T) {
	t.Parallel()
	killOwnerMidHand(t, startStack(t, "kill", 2))
}

// killOwnerMidHand is
// TestMigration_SIGKILLOfTheOwnerMidHand_TheGameFinishesOnTheOtherRunner on
// the stack s (of two runners at least; other tables may move too).
func killOwnerMidHand(t *testing.T, s *stack) {
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions := []session{s.guest(t), s.guest(t), s.guest(t), s.guest(t)}
	clients := seatPlayers(t, s, tableSpec{moveTime: time.Minute, name: "e2e kill"}, sessions, &tableID)
	// The first pulka, which the kill cuts in two, is played to a plan that
	// gives seat 0 its premia (and so the others their moshla): random
	// play rarely makes one, and they are what must be written once.
	start := startedTable(t, s, tableID)
	plan, err := newPremiaPlanner(s.Redis(), tableID, classicScoring(start.GetSettings()).Variant, 0, cards.NewRNG(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		c.playPlan(tableID, plan)
		c.autoPlay(tableID, true)
	}

	// Mid-hand: the second hand's tenth card.
	c := clients[0]
	second := c.awaitHand(30*time.Second, tableID, 1, "the second hand")
	c.awaitCards(second.N, 30*time.Second, tableID, 10, "ten cards of the second hand")
	victim := owner(s, tableID)
	proc := s.Runner(victim)
	if proc == nil {
		t.Fatalf("the table's owner %q is not one of the stack's runners", victim)
	}
	proc.Kill()
	killedAt := time.Now()
	t.Logf("SIGKILLed %s, the owner of %s", victim, tableID)

	for _, c := range clients {
		c.awaitEvent(0, 60*time.Second, tableID, "the end of the game after the kill", gameEnded)
	}
	g := verifyGame(t, s, tableID, clients)
	checkAllMovesByPlayers(t, g.log, clients)
	for i, c := range clients {
		if why := c.scriptMissed(tableID); why != "" {
			t.Errorf("seat %d left the plan: %s", i, why)
		}
	}
	if why := plan.failed(); why != "" {
		t.Errorf("the plan failed: %s", why)
	}
	// The premia and moshla of the pulka the kill cut in two: seat 0 made
	// every hand, and the sheet (equal to the pure replay, checked above)
	// has its premia and the others' moshla; checkSheetStream saw each
	// written once and never changed.
	p := flatReplay(g.res).Pulkas[0]
	t.Logf("first pulka: premia %v, moshla %v", p.Premia, p.Moshla)
	if p.Premia[0] <= 0 || p.Moshla[1] >= 0 {
		t.Errorf("first pulka: premia %v, moshla %v; want a premia for seat 0 and a moshla for seat 1", p.Premia, p.Moshla)
	}

	// The kill happened in the middle of a hand, and a higher epoch wrote
	// everything after it.
	lastOld, firstNew := epochHandover(t, g.log)
	oldEpoch := lastOld.Ev.GetEpoch()
	if now := owner(s, tableID); now == victim {
		t.Errorf("the table is still assigned to the killed runner %s", victim)
	}
	recovered := firstNew.Ev.GetOccurredAt().AsTime()
	t.Logf("SIGKILL → first event of the new owner (epoch %d → %d): %v", oldEpoch, firstNew.Ev.GetEpoch(),
		recovered.Sub(killedAt).Round(time.Millisecond))

	// Scoring stored each hand once: 16 hands of nines, one sheet per
	// version, one standings entry (checked by verifyGame).
	n, err := s.Redis().HLen(context.Background(), scoringHandsKey(tableID, g.gameID)).Result()
	if err != nil || n != 16 {
		t.Errorf("scoring stored %d hands (err %v), want 16", n, err)
	}
}

// epochHandover checks that a table's log changed owner once, in the middle
// of a hand: the first owner's epoch wrote a prefix of the log, a higher
// epoch everything after it (no event of the old owner after the new
// owner's first: the fence held), and the old owner's last event ended no
// hand. It returns the old owner's last event and the new owner's first.
func epochHandover(t *testing.T, log []logEntry) (lastOld, firstNew *logEntry) {
	t.Helper()
	oldEpoch := log[0].Ev.GetEpoch()
	for i := range log {
		e := &log[i]
		switch {
		case e.Ev.GetEpoch() < oldEpoch:
			t.Errorf("epoch went back: %s", describe(e.ID, e.Ev))
		case e.Ev.GetEpoch() == oldEpoch:
			if firstNew != nil {
				t.Errorf("the old epoch wrote after the new one: %s", describe(e.ID, e.Ev))
			}
			lastOld = e
		case firstNew == nil:
			firstNew = e
		}
	}
	if firstNew == nil {
		t.Fatalf("every event has the first epoch %d: the table never moved", oldEpoch)
	}
	if k := kind(lastOld.Ev); k == "hand_ended" || k == "pulka_ended" || k == "game_ended" {
		t.Errorf("the fault was not mid-hand: the old owner's last event is %s", describe(lastOld.ID, lastOld.Ev))
	}
	return lastOld, firstNew
}
