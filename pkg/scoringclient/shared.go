package scoringclient

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedScanLimit bounds how many of the viewer's games one SharedHistory
// call looks at: a page of shared games costs at most this many ids (never
// a sheet that is not returned), however few games two players share.
const SharedScanLimit = 1000

// sharedScanChunk is how many of the viewer's ids one round trip reads.
const sharedScanChunk = 200

// SharedHistory returns the games both playerID and viewerID played in,
// newest first, as History pages them. It walks the viewer's own list and
// asks playerID's list which of those games it holds, so nothing about
// playerID's other games is read or revealed: next, the `before` of the
// next page (zero on the last), is either the end of the last returned game
// or, when the scan stopped at SharedScanLimit, the end of a game of the
// viewer's own.
func (r *Reader) SharedHistory(ctx context.Context, playerID, viewerID string, p Page) (games []FinishedGame, next time.Time, err error) {
	if err := CheckID("player", playerID); err != nil {
		return nil, time.Time{}, err
	}
	if err := CheckID("player", viewerID); err != nil {
		return nil, time.Time{}, err
	}
	limit, maxScore := p.window()
	var shared []string
	var lastScanned float64
	scanned, exhausted := 0, false
	for len(shared) < limit && scanned < SharedScanLimit {
		zs, err := r.rdb.ZRevRangeByScoreWithScores(ctx, PlayerGamesKey(viewerID), &redis.ZRangeBy{
			Max: maxScore, Min: "-inf", Offset: int64(scanned), Count: int64(min(sharedScanChunk, SharedScanLimit-scanned)),
		}).Result()
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("scoringclient: history of %s shared with %s: %w", playerID, viewerID, err)
		}
		if len(zs) == 0 {
			exhausted = true
			break
		}
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i], _ = z.Member.(string)
		}
		// A game absent from playerID's list scores 0 (nil); end times are
		// Unix milliseconds, never 0.
		scores, err := r.rdb.ZMScore(ctx, PlayerGamesKey(playerID), ids...).Result()
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("scoringclient: history of %s shared with %s: %w", playerID, viewerID, err)
		}
		for i, s := range scores {
			scanned++
			lastScanned = zs[i].Score
			if s != 0 {
				shared = append(shared, ids[i])
				if len(shared) == limit {
					break
				}
			}
		}
		if len(zs) < sharedScanChunk && len(shared) < limit {
			exhausted = true
			break
		}
	}
	games, err = r.games(ctx, playerID, shared)
	if err != nil {
		return nil, time.Time{}, err
	}
	switch {
	case len(shared) == limit && len(games) > 0:
		next = games[len(games)-1].EndedAt
	case len(shared) == limit:
		next = time.UnixMilli(int64(lastScanned)) // every shared record expired
	case !exhausted:
		next = time.UnixMilli(int64(lastScanned))
	}
	return games, next, nil
}
