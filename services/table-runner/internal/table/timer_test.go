package table

import (
	"testing"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// TestTimer_RidesOnTheStepsLastPublicEvent: over random games, every move
// timer is on the public event that ends its step, or is a timer_started
// event of its own only when no public event could carry it; and with each
// timer split off into an event of its own the events are exactly those of
// a table that keeps its timers separate (a version 1 table).
func TestTimer_RidesOnTheStepsLastPublicEvent(t *testing.T) {
	games := 60
	if testing.Short() {
		games = 10
	}
	carried, own := 0, 0
	for g := range games {
		d := newDriver(t, uint64(7000+g))
		twin, err := Restore(state(t, d.h.t))
		if err != nil {
			t.Fatal(err)
		}
		twin.ownTimers = true
		for steps := 0; steps < 400 && !d.h.t.Over(); steps++ {
			from := len(d.all)
			d.step()
			for _, l := range d.all[from:] {
				for i, e := range l.evs {
					switch {
					case e.GetTimer() != nil:
						carried++
						if e.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_PUBLIC {
							t.Fatalf("game %d: a timer on a %s event for %v", g, kindOf(e), e.GetVisibility())
						}
						if e.GetTimerStarted() != nil {
							t.Fatalf("game %d: a timer_started event carries a timer", g)
						}
					case e.GetTimerStarted() != nil:
						own++
						if i > 0 && l.evs[i-1].GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC && l.evs[i-1].GetTimer() == nil {
							t.Fatalf("game %d: a timer_started event after a public %s that could carry it: %v", g, kindOf(l.evs[i-1]), kinds(l.evs))
						}
					}
				}
				old, _ := twin.Apply(l.in)
				if got := splitTimers(l.evs); !sameButSeq(got, old) {
					t.Fatalf("game %d: input %v\nsplit: %v\nv1:    %v", g, l.in, kinds(got), kinds(old))
				}
			}
		}
		if !bytesEqualButVersion(t, d.h.t, twin) {
			t.Fatalf("game %d: the twin tables differ beyond their version and event numbering", g)
		}
	}
	if carried == 0 || own == 0 {
		t.Fatalf("the games never exercised both forms: %d carried, %d own", carried, own)
	}
}

// splitTimers turns every event's timer into a timer_started event that
// follows it, as a version 1 table writes them.
func splitTimers(evs []*tablev1.Event) []*tablev1.Event {
	var out []*tablev1.Event
	for _, e := range evs {
		if e.GetTimer() == nil {
			out = append(out, e)
			continue
		}
		body := proto.CloneOf(e)
		body.Timer = nil
		timer := proto.CloneOf(e)
		timer.Timer, timer.SeedAccepted = nil, nil
		timer.Event = &tablev1.Event_TimerStarted{TimerStarted: e.GetTimer()}
		out = append(out, body, timer)
	}
	return out
}

func sameButSeq(a, b []*tablev1.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := proto.CloneOf(a[i]), proto.CloneOf(b[i])
		x.Seq, y.Seq = 0, 0
		if !proto.Equal(x, y) {
			return false
		}
	}
	return true
}

// bytesEqualButVersion compares two tables' snapshots but for the version
// byte and the event counter (a version 1 table numbers its separate timers
// too). The twin keeps its timers apart and commits hands ahead, which no
// snapshot version encodes: both are compared as today's tables.
func bytesEqualButVersion(tb testing.TB, a, b *Table) bool {
	tb.Helper()
	ca, err := Restore(state(tb, a))
	if err != nil {
		tb.Fatal(err)
	}
	b.ownTimers = false
	cb, err := Restore(state(tb, b))
	b.ownTimers = true
	if err != nil {
		tb.Fatal(err)
	}
	ca.seq, cb.seq = 0, 0
	return string(state(tb, ca)) == string(state(tb, cb))
}
