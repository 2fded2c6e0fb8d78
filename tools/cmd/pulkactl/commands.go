package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// runFunc runs one subcommand with its own arguments. It returns an error
// instead of exiting, so tests can run it in-process with buffers; an
// *ExitError chooses the exit code, any other error exits 1.
type runFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// command is one subcommand.
type command struct {
	summary string // one line for the list of commands
	run     runFunc
}

// commands lists the subcommands. Each is implemented in its own file
// (score.go, ...); adding one is one line here.
func commands() map[string]command {
	return map[string]command{
		"score":    {summary: "work out a classic score sheet from bids and tricks (JSON on stdin)", run: runScore},
		"replay":   {summary: "check every move of a game record and print its final sheet", run: runReplay},
		"verify":   {summary: "check every hand of a game record against its commitment and re-deal it", run: runVerify},
		"selfplay": {summary: "play seeded bot games and print games per second and a summary", run: runSelfplay},
		"demo":     {summary: "play one classic game of four bots and print the paper sheet", run: runDemo},
		"play":     {summary: "play a game at a running Pulka from the terminal (or --auto)", run: runPlay},
		"load":     {summary: "load-test a running Pulka over real WebSockets (moves/s, latency)", run: runLoad},
		"wallet":   {summary: "ask the running wallet to reconcile its ledger now (wallet audit)", run: runWallet},
	}
}

// run dispatches to the subcommand named by args[0].
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 {
		writeUsage(stderr, cmds)
		return usageError(errors.New("no command given"))
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := cmds[args[1]]; ok {
				return c.run(ctx, []string{"-h"}, stdin, stdout, stderr)
			}
		}
		writeUsage(stdout, cmds)
		return nil
	}
	c, ok := cmds[name]
	if !ok {
		writeUsage(stderr, cmds)
		return usageError(fmt.Errorf("unknown command %q", name))
	}
	return c.run(ctx, args[1:], stdin, stdout, stderr)
}

func writeUsage(w io.Writer, cmds map[string]command) {
	var b strings.Builder
	b.WriteString("usage: pulkactl <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, cmds[n].summary)
	}
	b.WriteString("\n'pulkactl help <command>' shows a command's flags.\n")
	_, _ = io.WriteString(w, b.String())
}
