package sheetstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

func TestKeys_EveryTableKeySharesTheTableSlot(t *testing.T) {
	tid, gid := "42", "g-7"
	slot := streams.HashSlot(streams.TableTag(tid))
	for _, k := range []string{
		scoringclient.SheetStream(tid), sheetstore.StartKey(tid, gid), sheetstore.HandsKey(tid, gid),
		sheetstore.EndKey(tid, gid), sheetstore.SheetKey(tid, gid),
	} {
		if !strings.Contains(k, "{t:42}") || streams.HashSlot(k) != slot {
			t.Errorf("%s is not in table 42's slot", k)
		}
	}
	if got := scoringclient.SheetStream(tid); got != "pulka:{t:42}:sheet" {
		t.Errorf("SheetStream = %s, want the services-design name pulka:{t:42}:sheet", got)
	}
}

func TestStoreHand_StoredOnceWhateverIsRedelivered(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		first, err := w.StoreHand(ctx, "t1", "g1", 3, []byte("first"), "m1")
		if err != nil || !first.Applied {
			t.Fatalf("first store: %+v %v", first, err)
		}
		again, err := w.StoreHand(ctx, "t1", "g1", 3, []byte("second"), "m2")
		if err != nil || again.Applied || again.Mark != "m1" {
			t.Fatalf("redelivery: %+v %v, want not applied with the first mark", again, err)
		}
		// Even once the dedupe key has expired, a stored hand is not
		// overwritten.
		keys, _ := scanAll(ctx, rdb, "pulka:{t:t1}:dedupe:*")
		for _, k := range keys {
			rdb.Del(ctx, k)
		}
		late, err := w.StoreHand(ctx, "t1", "g1", 3, []byte("third"), "m3")
		if err != nil {
			t.Fatal(err)
		}
		if late.Applied {
			t.Fatal("a late redelivery reported storing a hand that was already stored")
		}
		g, err := w.Load(ctx, "t1", "g1")
		if err != nil {
			t.Fatal(err)
		}
		if string(g.Hands[3]) != "first" || len(g.Hands) != 1 {
			t.Fatalf("stored hands %v, want only hand 3 = first", g.Hands)
		}
		if ttl := rdb.PTTL(ctx, sheetstore.HandsKey("t1", "g1")).Val(); ttl <= 0 {
			t.Fatalf("hands key has no TTL (%s): an abandoned game would stay forever", ttl)
		}
	})
}

func TestStoreStartAndEnd_OnceEach(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		for i, want := range []bool{true, false} {
			s, err := w.StoreStart(ctx, "t1", "g1", []byte(fmt.Sprint("start", i)), fmt.Sprint("m", i))
			if err != nil || s.Applied != want {
				t.Fatalf("start #%d: %+v %v", i, s, err)
			}
			e, err := w.StoreEnd(ctx, "t1", "g1", []byte(fmt.Sprint("end", i)), fmt.Sprint("m", i))
			if err != nil || e.Applied != want {
				t.Fatalf("end #%d: %+v %v", i, e, err)
			}
		}
		g, err := w.Load(ctx, "t1", "g1")
		if err != nil {
			t.Fatal(err)
		}
		if string(g.Start) != "start0" || string(g.End) != "end0" || g.Committed.Version != 0 {
			t.Fatalf("loaded %+v", g)
		}
		empty, err := w.Load(ctx, "t1", "other")
		if err != nil || empty.Start != nil || empty.End != nil || len(empty.Hands) != 0 {
			t.Fatalf("unknown game: %+v %v", empty, err)
		}
	})
}

func TestCommit_PublishesEachNewerVersionOnce(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		commit := func(v uint64) sheetstore.CommitResult {
			t.Helper()
			r, err := w.Commit(ctx, "t1", "g1", sheetstore.Commit{
				Version: v, Sheet: sheetBytes(t, v), Update: updateBytes(t, v),
			})
			if err != nil {
				t.Fatalf("commit v%d: %v", v, err)
			}
			return r
		}
		for _, step := range []struct {
			v         uint64
			published bool
			stored    uint64
		}{{1, true, 1}, {3, true, 3}, {2, false, 3}, {3, false, 3}, {5, true, 5}} {
			r := commit(step.v)
			if r.Published != step.published || r.Committed.Version != step.stored {
				t.Fatalf("commit v%d: %+v, want published=%v stored v%d", step.v, r, step.published, step.stored)
			}
		}
		xs := rdb.XRange(ctx, scoringclient.SheetStream("t1"), "-", "+").Val()
		var got []uint64
		for _, x := range xs {
			u, err := scoringclient.DecodeUpdate(streams.Message{Data: []byte(x.Values[streams.FieldData].(string))})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, u.GetVersion())
		}
		if fmt.Sprint(got) != "[1 3 5]" {
			t.Fatalf("published versions %v, want [1 3 5]", got)
		}
		s, v, err := sheetstore.NewReader(rdb).Sheet(ctx, "t1", "g1")
		if err != nil || v != 5 || s.GetCurrentHand() != 5 {
			t.Fatalf("Sheet: v%d %v %v", v, s, err)
		}
		u, id, err := scoringclient.NewReader(rdb).Latest(ctx, "t1")
		if err != nil || u.GetVersion() != 5 || id != xs[len(xs)-1].ID {
			t.Fatalf("Latest: %v %s %v", u, id, err)
		}
	})
}

