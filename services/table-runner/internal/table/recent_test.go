package table

import (
	"bytes"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// benchCommandID is an id shaped like the gateway's (player id "/" client
// key, see wire.CommandID): the ids of one player share a long prefix and
// have the same length, which is what makes comparing them cost.
func benchCommandID(i int) string {
	return "0b5e7c1a-93d2-4f60-8a7e-2c4d9b1f0e37/cmd-" + strconv.Itoa(100000000+i)
}

// fullRingTable is a classic table of four humans that has applied some
// moves and more than recentCommands commands in all, so that its ring of
// recent command ids is full and has wrapped. It returns the ids it sent,
// oldest first. It is deterministic: testdata/full-ring.snapshot is its
// snapshot.
var updateFixtures = flag.Bool("update", false, "rewrite testdata fixtures")

func fullRingTable(tb testing.TB) (*harness, []string) {
	tb.Helper()
	// No client seeds: every id in the ring is one of sent (hands are dealt
	// at their seed deadlines).
	h := newHarnessSeeding(tb, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 7, humans(4), false)
	// The fixtures are of a table from before legal moves (its first hand
	// waits for its seed deadline: nobody has moved yet).
	h.t.legal = false
	var sent []string
	send := func(from string, c *tablev1.Command) {
		c.CommandId, c.PlayerId, c.TableId = benchCommandID(len(sent)), from, h.t.ID()
		sent = append(sent, c.CommandId)
		h.now = h.now.Add(time.Second)
		if _, err := h.apply(CommandInput(c, h.entry(), h.now)); err != nil && rejectOf(err) == tablev1.RejectReason_REJECT_REASON_UNSPECIFIED {
			tb.Fatalf("command %d: %v", len(sent), err)
		}
	}
	for i := range recentCommands + recentCommands/2 + 3 {
		if s := h.t.eng.toMove(); i%10 == 0 && s >= 0 {
			send(player(s), legalCommands(h.t, s)[0])
			continue
		}
		// A watcher's reconnect: accepted (a ViewSynced for them), so its
		// id counts. (A refused command's id does not: refusals change
		// nothing.)
		send("stranger", reconnectCmd())
	}
	if h.t.recent.n != recentCommands || h.t.recent.start == 0 {
		tb.Fatalf("ring not full and wrapped: n %d, start %d", h.t.recent.n, h.t.recent.start)
	}
	return h, sent
}

// BenchmarkTable_IgnoredLookup is the duplicate check every input makes,
// against a full ring: "miss" is a fresh command (every new command), "hit"
// the redelivery of the newest one.
func BenchmarkTable_IgnoredLookup(b *testing.B) {
	h, sent := fullRingTable(b)
	for _, c := range []struct {
		name string
		id   string
		want error
	}{
		{"miss", benchCommandID(len(sent)), nil},
		{"hit", sent[len(sent)-1], ErrDuplicate},
	} {
		cmd := bidCmd(1)
		cmd.CommandId, cmd.PlayerId, cmd.TableId = c.id, player(0), h.t.ID()
		in := CommandInput(cmd, h.entry(), h.now)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := h.t.Ignored(in); !errors.Is(err, c.want) {
					b.Fatalf("Ignored: %v, want %v", err, c.want)
				}
			}
		})
	}
}

