package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/services/wallet/internal/store"
)

// Scripts pipelined after Redis forgot them (a restart, SCRIPT FLUSH) are
// sent again with their body: every call lands once.
func TestPipeline_ScriptsForgottenByRedisRunOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	st := store.New(rdb, time.Now, 2)
	ctx := context.Background()
	for round := range 3 {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				a := fmt.Sprint("acct-", i)
				o, err := st.Open(ctx, store.Op{ID: fmt.Sprint("open-", round), Digest: "d", Account: a}, 10)
				if err != nil {
					t.Error(err)
					return
				}
				if want := round == 0; o.Accepted() != want && o.Reason == 0 {
					t.Errorf("%s round %d: %+v", a, round, o)
				}
			})
		}
		wg.Wait()
	}
	for i := range 50 {
		a, err := st.ReadAccount(ctx, fmt.Sprint("acct-", i))
		if err != nil || a.Available != 10 || a.Seq != 1 {
			t.Fatalf("acct-%d: %+v %v", i, a, err)
		}
	}
}
