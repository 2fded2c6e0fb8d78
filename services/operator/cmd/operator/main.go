// Command operator runs Pulka's Kubernetes operator: it creates, sizes,
// rolls and drains the table-runner pods of every RunnerPool, and (with
// -pool) assigns that pool's tables to its live runners. Configuration comes
// from flags and PULKA_* environment variables (-help lists them); the
// cluster from the in-cluster service account or KUBECONFIG.
package main

import (
	"os"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/operator/internal/operator"
)

func main() {
	var cfg operator.Config
	os.Exit(daemon.Main("operator", &cfg, cfg.Run))
}
