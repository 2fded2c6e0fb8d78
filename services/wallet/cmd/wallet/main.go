// Command wallet runs the wallet service: Domino Coin balances and their
// ledger, stakes held at coin tables and the payout of every game (see
// docs/wallet.md). Configuration comes from flags and PULKA_* environment
// variables (-help lists them).
package main

import (
	"os"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/wallet/internal/service"
)

func main() {
	var cfg service.Config
	os.Exit(daemon.Main("wallet", &cfg, cfg.Run))
}
