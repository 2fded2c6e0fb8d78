package ws

import (
	"context"
	"sync"
	"time"

	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
)

// Positive answers of TableExists are cached this long, for at most
// gateCacheMax tables (then the cache starts afresh): tables do not stop
// existing while played, and a rejoin storm must not become lobby reads.
// Negative answers are not cached, so a table made a moment ago is found.
const (
	gateCacheTTL = 10 * time.Minute
	gateCacheMax = 100_000
)

// tableGate answers whether a table exists, caching the yeses.
type tableGate struct {
	exists func(ctx context.Context, tableID string) (bool, error)
	now    func() time.Time
	mu     sync.Mutex
	known  map[string]time.Time // table → until when the yes holds
}

func newTableGate(exists func(context.Context, string) (bool, error), now func() time.Time) *tableGate {
	return &tableGate{exists: exists, now: now, known: map[string]time.Time{}}
}

// check returns nil when the table exists (or no check is configured), a
// table_not_found *wire.Error when it does not.
func (g *tableGate) check(ctx context.Context, table string) error {
	if g.exists == nil {
		return nil
	}
	now := g.now()
	g.mu.Lock()
	until, ok := g.known[table]
	g.mu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	found, err := g.exists(ctx, table)
	if err != nil {
		return err
	}
	if !found {
		return wire.Errorf(wire.CodeTableNotFound, "there is no table %s", table)
	}
	g.mu.Lock()
	if len(g.known) >= gateCacheMax {
		g.known = map[string]time.Time{}
	}
	g.known[table] = now.Add(gateCacheTTL)
	g.mu.Unlock()
	return nil
}

// mayCommand is the gateway's seat rule: only a player who holds a seat at
// the table commands it. A player whose seat a bot plays for now still owns
// it: sit (to take it back) and leave pass for whoever has held a seat
// there; the table decides the rest. Anything else is refused here,
// never written to the table's command stream.
func mayCommand(typ string, sub *hub.Subscription) error {
	if sub.Seat() != visibility.NoSeat {
		return nil
	}
	switch typ {
	case wire.TypeSit, wire.TypeLeave:
		if sub.Member() {
			return nil
		}
	}
	return wire.Errorf(wire.CodeNotSeated, "you hold no seat at table %s", sub.Table())
}
