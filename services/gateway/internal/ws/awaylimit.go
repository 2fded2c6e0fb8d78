package ws

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// awayLimit bounds the away reports this gateway sends for one player at one
// table. Every away a table applies is a durable public event (PlayerAway,
// then PlayerBack when the player returns), so a seated player who joins
// and unjoins in a loop, or reconnects in one, would grow the table's log
// at the frame rate (about 20 events a second a socket), forever, and every
// watcher and every later join would read them. The first reports of a
// player at a table go out at once, as before; past the bucket an away
// waits for its token (one an `every`), and a return before then cancels
// it: the table never hears of an absence it could not have acted on, and
// the log grows by at most two events an `every` per player, table and
// gateway. Backs are never held: a back for a player the table does not
// hold away writes nothing, and withholding one could leave a present
// player away.
//
// A held away that comes due is sent even if the player came back through
// another gateway meanwhile: the runner checks every away against the
// gateways' presence set, and skips one for a connected player
// (pulka.runner.presence.stale_away).
type awayLimit struct {
	every time.Duration
	burst int
	send  func(ctx context.Context, table, player string) // reports the player away

	mu     sync.Mutex
	keys   map[awayKey]*awayState
	closed bool // flushed: a gateway shutting down holds nothing more
}

type awayKey struct{ table, player string }

type awayState struct {
	lim *rate.Limiter
	// held is the reservation of a held away, and timer sends it when
	// due; gen tells a timer that fired after its away was cancelled (or
	// sent by flush) that it is stale.
	held  *rate.Reservation
	timer *time.Timer
	gen   uint64
}

// The away bucket's defaults (Config.AwayBurst, Config.AwayEvery): a
// player on a poor connection drops a few times in a hand and is reported
// each time; one who drops more than six times keeps being reported, once
// every half minute at most.
const (
	DefaultAwayBurst = 6
	DefaultAwayEvery = 30 * time.Second
)

// awayKeysSwept is the size from which the limiter forgets players whose
// bucket is full again (nothing held): it holds a key for each player that
// went away recently, not for every one ever seen.
const awayKeysSwept = 4096

func newAwayLimit(every time.Duration, burst int, send func(ctx context.Context, table, player string)) *awayLimit {
	return &awayLimit{every: every, burst: burst, send: send, keys: map[awayKey]*awayState{}}
}

// Away outcomes, for the presence metric.
const (
	awaySent      = "sent"      // reported now
	awayHeld      = "held"      // held until its token comes (or the player returns)
	awayCoalesced = "coalesced" // one is held already: this one adds nothing
)

// away reports player away from table now, or holds the report (see
// awayLimit), and says which.
func (a *awayLimit) away(ctx context.Context, table, player string) string {
	k := awayKey{table, player}
	a.mu.Lock()
	st := a.keys[k]
	if st == nil {
		if len(a.keys) >= awayKeysSwept {
			a.sweepLocked(time.Now())
		}
		st = &awayState{lim: rate.NewLimiter(rate.Every(a.every), a.burst)}
		a.keys[k] = st
	}
	if st.held != nil {
		a.mu.Unlock()
		return awayCoalesced
	}
	r := st.lim.Reserve()
	d := r.Delay()
	if d == 0 || a.closed {
		a.mu.Unlock()
		a.send(ctx, table, player)
		return awaySent
	}
	st.gen++
	gen := st.gen
	st.held = r
	// Sent after the connection that left is gone: its context is not
	// this report's.
	bg := context.WithoutCancel(ctx)
	st.timer = time.AfterFunc(d, func() { a.due(bg, k, st, gen) })
	a.mu.Unlock()
	return awayHeld
}

// due sends a held away whose token came, unless it was cancelled or sent.
func (a *awayLimit) due(ctx context.Context, k awayKey, st *awayState, gen uint64) {
	a.mu.Lock()
	if st.held == nil || st.gen != gen {
		a.mu.Unlock()
		return
	}
	st.held, st.timer = nil, nil
	a.mu.Unlock()
	a.send(ctx, k.table, k.player)
}

// back cancels a held away of player at table (they returned before the
// table heard they left), giving its token back; it reports whether there
// was one.
func (a *awayLimit) back(table, player string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.keys[awayKey{table, player}]
	if st == nil || st.held == nil {
		return false
	}
	st.timer.Stop()
	st.held.Cancel()
	st.held, st.timer = nil, nil
	return true
}

// flush sends every held away now, and every later one at once: a gateway
// shutting down cannot keep them, and after it is gone nobody else would
// report these players (their connections said goodbye, so no sweep finds
// them). The reports share one deadline, so a slow Redis cannot hold the
// shutdown for a report's timeout each.
func (a *awayLimit) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, awayFlushTimeout)
	defer cancel()
	a.mu.Lock()
	a.closed = true
	var due []awayKey
	for k, st := range a.keys {
		if st.held != nil {
			st.timer.Stop()
			st.held, st.timer = nil, nil
			due = append(due, k)
		}
	}
	a.mu.Unlock()
	for _, k := range due {
		a.send(ctx, k.table, k.player)
	}
}

// awayFlushTimeout bounds flush's reports together.
const awayFlushTimeout = 5 * time.Second

// heldCount is how many aways wait for their token.
func (a *awayLimit) heldCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, st := range a.keys {
		if st.held != nil {
			n++
		}
	}
	return n
}

// sweepLocked forgets the players whose bucket is full again with nothing
// held: a new state for them behaves the same.
func (a *awayLimit) sweepLocked(now time.Time) {
	for k, st := range a.keys {
		if st.held == nil && st.lim.TokensAt(now) >= float64(a.burst) {
			delete(a.keys, k)
		}
	}
}
