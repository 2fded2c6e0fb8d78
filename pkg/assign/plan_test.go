package assign

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func live(ids ...string) []Member {
	ms := make([]Member, len(ids))
	for i, id := range ids {
		ms[i] = Member{ID: id, Ready: true}
	}
	return ms
}

func TestPlan_HealthyOwnerNeverMoves(t *testing.T) {
	owners := map[string]string{"t1": "a", "t2": "a", "t3": "a", "t4": "b"}
	moves, unplaced := Plan(live("a", "b", "c"), owners)
	if len(moves) != 0 || len(unplaced) != 0 {
		t.Fatalf("moves %v unplaced %v, want none: a healthy owner keeps its tables", moves, unplaced)
	}
}

func TestPlan_DeadOwnersTablesGoToLeastLoaded(t *testing.T) {
	members := []Member{{ID: "a", Ready: true}, {ID: "b", Ready: true}, {ID: "dead", Ready: false}}
	owners := map[string]string{"t1": "a", "t2": "a", "t3": "dead", "t4": "dead", "t5": "dead"}
	moves, _ := Plan(members, owners)
	want := []Move{{"t3", "dead", "b"}, {"t4", "dead", "b"}, {"t5", "dead", "a"}}
	if !reflect.DeepEqual(moves, want) {
		t.Fatalf("moves = %v, want %v", moves, want)
	}
}

func TestPlan_MissingMemberCountsAsDead(t *testing.T) {
	moves, _ := Plan(live("a"), map[string]string{"t1": "gone"})
	if len(moves) != 1 || moves[0].To != "a" {
		t.Fatalf("moves = %v, want t1 to a", moves)
	}
}

func TestPlan_DrainingMemberHandsOverAndTakesNothing(t *testing.T) {
	members := []Member{{ID: "a", Ready: true, Draining: true}, {ID: "b", Ready: true}}
	moves, _ := Plan(members, map[string]string{"t1": "a", "t2": "a", "new": ""})
	for _, m := range moves {
		if m.To != "b" {
			t.Fatalf("move %v: a draining member must not receive tables", m)
		}
	}
	if len(moves) != 3 {
		t.Fatalf("moves = %v, want all three tables on b", moves)
	}
}

func TestPlan_CapacityIsRespected(t *testing.T) {
	members := []Member{{ID: "a", Ready: true, Capacity: 1}, {ID: "b", Ready: true, Capacity: 1}}
	moves, unplaced := Plan(members, map[string]string{"t1": "", "t2": "", "t3": ""})
	if len(moves) != 2 || !reflect.DeepEqual(unplaced, []string{"t3"}) {
		t.Fatalf("moves %v unplaced %v, want two placed and t3 unplaced", moves, unplaced)
	}
}

func TestPlan_NoLiveMembersPlacesNothing(t *testing.T) {
	moves, unplaced := Plan([]Member{{ID: "a"}}, map[string]string{"t1": "a"})
	if len(moves) != 0 || len(unplaced) != 1 {
		t.Fatalf("moves %v unplaced %v", moves, unplaced)
	}
}

func TestPlaceNew_LeastLoadedTieBrokenByID(t *testing.T) {
	owners := map[string]string{"t1": "b", "t2": "c"}
	got, ok := PlaceNew(live("c", "b", "a"), owners)
	if !ok || got != "a" {
		t.Fatalf("PlaceNew = %q, %v; want a (empty)", got, ok)
	}
	owners["t3"] = "a"
	got, _ = PlaceNew(live("c", "b", "a"), owners)
	if got != "a" {
		t.Fatalf("PlaceNew = %q; want a (all equal, lowest ID)", got)
	}
	if _, ok := PlaceNew(nil, owners); ok {
		t.Fatal("PlaceNew with no members must fail")
	}
}

// Property: after applying a plan every table has a healthy owner (when
// capacity allows), loads differ by at most one among members that received
// tables, and the plan is deterministic.
func TestPlan_PropertyEveryTableGetsAHealthyOwner(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		var members []Member
		for i := range 1 + r.IntN(6) {
			members = append(members, Member{ID: fmt.Sprint("m", i), Ready: r.IntN(4) != 0, Draining: r.IntN(6) == 0})
		}
		owners := map[string]string{}
		for i := range r.IntN(60) {
			owners[fmt.Sprint("t", i)] = fmt.Sprint("m", r.IntN(8))
		}
		moves, unplaced := Plan(members, owners)
		again, _ := Plan(members, owners)
		if !reflect.DeepEqual(moves, again) {
			t.Fatalf("iter %d: plan not deterministic", iter)
		}
		healthy := map[string]bool{}
		for _, m := range members {
			if m.Ready && !m.Draining {
				healthy[m.ID] = true
			}
		}
		after := map[string]string{}
		for k, v := range owners {
			after[k] = v
		}
		for _, m := range moves {
			if !healthy[m.To] {
				t.Fatalf("iter %d: moved %s to unhealthy %s", iter, m.Table, m.To)
			}
			if healthy[owners[m.Table]] {
				t.Fatalf("iter %d: moved %s away from healthy owner", iter, m.Table)
			}
			after[m.Table] = m.To
		}
		if len(healthy) > 0 && len(unplaced) > 0 {
			t.Fatalf("iter %d: unplaced %v with healthy members and no capacity limit", iter, unplaced)
		}
		for table, owner := range after {
			if len(healthy) > 0 && !healthy[owner] {
				t.Fatalf("iter %d: %s left on %s", iter, table, owner)
			}
		}
	}
}

func BenchmarkPlan_10kTablesOneDeadRunner(b *testing.B) {
	members := live("a", "b", "c", "d", "e", "f", "g", "h")
	owners := map[string]string{}
	for i := range 10000 {
		owners[fmt.Sprint("t", i)] = fmt.Sprint(string(rune('a' + i%9)))
	}
	b.ReportAllocs()
	for b.Loop() {
		Plan(members, owners)
	}
}

func TestNextExpiry_IsTheSoonestEndOfALiveMember(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []Member
		want    time.Duration
		ok      bool
	}{
		{"no members: no end", nil, 0, false},
		{"no member with a known end", live("a", "b"), 0, false},
		{"the soonest of the live members", []Member{
			{ID: "a", Ready: true, LiveFor: 2 * time.Second},
			{ID: "b", Ready: true, LiveFor: 700 * time.Millisecond},
			{ID: "c", Ready: true},
		}, 700 * time.Millisecond, true},
		{"a member that is not live has ended already: it does not count", []Member{
			{ID: "a", Ready: true, LiveFor: 2 * time.Second},
			{ID: "dead", LiveFor: time.Millisecond},
		}, 2 * time.Second, true},
		{"a draining member's end counts (its tables may still be moving)", []Member{
			{ID: "a", Ready: true, LiveFor: 2 * time.Second},
			{ID: "d", Ready: true, Draining: true, LiveFor: time.Second},
		}, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := NextExpiry(tc.members)
			if d != tc.want || ok != tc.ok {
				t.Fatalf("NextExpiry = %v, %v; want %v, %v", d, ok, tc.want, tc.ok)
			}
		})
	}
}
