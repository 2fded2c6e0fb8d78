// Command table-runner runs live tables: it owns the tables the assigner
// gives it, applies their commands and timers with the rules engines, logs
// every step to the table's event stream under a fenced lease, and takes
// part in electing the assigner (see docs/table-runner.md). Configuration
// comes from flags and PULKA_* environment variables (-help lists them).
//
// `table-runner replay -table <id>` replays one table's log from Redis
// instead and prints what it replays to (internal/replay).
package main

import (
	"context"
	"os"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/table-runner/internal/replay"
	"github.com/pulka/pulka/services/table-runner/internal/runner"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == replay.Command {
		os.Exit(replay.Main(context.Background(), os.Args[2:], os.Getenv, os.Stdout, os.Stderr))
	}
	var cfg runner.Config
	os.Exit(daemon.Main("table-runner", &cfg, cfg.Run))
}
