package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protojson"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
)

const walletHelp = `usage: pulkactl wallet audit|hops [flags]

audit asks the running wallet service to reconcile its whole ledger now
(balances equal their ledgers and are never negative, coins are conserved,
every open hold belongs to a game in progress, every settled game was paid
once; see docs/wallet.md) and prints its report as JSON. Exits 1 when the
audit found a problem.

hops reads the settled games still in Redis's streams (after a load with
--stake, say) and prints how long each hop from a game's end to its last
payout took, from the stream entries each hop appended (an entry's ID is
Redis's clock in milliseconds): scoring (the runner's GameEnded input to
the final standings), forward (the standings to the table's command
shard; 0 for a wallet that settles them where it reads them), collect (to
the first STAKE_SETTLED ledger entry), pay (to the last PAYOUT), close (to
the GameSettled). The gateway's hop, the last payout to
the balance frame, is what pulkactl load reports less these.

`

// runWallet is "pulkactl wallet audit".
func runWallet(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("wallet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("redis", "localhost:6379", "the Redis the wallet service uses: host:port, or a comma-separated list of Redis Cluster nodes")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the report")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), walletHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	if fs.NArg() != 1 || (fs.Arg(0) != "audit" && fs.Arg(0) != "hops") {
		return usageError(errors.New("wallet: the subcommands are audit and hops"))
	}
	// Several addresses make a cluster client (as PULKA_REDIS_ADDR does for
	// the services): the wallet's streams are spread over the slots.
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: strings.Split(*addr, ",")})
	defer func() { _ = rdb.Close() }()
	if fs.Arg(0) == "hops" {
		return runWalletHops(ctx, rdb, stdout)
	}
	c := walletclient.NewClient(rdb, walletclient.Options{Timeout: *timeout})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = c.Run(ctx) }()
	res, err := c.Do(ctx, &walletv1.WalletCommand{CommandId: fmt.Sprintf("audit-%d", time.Now().UnixNano()),
		Command: &walletv1.WalletCommand_Audit{Audit: &walletv1.Audit{}}})
	if err != nil {
		return fmt.Errorf("wallet audit: %w", err)
	}
	out, err := protojson.MarshalOptions{Multiline: true, EmitUnpopulated: true}.Marshal(res.GetAudit())
	if err != nil {
		return fmt.Errorf("wallet audit: %w", err)
	}
	_, _ = fmt.Fprintf(stdout, "%s\n", out)
	if !res.GetAudit().GetOk() {
		return &ExitError{Code: exitFailure, Err: errors.New("wallet audit: problems found")}
	}
	return nil
}
