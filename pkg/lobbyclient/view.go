package lobbyclient

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/streams"
)

// Change is one change of the view, for pushing to clients.
type Change struct {
	// Version is the view version after the change.
	Version uint64
	// Upserted is the table that appeared or changed (nil for a removal).
	Upserted *lobbyv1.TableSummary
	// Removed is the id of the table that left the list ("" otherwise).
	Removed string
}

// ViewOptions configure a View; zero values take the defaults.
type ViewOptions struct {
	// Block is how long one read of the view stream blocks.
	Block time.Duration
	// History is how many recent changes Since can return.
	History int
	// Logger gets errors the reader recovers from.
	Logger *slog.Logger
}

// View is a gateway's cached copy of the public table list. Run keeps it
// current; List, Get, Since and Changed may be called from any goroutine.
// Returned summaries are shared: treat them as read-only.
type View struct {
	rdb redis.UniversalClient
	opt ViewOptions

	mu      sync.RWMutex
	loaded  bool
	version uint64
	tables  map[string]*lobbyv1.TableSummary
	// sorted holds the same tables newest first, kept in order by binary
	// search on every change (re-sorting 10 000 tables per update costs ms).
	sorted []*lobbyv1.TableSummary
	// log holds the changes after version logStart, oldest first.
	log      []Change
	logStart uint64
	changed  chan struct{}
	// gen counts the changes (updates and reloads): pages are kept for one.
	gen uint64

	// pages shares the walks of one generation between its Page calls:
	// every lobby watcher asks for its window after each change, and a
	// filter that matches little walks the whole list, so without sharing
	// the cost per change grows with watchers × tables. Held before mu.
	pagesMu  sync.Mutex
	pagesGen uint64
	pages    map[pageKey]pageResult
}

type pageKey struct {
	filter        string
	offset, limit int
}

type pageResult struct {
	tables []*lobbyv1.TableSummary
	more   bool
}

// maxPages bounds the pages kept for one generation (distinct filters and
// offsets); past it a page is walked and not kept.
const maxPages = 1024

// NewView makes an empty view; Run fills it.
func NewView(rdb redis.UniversalClient, opt ViewOptions) *View {
	if opt.Block <= 0 {
		opt.Block = DefaultReplyBlock
	}
	if opt.History <= 0 {
		opt.History = 1024
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &View{rdb: rdb, opt: opt, tables: map[string]*lobbyv1.TableSummary{}, changed: make(chan struct{})}
}

// Run loads the lobby's snapshot and follows the view stream after it until
// ctx is cancelled. When it meets a gap in the versions (its history was
// trimmed) or versions that went backwards (Redis lost its data) it reloads
// the snapshot. Redis errors are retried.
func (v *View) Run(ctx context.Context) error {
	last, needLoad := "0", true
	retry := streams.NewRetry()
	for ctx.Err() == nil {
		if needLoad {
			id, progressed, err := v.load(ctx)
			if err != nil {
				if ctx.Err() == nil { // else: shutting down, the loop ends
					v.opt.Logger.WarnContext(ctx, "lobbyclient: loading the lobby snapshot failed", "err", err)
					retry.Wait(ctx)
				}
				continue
			}
			if !progressed {
				// The snapshot is not newer than what we had: give the
				// lobby time to write one before trying again.
				retry.Wait(ctx)
			}
			last, needLoad = id, false
		}
		res, err := v.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{ViewStream, last}, Count: 512, Block: v.opt.Block}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				v.opt.Logger.WarnContext(ctx, "lobbyclient: reading the lobby view failed", "err", err)
				retry.Wait(ctx)
			}
			continue
		}
		retry.Reset()
		for _, s := range res {
			for _, m := range s.Messages {
				if !v.apply(ctx, m) {
					needLoad = true
					break
				}
				last = m.ID
			}
		}
	}
	return nil
}

