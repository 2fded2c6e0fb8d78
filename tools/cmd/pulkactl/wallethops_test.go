package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
)

// wallet hops reads each hop's time from the entry IDs: a game whose
// entries were appended at known milliseconds gives exactly those hops; one
// settled without a forward counts collect from the standings; a game with
// a hop missing (trimmed away) is left out.
func TestWalletHops_TimesEachHopFromTheEntryIDs(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	add := func(stream string, ms int64, values ...any) {
		t.Helper()
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: fmt.Sprintf("%d-0", ms), Values: values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	enc := func(m proto.Message) []byte { b, _ := proto.Marshal(m); return b }
	kind := func(k walletv1.LedgerEntryKind) string { return fmt.Sprint(int32(k)) }
	// game lays a game's trail: ended at 1000+base, standings +s, forward
	// +f (0: none), ledger entries +c and +p, settled +d.
	game := func(table string, base, s, f, c, p, d int64, players ...string) {
		g := "g-" + table
		add(scoringclient.HandsStream, base, streams.FieldData, enc(&scoringv1.ScoringInput{TableId: table, GameId: g,
			Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{Completed: true}}}))
		fs := &scoringv1.FinalStandings{TableId: table, GameId: g}
		for i, pl := range players {
			fs.Standings = append(fs.Standings, &scoringv1.Standing{Place: uint32(i + 1), PlayerId: pl})
		}
		add(scoringclient.StandingsStream, base+s, streams.FieldData, enc(fs))
		if f > 0 {
			add(walletclient.CommandStreamForTable(table), base+f, streams.FieldData, enc(&walletv1.WalletCommand{
				Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}}))
		}
		for i, pl := range players {
			add(walletclient.LedgerStream(pl), base+c+int64(i), walletclient.FieldTable, table, walletclient.FieldGame, g,
				walletclient.FieldKind, kind(walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_STAKE_SETTLED))
		}
		add(walletclient.LedgerStream(players[0]), base+p, walletclient.FieldTable, table, walletclient.FieldGame, g,
			walletclient.FieldKind, kind(walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT))
		add(walletclient.SettledStream(table), base+d, streams.FieldData, enc(&walletv1.GameSettled{TableId: table, GameId: g}))
	}
	game("t1", 1000, 40, 45, 50, 60, 62, "ana", "beso")
	game("t2", 2000, 10, 0, 20, 30, 31, "gela", "dato") // settled where read: no forward
	// t3's standings were trimmed away: left out.
	add(walletclient.SettledStream("t3"), 3000, streams.FieldData, enc(&walletv1.GameSettled{TableId: "t3", GameId: "g-t3"}))

	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"wallet", "-redis", srv.Addr(), "hops"}, nil, &out, &errOut); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	// Two games: the max of each hop is the larger of the two.
	for _, want := range []string{
		`2 settled games`,
		`scoring\s+10\s+40\s+40\s+40\s+25\.0`,
		`forward\s+0\s+5\s+5\s+5\s+2\.5`,
		`collect\s+5\s+10\s+10\s+10\s+7\.5`,
		`pay\s+10\s+10\s+10\s+10\s+10\.0`, // from the first STAKE_SETTLED to the PAYOUT
		`close\s+1\s+2\s+2\s+2\s+1\.5`,
		`end→ledger\s+30\s+60\s+60\s+60\s+45\.0`,
	} {
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
