package sheetstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
)

// Reader reads the scoring service's working state. Other services read
// its read models with scoringclient.Reader instead.
type Reader struct {
	rdb redis.UniversalClient
}

// NewReader makes a reader.
func NewReader(rdb redis.UniversalClient) *Reader { return &Reader{rdb: rdb} }

// Sheet returns the committed sheet of a game (live or finished) while its
// working keys last, with its version; scoringclient.ErrNotFound when there
// is none.
func (r *Reader) Sheet(ctx context.Context, tableID, gameID string) (*scoringv1.Sheet, uint64, error) {
	if err := errors.Join(scoringclient.CheckID("table", tableID), scoringclient.CheckID("game", gameID)); err != nil {
		return nil, 0, err
	}
	h, err := r.rdb.HGetAll(ctx, SheetKey(tableID, gameID)).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("sheetstore: sheet %s/%s: %w", tableID, gameID, err)
	}
	if len(h) == 0 {
		return nil, 0, fmt.Errorf("%w: sheet %s/%s", scoringclient.ErrNotFound, tableID, gameID)
	}
	c, err := parseCommitted(h)
	if err != nil {
		return nil, 0, fmt.Errorf("sheetstore: %s: %w", SheetKey(tableID, gameID), err)
	}
	s := &scoringv1.Sheet{}
	if err := proto.Unmarshal(c.Sheet, s); err != nil {
		return nil, 0, fmt.Errorf("sheetstore: sheet %s/%s: %w", tableID, gameID, err)
	}
	return s, c.Version, nil
}