// load replaces the view with the stored snapshot and returns the stream ID
// to read after, and whether the version moved forward (or reset).
func (v *View) load(ctx context.Context) (string, bool, error) {
	view := &lobbyv1.LobbyView{}
	b, err := v.rdb.Get(ctx, SnapshotKey).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		// No snapshot yet: the stream from its start is the whole history
		// (if it is not, the first update shows a gap).
	case err != nil:
		return "", false, err
	default:
		if err := proto.Unmarshal(b, view); err != nil {
			return "", false, err
		}
	}
	v.mu.Lock()
	progressed := !v.loaded || view.GetVersion() != v.version
	v.loaded = true
	v.version = view.GetVersion()
	v.tables = make(map[string]*lobbyv1.TableSummary, len(view.GetTables()))
	v.sorted = make([]*lobbyv1.TableSummary, 0, len(view.GetTables()))
	for _, t := range view.GetTables() {
		if old, dup := v.tables[t.GetTableId()]; dup {
			v.removeSorted(old)
		}
		v.tables[t.GetTableId()] = t
		v.sorted = append(v.sorted, t)
	}
	// The lobby writes the snapshot newest first already; sorting again
	// costs little and does not trust it.
	slices.SortFunc(v.sorted, newestFirst)
	v.log, v.logStart = v.log[:0], v.version
	v.notifyLocked()
	v.mu.Unlock()
	id := view.GetStreamId()
	if id == "" {
		id = "0"
	}
	return id, progressed, nil
}

// apply applies one stream entry; false means the view must be reloaded.
func (v *View) apply(ctx context.Context, m redis.XMessage) bool {
	data, _ := m.Values[streams.FieldData].(string)
	var u lobbyv1.LobbyUpdate
	if err := proto.Unmarshal([]byte(data), &u); err != nil {
		v.opt.Logger.WarnContext(ctx, "lobbyclient: undecodable lobby update; reloading", "id", m.ID, "err", err)
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if u.GetVersion() != v.version+1 {
		// A gap (trimmed history) or a version that went backwards (the
		// lobby's counter restarted): only the snapshot can tell the truth.
		v.opt.Logger.InfoContext(ctx, "lobbyclient: lobby view out of step; reloading", "have", v.version, "got", u.GetVersion())
		return false
	}
	c := Change{Version: u.GetVersion()}
	switch ch := u.GetChange().(type) {
	case *lobbyv1.LobbyUpdate_TableUpserted:
		t := ch.TableUpserted
		c.Upserted = t
		if old, ok := v.tables[t.GetTableId()]; ok {
			v.removeSorted(old)
		}
		v.tables[t.GetTableId()] = t
		i, _ := slices.BinarySearchFunc(v.sorted, t, newestFirst)
		v.sorted = slices.Insert(v.sorted, i, t)
	case *lobbyv1.LobbyUpdate_TableRemoved:
		c.Removed = ch.TableRemoved
		if old, ok := v.tables[ch.TableRemoved]; ok {
			v.removeSorted(old)
			delete(v.tables, ch.TableRemoved)
		}
	}
	v.version = u.GetVersion()
	v.log = append(v.log, c)
	if over := len(v.log) - v.opt.History; over > 0 {
		v.logStart = v.log[over-1].Version
		v.log = slices.Delete(v.log, 0, over)
	}
	v.notifyLocked()
	return true
}

func (v *View) removeSorted(t *lobbyv1.TableSummary) {
	if i, ok := slices.BinarySearchFunc(v.sorted, t, newestFirst); ok {
		v.sorted = slices.Delete(v.sorted, i, i+1)
	}
}

func (v *View) notifyLocked() {
	v.gen++
	close(v.changed)
	v.changed = make(chan struct{})
}

// Changed returns a channel that is closed at the next change of the view
// (an update, or a reload). Take it before reading the view, then wait on
// it, so no change between the read and the wait is missed.
func (v *View) Changed() <-chan struct{} {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.changed
}

// Version is the version of the last update applied (0 before any).
func (v *View) Version() uint64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.version
}