// BenchmarkTable_ApplyCommandFullRing applies fresh commands to a table whose
// ring is full: the duplicate check, the eviction of the oldest id and a
// refusal (a stranger's bid, so that the game does not move on).
func BenchmarkTable_ApplyCommandFullRing(b *testing.B) {
	h, sent := fullRingTable(b)
	ids := make([]string, 4*recentCommands) // cycled: more than the ring holds
	for i := range ids {
		ids[i] = benchCommandID(len(sent) + i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		cmd := bidCmd(1)
		cmd.CommandId, cmd.PlayerId, cmd.TableId = ids[i%len(ids)], "stranger", h.t.ID()
		i++
		h.nextMS++
		evs, err := h.t.Apply(CommandInput(cmd, strconv.FormatUint(h.nextMS, 10)+"-0", h.now))
		if len(evs) != 1 || !errors.Is(err, ErrNotSeated) {
			b.Fatalf("%v %v", kinds(evs), err)
		}
	}
}

// naiveHas is the linear scan the ring's index replaced.
func naiveHas(r *ring, id string) bool {
	for i := range r.n {
		if r.ids[(r.start+i)%recentCommands] == id {
			return true
		}
	}
	return false
}

// checkRing fails unless r holds want (oldest first), its index has exactly
// one slot for each position, reachable from the position's home slot, and
// has agrees with a linear scan for every id of probes.
func checkRing(tb testing.TB, r *ring, want []string, probes []string) {
	tb.Helper()
	if r.n != len(want) || r.start < 0 || r.start >= recentCommands {
		tb.Fatalf("ring n %d start %d, want %d ids", r.n, r.start, len(want))
	}
	var slotOf [recentCommands]int
	for p := range slotOf {
		slotOf[p] = -1
	}
	for i, s := range r.slots {
		if s == 0 {
			continue
		}
		p := int(s) - 1
		if off := (p - r.start + recentCommands) % recentCommands; p >= recentCommands || off >= r.n || slotOf[p] >= 0 {
			tb.Fatalf("slot %d holds position %d: outside the ring or twice", i, p)
		}
		slotOf[p] = i
	}
	// run[i]: how many occupied slots end at slot i (0 when it is empty).
	// An entry is found from its home slot when no empty slot is between.
	var run [recentSlots]int
	empty := slices.Index(r.slots[:], 0)
	if empty < 0 {
		tb.Fatal("no empty slot in the index")
	}
	for k := 1; k <= recentSlots; k++ {
		if i, prev := (empty+k)%recentSlots, (empty+k-1)%recentSlots; r.slots[i] != 0 {
			run[i] = run[prev] + 1
		}
	}
	for k, id := range want {
		p := (r.start + k) % recentCommands
		if r.ids[p] != id || r.hashes[p] != idHash(id) || slotOf[p] < 0 {
			tb.Fatalf("position %d: id %q hash %x slot %d, want %q", p, r.ids[p], r.hashes[p], slotOf[p], id)
		}
		if home := int(r.hashes[p] % recentSlots); (slotOf[p]-home+recentSlots)%recentSlots >= run[slotOf[p]] {
			tb.Fatalf("position %d in slot %d is cut off from its home slot %d", p, slotOf[p], home)
		}
	}
	for _, id := range probes {
		if got, scan := r.has(id), naiveHas(r, id); got != scan {
			tb.Fatalf("has(%q) = %v, a scan says %v", id, got, scan)
		}
	}
}

// collidingIDs returns n ids whose home slot is home.
func collidingIDs(home uint32, n int) []string {
	var out []string
	for k := 0; len(out) < n; k++ {
		id := "col" + strconv.FormatUint(uint64(home), 10) + "-" + strconv.Itoa(k)
		if idHash(id)%recentSlots == home {
			out = append(out, id)
		}
	}
	return out
}

// sameHashIDs returns pairs of different ids with the same idHash, found by
// the birthday paradox.
func sameHashIDs(pairs int) [][]string {
	var out [][]string
	byHash := make(map[uint32]string)
	for k := 0; len(out) < pairs; k++ {
		id := "same-" + strconv.Itoa(k)
		h := idHash(id)
		if other, ok := byHash[h]; ok {
			out = append(out, []string{other, id})
			continue
		}
		byHash[h] = id
	}
	return out
}

func TestRecentRing_IndexAgreesWithALinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	// Ids of one home slot build long probe runs; slots at the end and the
	// start of the index make the runs wrap around. Ids with the same hash
	// (each pair is a group) must still be told apart.
	var colliding [][]string
	for _, home := range []uint32{recentSlots - 2, recentSlots - 1, 0, 1, 200} {
		colliding = append(colliding, collidingIDs(home, recentCommands))
	}
	colliding = append(colliding, sameHashIDs(8)...)
	ops := 40_000
	if testing.Short() {
		ops = 8_000
	}
	for round := range 4 {
		var r ring
		var model, seen []string
		for op := range ops / 4 {
			var id string
			var probes []string
			switch k := rng.IntN(100); {
			case k < 45 || len(seen) == 0:
				id = "fresh-" + strconv.Itoa(round) + "-" + strconv.Itoa(op)
			case k < 75:
				c := colliding[rng.IntN(len(colliding))]
				id = c[rng.IntN(len(c))]
				probes = []string{c[0], c[len(c)-1]}
			case k < 90:
				id = seen[rng.IntN(len(seen))] // often evicted by now: added again
			default:
				if len(model) == 0 {
					continue
				}
				id = model[rng.IntN(len(model))] // in the ring: a second copy
			}
			r.add(id)
			seen = append(seen, id)
			model = append(model, id)
			if len(model) > recentCommands {
				model = model[1:]
			}
			probes = append(probes, id, "never-"+strconv.Itoa(op), seen[rng.IntN(len(seen))])
			if op%97 == 0 {
				probes = append(probes, seen[max(0, len(seen)-2*recentCommands):]...)
			}
			checkRing(t, &r, model, probes)
		}
	}
}

