package assign

import (
	"cmp"
	"slices"
	"time"
)

// Member is one table-runner as the membership source sees it.
type Member struct {
	ID string
	// Ready is true while the runner is alive and accepting tables
	// (heartbeat fresh, or pod Ready).
	Ready bool
	// Draining is true when the runner is shutting down: it keeps serving
	// until its tables have moved, but takes no new ones.
	Draining bool
	// Capacity is the most tables it may own; 0 means no limit.
	Capacity int
	// LiveFor is how long, from the snapshot, a Ready member stays Ready if
	// nothing else happens: until its heartbeat's deadline, or the end of
	// a grace it is within (pod or node NotReady); 0 when no end is known.
	// Plan ignores it; the Assigner runs its next pass when the first one
	// runs out (NextExpiry) instead of waiting for its interval.
	LiveFor time.Duration
}

// Move is one change of ownership decided by Plan. From is "" for a table
// that had no owner.
type Move struct {
	Table string
	From  string
	To    string
}

// Plan returns the moves that give every table in owners a healthy owner.
// owners maps table ID to the member that owns it ("" for an unassigned
// table). Tables that cannot be placed (no live member with room) are left
// out and reported in unplaced, so the caller can retry when members change.
func Plan(members []Member, owners map[string]string) (moves []Move, unplaced []string) {
	slots, healthy := newSlots(members)

	var homeless []homelessTable
	for table, owner := range owners {
		if s, ok := healthy[owner]; ok {
			s.load++
			continue
		}
		homeless = append(homeless, homelessTable{table, owner})
	}
	// Map iteration order is random; sort so the same inputs give the same plan.
	slices.SortFunc(homeless, func(a, b homelessTable) int { return cmp.Compare(a.table, b.table) })

	for _, h := range homeless {
		s := leastLoaded(slots)
		if s == nil {
			unplaced = append(unplaced, h.table)
			continue
		}
		s.load++
		moves = append(moves, Move{Table: h.table, From: h.owner, To: s.id})
	}
	return moves, unplaced
}

// PlaceNew picks the member a brand-new table should go to: the least-loaded
// live member with room, counting the tables each healthy member owns now.
// ok is false when no live member has room.
func PlaceNew(members []Member, owners map[string]string) (member string, ok bool) {
	slots, healthy := newSlots(members)
	for _, owner := range owners {
		if s, ok := healthy[owner]; ok {
			s.load++
		}
	}
	if s := leastLoaded(slots); s != nil {
		return s.id, true
	}
	return "", false
}

func newSlots(members []Member) (slots []*slot, healthy map[string]*slot) {
	healthy = make(map[string]*slot, len(members))
	slots = make([]*slot, 0, len(members))
	for _, m := range members {
		if !m.Ready {
			continue
		}
		s := &slot{id: m.ID, capacity: m.Capacity, accepting: !m.Draining}
		slots = append(slots, s)
		if !m.Draining {
			healthy[m.ID] = s
		}
	}
	return slots, healthy
}

type slot struct {
	id        string
	load      int
	capacity  int
	accepting bool
}

type homelessTable struct{ table, owner string }

func leastLoaded(slots []*slot) *slot {
	var best *slot
	for _, s := range slots {
		if !s.accepting || (s.capacity > 0 && s.load >= s.capacity) {
			continue
		}
		if best == nil || s.load < best.load || (s.load == best.load && s.id < best.id) {
			best = s
		}
	}
	return best
}

// NextExpiry is the shortest LiveFor among the Ready members: the soonest a
// member can stop being live without anyone telling (a heartbeat that is not
// renewed, a grace that runs out). ok is false when no member has a known
// end.
func NextExpiry(members []Member) (d time.Duration, ok bool) {
	for _, m := range members {
		if m.Ready && m.LiveFor > 0 && (!ok || m.LiveFor < d) {
			d, ok = m.LiveFor, true
		}
	}
	return d, ok
}
