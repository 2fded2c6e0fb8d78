// Command scoring runs the scoring service: it keeps the score sheet of every
// game, publishes sheet updates to the tables and final standings to the
// wallet, and keeps finished games for history (see docs/scoring-service.md).
// Configuration comes from flags and PULKA_* environment variables (-help
// lists them).
package main

import (
	"os"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/scoring/internal/scorer"
)

func main() {
	var cfg scorer.Config
	os.Exit(daemon.Main("scoring", &cfg, cfg.Run))
}