// TestRecentRing_IgnoredAsALinearScanThroughSnapshots applies fresh
// commands and redeliveries (of ids in the ring and of evicted ones) to a
// table, restores it from its snapshot now and then and goes on with the
// restored table, and checks after every input that the duplicate check
// agrees with a scan of the ring and that a snapshot re-encodes exactly.
func TestRecentRing_IgnoredAsALinearScanThroughSnapshots(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	h := newHarnessSeeding(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 3, humans(4), false)
	colliding := collidingIDs(recentSlots-1, 2*recentCommands)
	var sent, model []string
	steps := 6000
	if testing.Short() {
		steps = 1500
	}
	for step := range steps {
		var id string
		switch k := rng.IntN(100); {
		case k < 50 || len(sent) == 0:
			id = benchCommandID(step)
		case k < 70:
			id = colliding[rng.IntN(len(colliding))]
		default:
			id = sent[rng.IntN(len(sent))]
		}
		from := "stranger"
		var cmd *tablev1.Command
		if s := h.t.eng.toMove(); s >= 0 && rng.IntN(4) == 0 {
			from, cmd = player(s), legalCommands(h.t, s)[0]
		} else if rng.IntN(3) == 0 {
			cmd = bidCmd(rng.IntN(3)) // refused: its id is not remembered
		} else {
			cmd = reconnectCmd() // a watcher's reconnect: accepted
		}
		cmd.CommandId, cmd.PlayerId, cmd.TableId = id, from, h.t.ID()
		h.now = h.now.Add(time.Second)
		in := CommandInput(cmd, h.entry(), h.now)
		dup := naiveHas(&h.t.recent, id)
		if err := h.t.Ignored(in); errors.Is(err, ErrDuplicate) != dup || (err != nil && !errors.Is(err, ErrDuplicate)) {
			t.Fatalf("step %d: Ignored(%q) = %v, a scan of the ring says duplicate=%v", step, id, err, dup)
		}
		evs, err := h.apply(in)
		refused := rejectOf(err) != tablev1.RejectReason_REJECT_REASON_UNSPECIFIED
		// A refused command may come after timer moves that were due (they
		// are its events); it adds none of its own.
		if (dup && (len(evs) != 0 || err != nil)) || (!dup && !refused && len(evs) == 0) || (refused && hasRejection(evs)) {
			t.Fatalf("step %d: %q duplicate=%v refused=%v but %d events (%v)", step, id, dup, refused, len(evs), err)
		}
		if !dup && !refused {
			sent = append(sent, id)
			model = append(model, id)
			if len(model) > recentCommands {
				model = model[1:]
			}
		}
		probes := []string{id, benchCommandID(step + 1)}
		if len(sent) > 0 { // none yet when the first commands were refused
			probes = append(probes, sent[rng.IntN(len(sent))])
		}
		checkRing(t, &h.t.recent, model, probes)
		if rng.IntN(40) == 0 {
			data := state(t, h.t)
			r, err := Restore(data)
			if err != nil {
				t.Fatalf("step %d: restore: %v", step, err)
			}
			if !bytes.Equal(state(t, r), data) {
				t.Fatalf("step %d: the restored table re-encodes differently", step)
			}
			checkRing(t, &r.recent, model, sent)
			h.t = r
		}
	}
}

