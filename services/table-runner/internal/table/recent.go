package table

// recentCommands is how many command ids the table remembers. A command is
// redelivered only around a crash or a migration, long before 256 newer
// commands of the same table have been applied.
const recentCommands = 256

// recentSlots is the size of the ring's hash index: a power of two at least
// twice recentCommands, so that probe runs stay short and always end at an
// empty slot.
const recentSlots = 2 * recentCommands

// ring is the last recentCommands command ids, oldest first from start, with
// a hash index over them: has, the duplicate check of every input, is a hash
// and a probe or two instead of a scan of the whole ring.
//
// The index is an open-addressing table with linear probing: a slot holds 1 +
// the position in ids of an id whose hash leads there, 0 when empty. Every
// position in the ring has exactly one slot, even when the same id is in the
// ring twice (the table never adds an id it has, but has answers as a scan of
// ids would whatever was added). The index derives from ids, start and n
// alone: snapshots do not store it, and restoring one rebuilds it by adding
// the ids again. It is fixed arrays rather than a map: 2 KB a table instead
// of about 13 KB for a map of 256 ids.
type ring struct {
	ids    [recentCommands]string
	hashes [recentCommands]uint32 // idHash(ids[p])
	slots  [recentSlots]uint16
	start  int
	n      int
}

func (r *ring) has(id string) bool {
	h := idHash(id)
	for i := h % recentSlots; ; i = (i + 1) % recentSlots {
		p := r.slots[i]
		if p == 0 {
			return false
		}
		if r.hashes[p-1] == h && r.ids[p-1] == id {
			return true
		}
	}
}

func (r *ring) add(id string) {
	p := (r.start + r.n) % recentCommands
	if r.n == recentCommands {
		r.unindex(p) // p is start: the oldest id goes
		r.start = (r.start + 1) % recentCommands
	} else {
		r.n++
	}
	h := idHash(id)
	r.ids[p], r.hashes[p] = id, h
	i := h % recentSlots
	for r.slots[i] != 0 {
		i = (i + 1) % recentSlots
	}
	r.slots[i] = uint16(p + 1)
}

// unindex takes position p out of the index: it empties p's slot and moves
// back the entries after it in the probe run that the hole would cut off
// from their home slot (deletion without tombstones, Knuth's Algorithm R).
func (r *ring) unindex(p int) {
	i := r.hashes[p] % recentSlots
	for int(r.slots[i]) != p+1 {
		i = (i + 1) % recentSlots
	}
	for j := (i + 1) % recentSlots; r.slots[j] != 0; j = (j + 1) % recentSlots {
		// The entry at j may fill the hole at i when i is not before its
		// home slot in the run: its home is at least as far back from j.
		home := r.hashes[r.slots[j]-1] % recentSlots
		if (j-home)%recentSlots >= (j-i)%recentSlots {
			r.slots[i] = r.slots[j]
			i = j
		}
	}
	r.slots[i] = 0
}

// idHash is 64-bit FNV-1a folded to 32 bits. It need not resist crafted ids:
// however ids collide, a probe run is at most recentCommands long, and
// comparing hashes first leaves no more string compares than the scan of
// the ring that the index replaced.
func idHash(id string) uint32 {
	h := uint64(14695981039346656037)
	for i := range len(id) {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return uint32(h ^ h>>32)
}
