package main

import (
	"os"
	"testing"

	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, nil)) }

// liveStack is all of Pulka (pulka-local with every service built from this
// tree, one runner), shared by the tests that play through it: started by
// the first, stopped after the last. It returns the gateway's URL.
func liveStack(t *testing.T) string {
	t.Helper()
	return stacktest.SharedLocal(t, "pulkactl", stacktest.LocalOptions{
		Args: []string{"-runners", "1", "-log-level", "warn"},
		// Bots move at once and the per-connection limits allow a load
		// generator's many moves per connection. A hand whose clients send
		// no client seed (they all do) is dealt after 1s, not 3s.
		Settings: map[string][]string{
			stack.TableRunner: {envnames.RunnerBotDelay + "=1ms", envnames.RunnerSeedTimeout + "=1s"},
			stack.Gateway: {envnames.WSRate + "=1000", envnames.WSBurst + "=1000",
				// The coin load registers an account per seat.
				envnames.SignupsPerIP + "=1000"},
			// Fast games: a table a few seconds, a new one after each.
			stack.Lobby: {envnames.LobbyCreatesPerMinute + "=1000", envnames.LobbyCommandsPerMinute + "=100000",
				envnames.LobbyCoinSitsPerMinute + "=100000"},
		},
	}).URL
}
