// Command lobby runs the lobby service: table creation, seats, passwords and
// the public table list (see docs/lobby.md). Configuration comes from flags
// and PULKA_* environment variables (-help lists them).
package main

import (
	"os"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/lobby/internal/service"
)

func main() {
	var cfg service.Config
	os.Exit(daemon.Main("lobby", &cfg, cfg.Run))
}
