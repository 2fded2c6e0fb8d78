package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
)

// Issue 19: 10,000 operations, each sent two or three times at once from
// many clients, through the running service: every invariant holds, each is
// applied exactly once, and the ledger is the reference model's.
func TestService_TenThousandOperationsSentTwoOrThreeTimes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	startService(t, srv.Addr(), "-reclaim-idle", "2s", "-repair-grace", "2s", "-audit-interval", "0")
	cs := clients(t, rdb, 8, 10*time.Second)
	r := rand.New(rand.NewPCG(10_000, 19))
	wl := &workload{r: r}
	for i := range 200 {
		wl.accounts = append(wl.accounts, fmt.Sprintf("acc-%d", i))
	}
	ops := 0
	var all []*walletv1.WalletCommand
	check := func(res map[string][]*walletv1.WalletResult) {
		for id, rs := range res {
			checkOnce(t, id, rs)
		}
	}
	opens := wl.open()
	check(sendAll(t, r, cs, opens))
	all = append(all, opens...)
	ops += len(opens)

	// Tables run in parallel, 64 at a time, each in its phases.
	var games [][][]*walletv1.WalletCommand
	for i := 0; ops < 10_000; i++ {
		g := wl.game(i)
		for _, ph := range g {
			ops += len(ph)
		}
		games = append(games, g)
	}
	var mu sync.Mutex
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for gi, g := range games {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rr := rand.New(rand.NewPCG(uint64(gi), 7))
			for _, ph := range g {
				res := sendAll(t, rr, cs, ph)
				mu.Lock()
				check(res)
				mu.Unlock()
			}
		})
		for _, ph := range g {
			all = append(all, ph...)
		}
	}
	wg.Wait()
	t.Logf("%d operations in %d games, each sent 2-3 times", ops, len(games))
	w := newTestWallet(t, rdb, &clock{t: time.Now()}, 0)
	checkAgainstModel(t, context.Background(), w, rdb, all)
}
