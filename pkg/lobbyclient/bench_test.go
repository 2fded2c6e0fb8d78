package lobbyclient

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	"google.golang.org/protobuf/types/known/timestamppb"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
)

func benchView(n int) *View {
	v := NewView(nil, ViewOptions{})
	for i := range n {
		s := &lobbyv1.TableSummary{
			TableId: fmt.Sprint("t", i), CreatedAt: timestamppb.New(time.Unix(int64(i), 0)),
			Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING,
			Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game(1 + i%2), ClassicVariant: lobbyv1.ClassicVariant(1 + i%3%2),
				Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}}},
			Seats: []*lobbyv1.Seat{{PlayerId: "a"}, {}, {}, {}},
		}
		v.tables[s.GetTableId()] = s
		v.sorted = append(v.sorted, s)
	}
	slices.SortFunc(v.sorted, newestFirst)
	return v
}

// BenchmarkView_List10k is one lobby page request on a gateway holding 10 000
// public tables (the sorted slice is cached between changes).
func BenchmarkView_List10k(b *testing.B) {
	v := benchView(10_000)
	f := &lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_CLASSIC, HasFreeSeat: true}
	v.List(f)
	for b.Loop() {
		if len(v.List(f)) == 0 {
			b.Fatal("no tables")
		}
	}
}

// BenchmarkView_ApplyUpdate10k is one LobbyUpdate (a table changed) applied
// to a view of 10 000 tables.
func BenchmarkView_ApplyUpdate10k(b *testing.B) {
	v := benchView(10_000)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		t := proto.CloneOf(v.tables[fmt.Sprint("t", i%10_000)])
		t.Name = fmt.Sprint(i)
		data, _ := proto.Marshal(&lobbyv1.LobbyUpdate{Version: v.version + 1, Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: t}})
		if !v.apply(ctx, redis.XMessage{ID: "1-1", Values: map[string]interface{}{"data": string(data)}}) {
			b.Fatal("update refused")
		}
		i++
	}
	if len(v.sorted) != 10_000 {
		b.Fatalf("%d tables after updates", len(v.sorted))
	}
}

// BenchmarkView_Watchers3k is one change of a gateway's view of 3,000
// listed tables followed by the window of each of its 1,000 lobby watchers,
// whose filter matches nothing (the worst walk: the whole list). "walk
// each" is each watcher walking the list itself (before issue 17's
// review), "shared" is Page, which walks once per change and filter.
func BenchmarkView_Watchers3k(b *testing.B) {
	const tables, watchers = 3000, 1000
	nothing := &lobbyv1.TableFilter{Status: lobbyv1.TableStatus_TABLE_STATUS_PLAYING}
	for _, bc := range []struct {
		name string
		page func(v *View) ([]*lobbyv1.TableSummary, bool)
	}{
		{"walk each", func(v *View) ([]*lobbyv1.TableSummary, bool) {
			v.mu.RLock()
			defer v.mu.RUnlock()
			return v.walkLocked(nothing, 0, 100)
		}},
		{"shared", func(v *View) ([]*lobbyv1.TableSummary, bool) { return v.Page(nothing, 0, 100) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v := benchView(tables)
			for b.Loop() {
				v.mu.Lock()
				v.notifyLocked() // a change: every watcher looks again
				v.mu.Unlock()
				for range watchers {
					if got, more := bc.page(v); len(got) != 0 || more {
						b.Fatal("the filter matched")
					}
				}
			}
		})
	}
}
