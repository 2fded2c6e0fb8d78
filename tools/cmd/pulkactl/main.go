// Command pulkactl is Pulka's command-line tool: it works out score sheets,
// and hosts the developer commands that drive the rules engines from a
// terminal. Every subcommand lives in its own file and is listed in
// commands.go.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