// Loaded reports whether the first snapshot load has happened (the view
// is usable; a gateway may report ready).
func (v *View) Loaded() bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.loaded
}

// Since returns the changes after version `after`, oldest first, and the
// current version. complete is false when the view cannot say (the history
// no longer reaches back that far, or the view was reloaded since): the
// caller should send its clients the whole List instead.
func (v *View) Since(after uint64) (changes []Change, version uint64, complete bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if after > v.version || after < v.logStart {
		return nil, v.version, false
	}
	i, _ := slices.BinarySearchFunc(v.log, after+1, func(c Change, ver uint64) int {
		switch {
		case c.Version < ver:
			return -1
		case c.Version > ver:
			return 1
		}
		return 0
	})
	return slices.Clone(v.log[i:]), v.version, true
}

// List returns the listed tables that match filter (nil: all), newest first.
func (v *View) List(filter *lobbyv1.TableFilter) []*lobbyv1.TableSummary {
	v.mu.RLock()
	defer v.mu.RUnlock()
	out := make([]*lobbyv1.TableSummary, 0, len(v.sorted))
	for _, t := range v.sorted {
		if Match(filter, t) {
			out = append(out, t)
		}
	}
	return out
}

// Page returns the listed tables that match filter (nil: all), newest
// first, skipping the first offset matches and stopping after limit; more
// says that further tables match. It costs the tables it walks, not the
// whole list: a window of the newest is cheap however many are listed.
// The same page asked for again before the view changes is not walked
// again: watchers sharing a filter share one walk per change. The returned
// slice is shared: treat it as read-only.
func (v *View) Page(filter *lobbyv1.TableFilter, offset, limit int) (tables []*lobbyv1.TableSummary, more bool) {
	key := pageKey{offset: offset, limit: limit}
	if filter != nil {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(filter)
		if err != nil {
			v.mu.RLock()
			defer v.mu.RUnlock()
			return v.walkLocked(filter, offset, limit)
		}
		key.filter = string(b)
	}
	v.pagesMu.Lock()
	defer v.pagesMu.Unlock()
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.pages == nil || v.pagesGen != v.gen {
		v.pages, v.pagesGen = make(map[pageKey]pageResult), v.gen
	}
	if r, ok := v.pages[key]; ok {
		return r.tables, r.more
	}
	tables, more = v.walkLocked(filter, offset, limit)
	if len(v.pages) < maxPages {
		v.pages[key] = pageResult{tables: tables, more: more}
	}
	return tables, more
}

// walkLocked is Page's walk; the caller holds mu.
func (v *View) walkLocked(filter *lobbyv1.TableFilter, offset, limit int) (tables []*lobbyv1.TableSummary, more bool) {
	tables = make([]*lobbyv1.TableSummary, 0, min(max(limit, 0), len(v.sorted)))
	for _, t := range v.sorted {
		if !Match(filter, t) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		if len(tables) == limit {
			return tables, true
		}
		tables = append(tables, t)
	}
	return tables, false
}

// Get returns a listed table. Private tables are never in the view: use
// Fetch for those.
func (v *View) Get(tableID string) (*lobbyv1.TableSummary, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	t, ok := v.tables[tableID]
	return t, ok
}

// newestFirst orders by creation time, newest first, then by id — the
// order of LobbyView.tables.
func newestFirst(a, b *lobbyv1.TableSummary) int {
	ta, tb := a.GetCreatedAt(), b.GetCreatedAt()
	if c := cmp.Compare(tb.GetSeconds(), ta.GetSeconds()); c != 0 {
		return c
	}
	if c := cmp.Compare(tb.GetNanos(), ta.GetNanos()); c != 0 {
		return c
	}
	return strings.Compare(a.GetTableId(), b.GetTableId())
}