func TestCommit_FinalSheetIsFrozenWithItsEndTime(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		t1 := time.UnixMilli(1_700_000_000_123)
		r, err := w.Commit(ctx, "t1", "g1", sheetstore.Commit{Version: 4, Final: true, EndedAt: t1,
			Sheet: sheetBytes(t, 4), Update: updateBytes(t, 4), Standings: []byte("standings-4")})
		if err != nil || !r.Published || !r.Committed.Final || !r.Committed.EndedAt.Equal(t1) ||
			string(r.Committed.Standings) != "standings-4" {
			t.Fatalf("final commit: %+v %v", r, err)
		}
		// A later commit — newer version, other end time — is refused and
		// reports the frozen sheet.
		r, err = w.Commit(ctx, "t1", "g1", sheetstore.Commit{Version: 9, Final: true, EndedAt: t1.Add(time.Hour),
			Sheet: sheetBytes(t, 9), Update: updateBytes(t, 9), Standings: []byte("standings-9")})
		if err != nil || r.Published || r.Committed.Version != 4 || !r.Committed.EndedAt.Equal(t1) ||
			string(r.Committed.Standings) != "standings-4" {
			t.Fatalf("commit after final: %+v %v", r, err)
		}
		var s scoringv1.Sheet
		if err := proto.Unmarshal(r.Committed.Sheet, &s); err != nil || s.GetCurrentHand() != 4 {
			t.Fatalf("refused commit should return the stored final sheet, got %v %v", &s, err)
		}
		if n := rdb.XLen(ctx, scoringclient.SheetStream("t1")).Val(); n != 1 {
			t.Fatalf("sheet stream has %d entries, want 1", n)
		}
		g, err := w.Load(ctx, "t1", "g1")
		if err != nil || !g.Committed.Final || string(g.Committed.Standings) != "standings-4" || !g.Committed.EndedAt.Equal(t1) {
			t.Fatalf("Load after final: %+v %v", g.Committed, err)
		}
	})
}

func TestCommit_EntryCarriesTheTraceContext(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		tp := sdktrace.NewTracerProvider()
		ctx, span := tp.Tracer("test").Start(ctxT(t), "commit")
		defer span.End()
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		if _, err := w.Commit(ctx, "t1", "g1", sheetstore.Commit{Version: 1, Sheet: sheetBytes(t, 1), Update: updateBytes(t, 1)}); err != nil {
			t.Fatal(err)
		}
		xs := rdb.XRange(ctx, scoringclient.SheetStream("t1"), "-", "+").Val()
		tp0, _ := xs[0].Values[streams.FieldTraceParent].(string)
		if !strings.Contains(tp0, span.SpanContext().TraceID().String()) {
			t.Fatalf("traceparent %q does not carry trace %s", tp0, span.SpanContext().TraceID())
		}
	})
}

func TestPublishStandings_OncePerGame(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		data, _ := proto.Marshal(&scoringv1.FinalStandings{TableId: "t1", GameId: "g1"})
		var published int
		for i := range 3 {
			ok, err := w.PublishStandings(ctx, "g1", data, fmt.Sprint("m", i))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				published++
			}
		}
		if ok, err := w.PublishStandings(ctx, "g2", data, "m"); err != nil || !ok {
			t.Fatalf("another game: %v %v", ok, err)
		}
		if n := rdb.XLen(ctx, scoringclient.StandingsStream).Val(); published != 1 || n != 2 {
			t.Fatalf("published %d times for g1, stream has %d entries; want 1 and 2", published, n)
		}
	})
}