// TestSnapshot_FullRingFixtureLoadsAndReencodesTheSame: the fixtures are
// snapshots of fullRingTable: full-ring-v6.snapshot in today's format, and
// full-ring-v5.snapshot in the hand-laid layout of before (hands committed
// ahead). The table still encodes to exactly the version 6 bytes; both load
// as that table (the version 5 one holds all of it: written the old way it
// is the same bytes), and the loaded tables ignore the ids the original
// ignores. The version 4 fixture (the same table when each hand was seeded
// after the one before) still loads, keeps its way of seeding to the end of
// its game, and holds all it held. The version 1 fixture, written before the
// ring had an index (commit 4f72ab5), is refused since version 3: its
// game's deals all followed from one seed the game id made public.
func TestSnapshot_FullRingFixtureLoadsAndReencodesTheSame(t *testing.T) {
	v1, err := os.ReadFile(filepath.Join("testdata", "full-ring.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(v1); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("a version 1 snapshot: %v, want ErrBadSnapshot", err)
	}
	v4, err := os.ReadFile(filepath.Join("testdata", "full-ring-v4.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	r4, err := Restore(v4)
	if err != nil || r4.ahead || r4.nx.active || !bytes.Equal(marshalLegacy(t, r4), v4) {
		t.Fatalf("the version 4 fixture: %v, or it re-encodes differently", err)
	}
	if again, err := Restore(state(t, r4)); err != nil || again.ahead || !bytes.Equal(state(t, again), state(t, r4)) {
		t.Fatalf("the version 4 fixture in version 6: %v", err)
	}
	path := filepath.Join("testdata", "full-ring-v6.snapshot")
	h, sent := fullRingTable(t)
	// A table restored from the fixtures sends no legal moves
	// (TableSnapshot.legal_moves unset), to the end of its game; a table
	// that sends them says so, and keeps saying it.
	h.t.legal = true
	if again, err := Restore(state(t, h.t)); err != nil || !again.legal {
		t.Fatalf("a table sending legal moves restores without them: %v", err)
	}
	h.t.legal = false
	// The same for the seat rules (TableSnapshot.seat_rules).
	h.t.seatRules = true
	if again, err := Restore(state(t, h.t)); err != nil || !again.seatRules {
		t.Fatalf("a table under the seat rules restores without them: %v", err)
	}
	h.t.seatRules = false
	if *updateFixtures {
		if err := os.WriteFile(path, state(t, h.t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v6, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if now := state(t, h.t); now[0] != snapshotVersion || !bytes.Equal(now, v6) {
		t.Fatal("the same table now encodes differently")
	}
	v5, err := os.ReadFile(filepath.Join("testdata", "full-ring-v5.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(marshalLegacy(t, h.t), v5) {
		t.Fatal("the version 5 fixture is not the table's")
	}
	for _, old := range [][]byte{v6, v5} {
		r, err := Restore(old)
		if err != nil {
			t.Fatalf("restore version %d: %v", old[0], err)
		}
		if !bytes.Equal(state(t, r), v6) || !bytes.Equal(marshalLegacy(t, r), v5) {
			t.Fatalf("the version %d fixture restores to another table", old[0])
		}
		for k, id := range append(sent, benchCommandID(len(sent))) {
			cmd := bidCmd(1)
			cmd.CommandId, cmd.PlayerId = id, "stranger"
			in := CommandInput(cmd, h.entry(), h.now)
			want := error(nil)
			if k < len(sent) && k >= len(sent)-recentCommands {
				want = ErrDuplicate
			}
			if got, orig := r.Ignored(in), h.t.Ignored(in); !errors.Is(got, want) || !errors.Is(orig, want) {
				t.Fatalf("id %d of %d: restored %v, original %v, want %v", k, len(sent), got, orig, want)
			}
		}
	}
}

func hasRejection(evs []*tablev1.Event) bool {
	for _, e := range evs {
		if e.GetMoveRejected() != nil {
			return true
		}
	}
	return false
}
