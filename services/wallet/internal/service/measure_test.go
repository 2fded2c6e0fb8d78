package service

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
)

// TestMeasure_GameEndToBalances measures the time from a game's
// FinalStandings (appended to scoring's stream, as scoring does) to its
// GameSettled on the table's settled stream, which the wallet appends after
// the last payment: an upper bound of "game end → balances updated".
// WALLET_MEASURE_GAMES (default 1,000) four-player coin tables end at
// WALLET_MEASURE_RATE games/s (default 100)
// while WALLET_MEASURE_OPS holds and releases per second (default 2,000)
// go through the command shards, against the wallet under the daemon and a
// Redis with appendfsync always (WALLET_MEASURE_AOF=0: without). Run with
//
//	WALLET_MEASURE=1 go test -run TestMeasure -v ./internal/service/
func TestMeasure_GameEndToBalances(t *testing.T) {
	if os.Getenv("WALLET_MEASURE") == "" {
		t.Skip("a measurement: WALLET_MEASURE=1")
	}
	envInt := func(k string, def int) int {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return n
		}
		return def
	}
	rate, opsRate := envInt("WALLET_MEASURE_RATE", 100), envInt("WALLET_MEASURE_OPS", 2000)
	tables := envInt("WALLET_MEASURE_GAMES", 1000)
	var opts []redistest.Option
	if os.Getenv("WALLET_MEASURE_AOF") != "0" {
		opts = append(opts, redistest.WithPersistence())
	}
	srv := redistest.Start(t, opts...)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 64 })
	startService(t, srv.Addr(), "-audit-interval", "0")
	ctx := context.Background()

	// Set up directly (not measured): 4,000 players holding at 1,000 tables.
	w := New(rdb, Options{SignupGrant: 1000, Location: time.UTC, PotTTL: time.Hour, Flushers: 4}, nil)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range tables {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			for s := range 4 {
				a := fmt.Sprintf("p%d-%d", i, s)
				for _, c := range []*walletv1.WalletCommand{
					{CommandId: "o", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: a}}},
					{CommandId: "h", Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: a, TableId: fmt.Sprint("m", i), Amount: 100, Game: lobbyv1.Game_GAME_CLASSIC}}},
				} {
					if res, err := w.Apply(ctx, c); err != nil || !res.GetAccepted() {
						t.Errorf("%v %v", res, err)
					}
				}
			}
		})
	}
	wg.Wait()

	// The settled stream is followed; each table's latency is taken when
	// its GameSettled arrives.
	var mu sync.Mutex
	sent := map[string]time.Time{}
	var lat []time.Duration
	all := make(chan struct{})
	tail := streams.NewTailer(rdb, func(_ context.Context, m streams.Message) {
		gs := &walletv1.GameSettled{}
		if proto.Unmarshal(m.Data, gs) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if at, ok := sent[gs.GetTableId()]; ok {
			lat = append(lat, time.Since(at))
			if len(lat) == tables {
				close(all)
			}
		}
	})
	tctx, stopTail := context.WithCancel(ctx)
	defer stopTail()
	for i := range tables {
		if err := tail.Add(ctx, walletclient.SettledStream(fmt.Sprint("m", i)), "0"); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = tail.Run(tctx) }()

	// Background: holds and releases of other accounts through the shards.
	bgCtx, stopBg := context.WithCancel(ctx)
	defer stopBg()
	pub := streams.NewPublisher(rdb)
	batcher := pub.NewBatcher(bgCtx, 256, 2)
	for i := range 200 {
		a := fmt.Sprint("bg", i)
		if _, err := w.Apply(ctx, &walletv1.WalletCommand{CommandId: "o", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: a}}}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-bgCtx.Done():
				return
			case <-tick.C:
			}
			for range opsRate / 100 {
				n++
				a, table := fmt.Sprint("bg", n%200), fmt.Sprint("bgt", n/400)
				c := &walletv1.WalletCommand{CommandId: fmt.Sprint("bg-", n)}
				if (n/200)%2 == 0 {
					c.Command = &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: a, TableId: table, Amount: 1, Game: lobbyv1.Game_GAME_CLASSIC}}
				} else {
					c.Command = &walletv1.WalletCommand_ReleaseHold{ReleaseHold: &walletv1.ReleaseHold{AccountId: a, TableId: table}}
				}
				e, _ := walletclient.Entry(c)
				go func() { _, _ = batcher.Publish(bgCtx, e) }()
			}
		}
	}()
	time.Sleep(time.Second)

	// The games end, paced (open loop).
	start := time.Now()
	for i := range tables {
		due := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		time.Sleep(time.Until(due))
		fs := &scoringv1.FinalStandings{TableId: fmt.Sprint("m", i), GameId: "g"}
		for s := range 4 {
			fs.Standings = append(fs.Standings, &scoringv1.Standing{Seat: uint32(s), Place: uint32(s + 1), PlayerId: fmt.Sprintf("p%d-%d", i, s)})
		}
		data, _ := proto.Marshal(fs)
		mu.Lock()
		sent[fs.GetTableId()] = time.Now()
		mu.Unlock()
		if _, err := pub.Publish(ctx, streams.Entry{Stream: scoringclient.StandingsStream, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-all:
	case <-time.After(2 * time.Minute):
		t.Fatalf("only %d of %d games settled", len(lat), tables)
	}
	stopBg()
	mu.Lock()
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	t.Logf("AOF %v: %d games at %d/s with %d ops/s beside: game end → GameSettled p50 %v, p90 %v, p99 %v, max %v",
		len(opts) > 0, len(lat), rate, opsRate, q(0.5), q(0.9), q(0.99), lat[len(lat)-1])
	mu.Unlock()
	rep, err := w.Audit(ctx)
	if err != nil || !rep.GetOk() {
		t.Fatalf("audit %v %v", rep, err)
	}
}