func TestArchive_HistoryNewestFirstPagedAndIdempotent(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{HistoryPerPlayer: 3})
		base := time.UnixMilli(1_700_000_000_000)
		archive := func(i int, players ...string) {
			t.Helper()
			gid := fmt.Sprint("g", i)
			st, _ := proto.Marshal(&scoringv1.FinalStandings{TableId: "t1", GameId: gid,
				Standings: []*scoringv1.Standing{{Place: 1, Seat: 0, PlayerId: players[0], Total: int64(i)}}})
			err := w.Archive(ctx, sheetstore.Record{TableID: "t1", GameID: gid, EndedAt: base.Add(time.Duration(i) * time.Minute),
				Sheet: sheetBytes(t, uint64(i)), Standings: st, PlayerIDs: players})
			if err != nil {
				t.Fatal(err)
			}
		}
		archive(1, "ana", "levan")
		archive(2, "ana")
		archive(2, "ana") // redelivered
		archive(3, "ana", "levan")
		r := scoringclient.NewReader(rdb)
		games := func(p scoringclient.Page, player string) string {
			t.Helper()
			gs, err := r.History(ctx, player, p)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, g := range gs {
				ids = append(ids, g.GameID)
			}
			return strings.Join(ids, ",")
		}
		if got := games(scoringclient.Page{}, "ana"); got != "g3,g2,g1" {
			t.Fatalf("ana's history %s, want g3,g2,g1", got)
		}
		if got := games(scoringclient.Page{Limit: 2}, "ana"); got != "g3,g2" {
			t.Fatalf("first page %s", got)
		}
		if got := games(scoringclient.Page{Before: base.Add(2 * time.Minute), Limit: 2}, "ana"); got != "g1" {
			t.Fatalf("second page %s, want g1", got)
		}
		if got := games(scoringclient.Page{}, "levan"); got != "g3,g1" {
			t.Fatalf("levan's history %s", got)
		}
		if got := games(scoringclient.Page{}, "nobody"); got != "" {
			t.Fatalf("unknown player's history %q", got)
		}
		// The list keeps the newest HistoryPerPlayer games.
		archive(4, "ana")
		if got := games(scoringclient.Page{}, "ana"); got != "g4,g3,g2" {
			t.Fatalf("trimmed history %s, want g4,g3,g2", got)
		}
		g, err := r.Game(ctx, "g3")
		if err != nil || g.TableID != "t1" || !g.EndedAt.Equal(base.Add(3*time.Minute)) ||
			g.Sheet.GetCurrentHand() != 3 || g.Standings.GetStandings()[0].GetTotal() != 3 {
			t.Fatalf("Game(g3) = %+v, %v", g, err)
		}
		// A record that expired is skipped, not an error.
		rdb.Del(ctx, scoringclient.ResultKey("g3"))
		if got := games(scoringclient.Page{}, "ana"); got != "g4,g2" {
			t.Fatalf("history with an expired record %s", got)
		}
		if _, err := r.Game(ctx, "g3"); !errors.Is(err, scoringclient.ErrNotFound) {
			t.Fatalf("expired game: %v, want ErrNotFound", err)
		}
		if _, err := r.History(ctx, "a{b", scoringclient.Page{}); !errors.Is(err, scoringclient.ErrBadID) {
			t.Fatalf("bad player id: %v", err)
		}
	})
}

func TestLatest_NotFoundBeforeAnySheet(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		if _, _, err := scoringclient.NewReader(rdb).Latest(ctxT(t), "t9"); !errors.Is(err, scoringclient.ErrNotFound) {
			t.Fatalf("Latest on a table without sheets: %v", err)
		}
		if _, _, err := sheetstore.NewReader(rdb).Sheet(ctxT(t), "t9", "g9"); !errors.Is(err, scoringclient.ErrNotFound) {
			t.Fatalf("Sheet of an unknown game: %v", err)
		}
	})
}

func sheetBytes(t *testing.T, v uint64) []byte {
	t.Helper()
	b, err := proto.Marshal(&scoringv1.Sheet{TableId: "t1", GameId: "g1", CurrentHand: uint32(v)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func updateBytes(t *testing.T, v uint64) []byte {
	t.Helper()
	b, err := proto.Marshal(&scoringv1.SheetUpdate{Version: v, Sheet: &scoringv1.Sheet{CurrentHand: uint32(v)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scanAll(ctx context.Context, rdb redis.UniversalClient, match string) ([]string, error) {
	var out []string
	collect := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, match, 100).Iterator()
		for it.Next(ctx) {
			out = append(out, it.Val())
		}
		return it.Err()
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err := cc.ForEachMaster(ctx, collect)
		return out, err
	}
	return out, collect(ctx, rdb.(*redis.Client))
}

// A published sheet update rings its stream's bell, so the gateways'
// Tailers read it at once (not at their next sweep); a refused one does not.
func TestCommit_RingsTheSheetStreamsBell(t *testing.T) {
	backends(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := ctxT(t)
		ps := rdb.Subscribe(ctx, streams.Bell(scoringclient.SheetStream("t1")))
		defer ps.Close()
		if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
			t.Fatal(err)
		}
		w := sheetstore.NewWriter(rdb, sheetstore.WriterOptions{})
		for _, v := range []uint64{2, 1} {
			if _, err := w.Commit(ctx, "t1", "g1", sheetstore.Commit{Version: v, Sheet: sheetBytes(t, v), Update: updateBytes(t, v)}); err != nil {
				t.Fatalf("commit v%d: %v", v, err)
			}
		}
		if _, err := ps.ReceiveTimeout(ctx, 2*time.Second); err != nil {
			t.Fatalf("no bell after a published update: %v", err)
		}
		if m, err := ps.ReceiveTimeout(ctx, 200*time.Millisecond); err == nil {
			t.Fatalf("a refused (older) update rang the bell too: %v", m)
		}
	})
}
