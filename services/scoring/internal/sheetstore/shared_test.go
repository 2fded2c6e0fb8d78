package sheetstore_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

// Paging another player's history must reveal nothing of the games the
// viewer did not play in: not the games, not their end times as a cursor.
func TestSharedHistory_PagesOnlySharedGamesAndNeverTheOthersEndTimes(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		base := time.UnixMilli(1_700_000_000_000)
		private := map[int64]bool{}
		// u-b plays 9 games; u-a is at games 2 and 6 only.
		for i := 0; i < 9; i++ {
			players := []string{"u-b", "u-c"}
			if i == 2 || i == 6 {
				players = append(players, "u-a")
			}
			ended := base.Add(time.Duration(i) * time.Minute)
			if len(players) == 2 {
				private[ended.UnixMilli()] = true
			}
			if err := w.Archive(ctx, sheetstore.Record{TableID: "t1", GameID: "g" + string(rune('0'+i)), EndedAt: ended,
				Sheet: []byte{}, Standings: []byte{}, PlayerIDs: players}); err != nil {
				t.Fatal(err)
			}
		}
		r := scoringclient.NewReader(rdb)
		var got []string
		before := time.Time{}
		for page := 0; page < 10; page++ {
			gs, next, err := r.SharedHistory(ctx, "u-b", "u-a", scoringclient.Page{Before: before, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range gs {
				got = append(got, g.GameID)
			}
			if private[next.UnixMilli()] {
				t.Fatalf("page %d: the cursor %v is the end of a game u-a did not play", page, next)
			}
			if next.IsZero() {
				break
			}
			before = next
		}
		if len(got) != 2 || got[0] != "g6" || got[1] != "g2" {
			t.Fatalf("shared games = %v, want [g6 g2]", got)
		}
		if gs, next, err := r.SharedHistory(ctx, "u-b", "u-z", scoringclient.Page{Limit: 5}); err != nil || len(gs) != 0 || !next.IsZero() {
			t.Fatalf("a stranger: %v %v %v", gs, next, err)
		}
		if _, _, err := r.SharedHistory(ctx, "u-b", "bad{id}", scoringclient.Page{}); err == nil {
			t.Fatal("a bad viewer id is accepted")
		}
	})
}

// A scan that stops at its bound resumes where it stopped, from a game of
// the viewer's own.
func TestSharedHistory_ScanIsBounded(t *testing.T) {
	srvBackend := func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		base := time.UnixMilli(1_700_000_000_000)
		pipe := rdb.Pipeline()
		for i := 0; i < scoringclient.SharedScanLimit+5; i++ {
			pipe.ZAdd(ctx, scoringclient.PlayerGamesKey("u-a"), redis.Z{Score: float64(base.Add(time.Duration(i) * time.Second).UnixMilli()), Member: "a" + time.Duration(i).String()})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		gs, next, err := scoringclient.NewReader(rdb).SharedHistory(ctx, "u-b", "u-a", scoringclient.Page{Limit: 10})
		if err != nil || len(gs) != 0 {
			t.Fatalf("%v %v", gs, err)
		}
		want := base.Add(5 * time.Second).UnixMilli() // the oldest scanned
		if next.UnixMilli() != want {
			t.Fatalf("next = %d, want %d", next.UnixMilli(), want)
		}
	}
	backends(t, srvBackend)
}
