// Command table-runner runs live tables: it owns the tables the assigner
// gives it, applies their commands and timers with the rules engines, logs
// every step to the table's event stream under a fenced lease, and takes
// part in electing the assigner (see docs/table-runner.md). Configuration
// comes from flags and PULKA_* environment variables (-help lists them).
package main

import (
	"os"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/table-runner/internal/runner"
)

func main() {
	var cfg runner.Config
	os.Exit(daemon.Main("table-runner", &cfg, cfg.Run))
}
