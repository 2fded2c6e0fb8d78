package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/tools/stack"
)

func main() { os.Exit(mainCode()) }

// mainCode is main without the exit, so that the signal handler is
// released by its defer before the process exits.
func mainCode() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulka-local: where am I: %v\n", err)
		return 1
	}
	cfg, err := parseConfig(os.Args[1:], exe, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		// go-redis reports failed dials through a process-wide logger of
		// its own; the launcher says what failed itself.
		redis.SetLogger(quietRedis{})
		err = run(ctx, cfg, host{Env: os.Environ(), Out: os.Stdout, LookPath: exec.LookPath})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulka-local: %v\n", err)
		if errors.Is(err, ErrConfig) {
			return 2
		}
		return 1
	}
	return 0
}

// quietRedis discards go-redis' own log lines.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// host is what run needs from the process it runs in.
type host struct {
	// Env is the environment every service inherits.
	Env []string
	// Out receives the launcher's lines and the services' logs.
	Out io.Writer
	// LookPath finds redis-server (exec.LookPath).
	LookPath func(string) (string, error)
	// Embedded starts the embedded Redis-compatible server; nil means
	// startEmbedded (tests pass a crippled one).
	Embedded func() (*redisHandle, error)
}

// run starts Redis and every service, waits until each is ready, prints
// what it started, and keeps them running until ctx is cancelled (then it
// stops them all and returns nil if they stopped cleanly) or one of them
// ends by itself (then it stops the others and returns an error naming it).
func run(ctx context.Context, cfg Config, h host) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := checkBinaries(cfg.BinDir); err != nil {
		return err
	}
	width := len("table-runner-") + len(fmt.Sprint(cfg.Runners))
	con := newConsole(h.Out, width, cfg.RawLogs)

	rh, err := startRedis(ctx, cfg, h, con)
	if err != nil {
		return err
	}
	defer rh.Stop()
	secret, err := stack.NewSecret()
	if err != nil {
		return err
	}
	ports, err := stack.FreePorts(stack.Count(cfg.Runners), stack.PortOf(cfg.Addr))
	if err != nil {
		return err
	}
	backends, gateway := plan(cfg, rh.Addr, secret, ports)
	sup := newSupervisor(cfg.BinDir, h.Env, con, stack.Count(cfg.Runners))

	// The back ends first; the gateway once they are ready, because its
	// own readiness waits for the lobby's view of the tables.
	started, err := startAll(ctx, sup, backends, cfg.ReadyTimeout)
	if err == nil {
		var gw []*child
		gw, err = startAll(ctx, sup, []stack.Process{gateway}, cfg.ReadyTimeout)
		started = append(started, gw...)
	}
	if err != nil {
		stopErr := sup.stop(cfg.StopTimeout)
		if ctx.Err() != nil {
			con.Printf("stopped before everything had started")
			return stopErr // Ctrl-C during start-up: a stop, not a failure
		}
		return errors.Join(err, stopErr)
	}
	printSummary(con, cfg, rh, started)

	for {
		select {
		case <-ctx.Done():
			con.Printf("stopping every service (SIGTERM; killed after %s)", cfg.StopTimeout)
			if err := sup.stop(cfg.StopTimeout); err != nil {
				return err
			}
			con.Printf("stopped")
			return nil
		case c := <-sup.exits:
			if cfg.AllowRunnerExit && c.spec.Binary == stack.TableRunner && len(sup.running(stack.TableRunner)) > 0 {
				con.Printf("%s exited (%s); its tables move to the other runners (-allow-runner-exit)",
					c.spec.Name, stack.ExitText(c.err))
				continue
			}
			con.Printf("%s exited by itself (%s): stopping everything", c.spec.Name, stack.ExitText(c.err))
			died := fmt.Errorf("%s (pid %d) exited unexpectedly (%s)", c.spec.Name, c.Pid(), stack.ExitText(c.err))
			return errors.Join(died, sup.stop(cfg.StopTimeout))
		}
	}
}

// startAll starts specs and waits until every one is ready; the waits run
// at once, so a process that dies is reported as soon as it does.
func startAll(ctx context.Context, sup *supervisor, specs []stack.Process, timeout time.Duration) ([]*child, error) {
	children := make([]*child, 0, len(specs))
	for _, s := range specs {
		c, err := sup.start(s)
		if err != nil {
			return children, err
		}
		children = append(children, c)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(children))
	for _, c := range children {
		go func() { errc <- waitReady(ctx, c, timeout) }()
	}
	for range children {
		if err := <-errc; err != nil {
			return children, err
		}
	}
	return children, nil
}

// inMemoryNotice says, when the launcher started Redis itself, that nothing
// survives it: a local run is for trying Pulka, not for keeping games.
const inMemoryNotice = "NOTE: this Redis keeps everything in memory only (no AOF, no RDB): stopping Pulka loses " +
	"every table, game and account. For data that survives, run docker compose or give -redis a persistent " +
	"Redis (docs/operations.md)."

// printSummary says what runs where. The lines "<name> pid <n>" are also
// what the end-to-end test reads.
func printSummary(con *console, cfg Config, rh *redisHandle, children []*child) {
	con.Printf("Pulka is running.")
	con.Printf("  open         %s", stack.BrowserURL(cfg.Addr))
	con.Printf("  Redis        %s  (%s)", rh.Addr, rh.About)
	if rh.Kind != redisExisting {
		con.Printf("  %s", inMemoryNotice)
	}
	for _, c := range children {
		con.Printf("  %-*s pid %-7d admin http://%s  (/readyz /metrics)", con.width, c.spec.Name, c.Pid(), c.spec.Admin)
	}
	con.Printf("%s", stack.LauncherReady)
}
