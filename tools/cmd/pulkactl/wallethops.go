package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
)

// The hops of a game's end on its way to the balances, each the Redis
// stream entry it leaves behind; an entry's ID is the Redis clock in
// milliseconds when it was appended, so consecutive hops' IDs give the time
// each took, handler and wait together, without any service's help.
var hopNames = []string{
	"scoring",    // the runner's GameEnded input → scoring's FinalStandings
	"forward",    // the standings → the SettleGame forwarded to the table's command shard (0: none)
	"collect",    // the SettleGame (or the standings) → the first STAKE_SETTLED ledger entry
	"pay",        // the first STAKE_SETTLED → the last PAYOUT ledger entry
	"close",      // the last PAYOUT → the table's GameSettled
	"end→ledger", // the whole way in Redis: GameEnded input → last PAYOUT
}

// gameHops are the entry times (ms) of one settled game, in hop order:
// ended, standings, forwarded, first ledger, last ledger, settled.
type gameHops struct {
	table, game string
	at          [6]int64
}

// runWalletHops is "pulkactl wallet hops": per-hop times of the settled
// games still in Redis's streams.
func runWalletHops(ctx context.Context, rdb redis.UniversalClient, stdout io.Writer) error {
	games, err := collectHops(ctx, rdb)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "%d settled games with every hop still in the streams\n", len(games))
	if len(games) == 0 {
		return nil
	}
	_, _ = fmt.Fprintf(stdout, "%-11s %7s %7s %7s %7s %7s %7s  (ms, from stream entry IDs)\n", "hop", "p50", "p90", "p99", "max", "mean", "≥100")
	for h, name := range hopNames {
		var d []int64
		for _, g := range games {
			if h == len(hopNames)-1 {
				d = append(d, g.at[4]-g.at[0])
			} else {
				d = append(d, g.at[h+1]-g.at[h])
			}
		}
		slices.Sort(d)
		var sum int64
		slow := 0
		for _, x := range d {
			sum += x
			if x >= 100 {
				slow++
			}
		}
		// Nearest rank: the smallest value with at least p of them at or below it.
		q := func(p float64) int64 { return d[max(0, int(math.Ceil(p*float64(len(d))))-1)] }
		_, _ = fmt.Fprintf(stdout, "%-11s %7d %7d %7d %7d %7.1f %7d\n", name, q(0.5), q(0.9), q(0.99), d[len(d)-1],
			float64(sum)/float64(len(d)), slow)
	}
	return nil
}

func entryMs(id string) int64 {
	t, ok := scoringclient.EntryTime(id)
	if !ok {
		return 0
	}
	return t.UnixMilli()
}

func collectHops(ctx context.Context, rdb redis.UniversalClient) ([]gameHops, error) {
	type key struct{ table, game string }
	byGame := map[key]*gameHops{}
	players := map[key][]string{}
	// The settled games: one GameSettled per table's settled stream.
	var settled []string
	iter := rdb.Scan(ctx, 0, streams.KeyPrefix+":{t:*}:wallet:settled", 1000).Iterator()
	for iter.Next(ctx) {
		settled = append(settled, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("wallet hops: scan: %w", err)
	}
	for _, s := range settled {
		xs, err := rdb.XRange(ctx, s, "-", "+").Result()
		if err != nil {
			return nil, fmt.Errorf("wallet hops: %s: %w", s, err)
		}
		for _, x := range xs {
			gs := &walletv1.GameSettled{}
			if err := proto.Unmarshal(data(x), gs); err != nil || gs.GetReleased() {
				continue
			}
			g := &gameHops{table: gs.GetTableId(), game: gs.GetGameId()}
			g.at[5] = entryMs(x.ID)
			byGame[key{g.table, g.game}] = g
		}
	}
	// scan calls f with every entry of stream, oldest first.
	scan := func(stream string, f func(x redis.XMessage)) error {
		from := "-"
		for {
			xs, err := rdb.XRangeN(ctx, stream, from, "+", 1000).Result()
			if err != nil {
				return fmt.Errorf("wallet hops: %s: %w", stream, err)
			}
			for _, x := range xs {
				f(x)
			}
			if len(xs) < 1000 {
				return nil
			}
			from = "(" + xs[len(xs)-1].ID
		}
	}
	err := scan(scoringclient.HandsStream, func(x redis.XMessage) {
		in := &scoringv1.ScoringInput{}
		if proto.Unmarshal(data(x), in) != nil || in.GetGameEnded() == nil {
			return
		}
		if g := byGame[key{in.GetTableId(), in.GetGameId()}]; g != nil && g.at[0] == 0 {
			g.at[0] = entryMs(x.ID)
		}
	})
	if err != nil {
		return nil, err
	}
	err = scan(scoringclient.StandingsStream, func(x redis.XMessage) {
		fs := &scoringv1.FinalStandings{}
		if proto.Unmarshal(data(x), fs) != nil {
			return
		}
		k := key{fs.GetTableId(), fs.GetGameId()}
		if g := byGame[k]; g != nil && g.at[1] == 0 {
			g.at[1] = entryMs(x.ID)
			for _, s := range fs.GetStandings() {
				players[k] = append(players[k], s.GetPlayerId())
			}
		}
	})
	if err != nil {
		return nil, err
	}
	shards := map[string]bool{}
	for k := range byGame {
		shards[walletclient.CommandStreamForTable(k.table)] = true
	}
	for s := range shards {
		err := scan(s, func(x redis.XMessage) {
			cmd := &walletv1.WalletCommand{}
			if proto.Unmarshal(data(x), cmd) != nil || cmd.GetSettleGame() == nil {
				return
			}
			fs := cmd.GetSettleGame().GetStandings()
			if g := byGame[key{fs.GetTableId(), fs.GetGameId()}]; g != nil && g.at[2] == 0 {
				g.at[2] = entryMs(x.ID)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	// The ledger entries of the game's players: the settlement's first
	// (a STAKE_SETTLED) and last (a PAYOUT) with its table and game.
	for k, g := range byGame {
		for _, p := range players[k] {
			if p == "" {
				continue
			}
			err := scan(walletclient.LedgerStream(p), func(x redis.XMessage) {
				if x.Values[walletclient.FieldTable] != k.table || x.Values[walletclient.FieldGame] != k.game {
					return
				}
				kind := fmt.Sprint(x.Values[walletclient.FieldKind])
				ms := entryMs(x.ID)
				switch kind {
				case fmt.Sprint(int32(walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_STAKE_SETTLED)):
					if g.at[3] == 0 || ms < g.at[3] {
						g.at[3] = ms
					}
				case fmt.Sprint(int32(walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT)):
					g.at[4] = max(g.at[4], ms)
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	var out []gameHops
	for _, g := range byGame {
		if g.at[2] == 0 && g.at[1] != 0 {
			// A wallet that settles the standings where it reads them
			// forwards nothing: collect then counts from the standings.
			g.at[2] = g.at[1]
		}
		if !slices.Contains(g.at[:], 0) {
			out = append(out, *g)
		}
	}
	slices.SortFunc(out, func(a, b gameHops) int { return int(a.at[0] - b.at[0]) })
	return out, nil
}

func data(x redis.XMessage) []byte {
	s, _ := x.Values[streams.FieldData].(string)
	return []byte(s)
}
