package streams

import "sync"

// registry is the set of streams one consumer loop reads, split into shards
// of at most k keys. Shard i reads order[i*k:(i+1)*k] with one multi-key
// call; removal swaps the last stream into the hole so only two shards
// change. It also tracks which shard goroutines are alive so the run loop
// can start the ones a growing set needs.
type registry struct {
	mu      sync.Mutex
	k       int
	order   []string
	index   map[string]int
	pos     map[string]string // fan-out: last ID seen per stream
	alive   map[int]bool
	changed chan struct{}
	version uint64 // bumped on every add and remove
}

func newRegistry(k int) *registry {
	return &registry{k: k, index: map[string]int{}, pos: map[string]string{}, alive: map[int]bool{}, changed: make(chan struct{})}
}

// notifyLocked wakes everything waiting on changes (the run loop).
func (r *registry) notifyLocked() {
	r.version++
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *registry) changes() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// add registers stream (pos is the fan-out start ID; ignored by groups) and
// returns its shard; added is false when it was already there (pos is then
// left alone so a running tail does not jump).
func (r *registry) add(stream, pos string) (shard int, added bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.index[stream]; ok {
		return i / r.k, false
	}
	r.index[stream] = len(r.order)
	r.order = append(r.order, stream)
	r.pos[stream] = pos
	r.notifyLocked()
	return (len(r.order) - 1) / r.k, true
}

// remove unregisters stream and returns the shards whose keys changed.
func (r *registry) remove(stream string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.index[stream]
	if !ok {
		return nil
	}
	last := len(r.order) - 1
	shards := []int{i / r.k}
	if i != last {
		moved := r.order[last]
		r.order[i] = moved
		r.index[moved] = i
		if last/r.k != i/r.k {
			shards = append(shards, last/r.k)
		}
	}
	r.order = r.order[:last]
	delete(r.index, stream)
	delete(r.pos, stream)
	r.notifyLocked()
	return shards
}

func (r *registry) numShardsLocked() int { return (len(r.order) + r.k - 1) / r.k }

// shardKeysSince returns shard i's streams (and their positions when
// withPos) unless the reader already has those of version `since`: changed
// is false (and keys, pos nil) when nothing was added or removed since, so a
// shard does not copy its key list on every read. ok=false means the shard
// is no longer needed: it is marked dead and its goroutine must exit.
func (r *registry) shardKeysSince(i int, withPos bool, since uint64) (keys, pos []string, version uint64, changed, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i >= r.numShardsLocked() {
		r.alive[i] = false
		return nil, nil, r.version, false, false
	}
	if since != 0 && since == r.version {
		return nil, nil, r.version, false, true
	}
	end := min((i+1)*r.k, len(r.order))
	keys = append([]string(nil), r.order[i*r.k:end]...)
	if withPos {
		pos = make([]string, len(keys))
		for j, k := range keys {
			pos[j] = r.pos[k]
		}
	}
	return keys, pos, r.version, true, true
}

// advance records id as the last ID delivered from stream, but only if the
// stream's position is still from, the position the read started at (or the
// last ID this same batch advanced to). It reports false when the stream was
// removed, or removed and added again at another position, while the batch
// was being delivered: the rest of that batch must then be dropped, or the
// re-added position would jump past entries never delivered from it.
func (r *registry) advance(stream, from, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.index[stream]; !ok || r.pos[stream] != from {
		return false
	}
	r.pos[stream] = id
	return true
}

// startMissing marks as alive, and returns, the shards that need a goroutine.
func (r *registry) startMissing() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var start []int
	for i := 0; i < r.numShardsLocked(); i++ {
		if !r.alive[i] {
			r.alive[i] = true
			start = append(start, i)
		}
	}
	return start
}

func (r *registry) all() []string { return r.appendAll(nil) }

// appendAll appends every stream to dst (a reader's scratch, reused).
func (r *registry) appendAll(dst []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(dst, r.order...)
}

func (r *registry) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order)
}

func (r *registry) shardCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.numShardsLocked()
}

// slotGroups splits keys into runs that share a Redis Cluster slot, keeping
// their order within each group.
func slotGroups(keys []string) [][]string {
	idx := slotGroupsOf(len(keys), func(i int) string { return keys[i] })
	groups := make([][]string, len(idx))
	for g, is := range idx {
		groups[g] = make([]string, len(is))
		for j, i := range is {
			groups[g][j] = keys[i]
		}
	}
	return groups
}

// slotGroupsOf groups the indexes 0…n-1 by the Cluster slot of keyOf(i),
// in order of first appearance, keeping their order within a group.
func slotGroupsOf(n int, keyOf func(i int) string) [][]int {
	idx := map[int]int{}
	var groups [][]int
	for i := 0; i < n; i++ {
		slot := HashSlot(keyOf(i))
		g, ok := idx[slot]
		if !ok {
			g = len(groups)
			idx[slot] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}
