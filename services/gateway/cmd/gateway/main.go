// Command gateway runs the gateway service: the HTTP API (/api/v1), the
// WebSocket (/ws) and the web client of Pulka. Configuration comes from
// flags and PULKA_* environment variables (-help lists them); the session
// secret only from PULKA_SESSION_SECRET.
package main

import (
	"os"

	"github.com/gin-gonic/gin"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/gateway/internal/server"
)

func main() {
	gin.SetMode(gin.ReleaseMode)
	var cfg server.Config
	os.Exit(daemon.Main("gateway", &cfg, cfg.Run))
}
