package main

import (
	"time"

	"github.com/pulka/pulka/tools/stack"
)

// plan lists the service processes of a run (tools/stack's plan): the back
// ends, which start first, and the gateway, which starts when they are
// ready. adminPorts must hold stack.Count(cfg.Runners) ports.
func plan(cfg Config, redisAddr, secret string, adminPorts []int) (backends []stack.Process, gateway stack.Process) {
	w := stack.Wiring{
		RedisAddr:    redisAddr,
		RedisCluster: cfg.clusterMode(),
		Addr:         cfg.Addr,
		Secret:       secret,
		LogLevel:     cfg.LogLevel,
		// Each service gets two thirds of the stop timeout for its own
		// graceful shutdown, so it finishes (tables handed over, WebSockets
		// closed) before the launcher loses patience and kills it.
		ShutdownTimeout: (cfg.StopTimeout * 2 / 3).Round(time.Millisecond),
	}
	return w.Plan(cfg.Runners, adminPorts)
}
