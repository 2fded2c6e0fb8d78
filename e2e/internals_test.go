package e2e

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/streams"
)

// The end-to-end checks of exactly-once storage and of the lobby's limits
// look inside the services, which no other package does: the services'
// working keys are their own (services/scoring/internal/sheetstore,
// services/lobby/internal/store) and only these checks spell them, here.

// Lobby keys.
const (
	// lobbyKeysPattern matches every key of the lobby.
	lobbyKeysPattern = "pulka:{lobby}:*"
	// lobbyCreateRatePrefix + a player id counts the player's recent
	// table creations.
	lobbyCreateRatePrefix = "pulka:{lobby}:rate:create:"
)

func scoringGameKey(tableID, gameID, part string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(tableID) + ":scoring:" + gameID + ":" + part
}

// scoringHandsKey is the hash of a game's stored hand results by index.
func scoringHandsKey(tableID, gameID string) string { return scoringGameKey(tableID, gameID, "hands") }

// storedSheet reads the sheet the scoring service committed for a game, and
// its version (fields v and sheet of its sheet hash).
func storedSheet(ctx context.Context, rdb redis.Cmdable, tableID, gameID string) (*scoringv1.Sheet, uint64, error) {
	h, err := rdb.HGetAll(ctx, scoringGameKey(tableID, gameID, "sheet")).Result()
	if err != nil {
		return nil, 0, err
	}
	if len(h) == 0 {
		return nil, 0, fmt.Errorf("no sheet stored for %s/%s", tableID, gameID)
	}
	v, err := strconv.ParseUint(h["v"], 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("stored sheet %s/%s: version %q: %w", tableID, gameID, h["v"], err)
	}
	s := &scoringv1.Sheet{}
	if err := proto.Unmarshal([]byte(h["sheet"]), s); err != nil {
		return nil, 0, fmt.Errorf("stored sheet %s/%s: %w", tableID, gameID, err)
	}
	return s, v, nil
}
