// Package scoringtest writes the scoring service's history read model as the
// scoring service does, for tests of its readers: the service's own writer
// is internal to it. It follows the contract in scoringclient (key names and
// record fields) and writes nothing else.
package scoringtest

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/scoringclient"
)

// Game is a finished game to put in history.
type Game struct {
	TableID, GameID string
	EndedAt         time.Time
	// Sheet is the encoded final Sheet; Standings the encoded
	// FinalStandings.
	Sheet, Standings []byte
	// PlayerIDs are the players whose lists name the game.
	PlayerIDs []string
}

// Archive writes g's record and adds it to its players' lists.
func Archive(ctx context.Context, rdb redis.Cmdable, g Game) error {
	if err := rdb.HSet(ctx, scoringclient.ResultKey(g.GameID),
		scoringclient.RecordFieldTable, g.TableID, scoringclient.RecordFieldEndedAt, g.EndedAt.UnixMilli(),
		scoringclient.RecordFieldSheet, g.Sheet, scoringclient.RecordFieldStandings, g.Standings).Err(); err != nil {
		return fmt.Errorf("scoringtest: archive %s: %w", g.GameID, err)
	}
	for _, p := range g.PlayerIDs {
		z := redis.Z{Score: float64(g.EndedAt.UnixMilli()), Member: g.GameID}
		if err := rdb.ZAdd(ctx, scoringclient.PlayerGamesKey(p), z).Err(); err != nil {
			return fmt.Errorf("scoringtest: archive %s for %s: %w", g.GameID, p, err)
		}
	}
	return nil
}
