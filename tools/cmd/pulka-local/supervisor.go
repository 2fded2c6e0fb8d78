package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// killWait bounds the wait for a process after SIGKILL (it cannot refuse
// to die, but a process stuck in the kernel can take a moment).
const killWait = 5 * time.Second

// child is one running service process.
type child struct {
	spec childSpec
	cmd  *exec.Cmd
	// done is closed once the process has exited and all its output has
	// been printed; err is then cmd.Wait's result.
	done chan struct{}
	err  error
}

// Pid is the process id.
func (c *child) Pid() int { return c.cmd.Process.Pid }

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// supervisor runs service processes: it starts them with their settings,
// prints their output under their names, notices when one ends, and stops
// them all.
type supervisor struct {
	binDir string
	env    []string // the launcher's environment, inherited by every child
	con    *console
	// exits receives every child when its process ends, in order of exit.
	exits chan *child

	mu       sync.Mutex
	children []*child
}

// newSupervisor runs binaries from binDir; capacity is the most children it
// will start (the exits channel never blocks a child's goroutine).
func newSupervisor(binDir string, env []string, con *console, capacity int) *supervisor {
	return &supervisor{binDir: binDir, env: env, con: con, exits: make(chan *child, capacity)}
}

// start launches spec's binary. The child has its own process group, so a
// Ctrl-C at the terminal reaches only the launcher, which then stops the
// children in order; on Linux a child is also sent SIGTERM if the launcher
// itself dies, so no service outlives it.
func (s *supervisor) start(spec childSpec) (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.children) == cap(s.exits) {
		return nil, fmt.Errorf("start %s: more children than the %d planned", spec.Name, cap(s.exits))
	}
	cmd := exec.Command(filepath.Join(s.binDir, spec.Binary))
	cmd.Env = slices.Concat(s.env, spec.Env)
	cmd.SysProcAttr = childProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	c := &child{spec: spec, cmd: cmd, done: make(chan struct{})}
	s.children = append(s.children, c)
	go func() {
		var wg sync.WaitGroup
		for _, r := range []io.Reader{stdout, stderr} {
			wg.Go(func() { s.con.pump(spec.Name, r) })
		}
		// Wait closes the pipes, so the output is read to its end first.
		wg.Wait()
		c.err = cmd.Wait()
		close(c.done)
		s.exits <- c
	}()
	return c, nil
}

// running lists the children whose process has not ended; with binaries,
// only those running one of them.
func (s *supervisor) running(binaries ...string) []*child {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*child
	for _, c := range s.children {
		if !c.exited() && (len(binaries) == 0 || slices.Contains(binaries, c.spec.Binary)) {
			out = append(out, c)
		}
	}
	return out
}

// waitReady polls c's /readyz until it answers 200 (and, for a service
// with Serves, its address accepts a connection). It fails when the process
// ends first, when timeout passes, or when ctx is cancelled.
func waitReady(ctx context.Context, c *child, timeout time.Duration) error {
	errLate := errors.New("not ready in time")
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errLate)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.spec.ReadyURL(), nil)
		if err != nil {
			return fmt.Errorf("%s: %w", c.spec.Name, err)
		}
		if resp, err := client.Do(req); err != nil {
			if ctx.Err() == nil { // keep what it said before the deadline cut the request
				last = err.Error()
			}
		} else {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			_ = resp.Body.Close()
			switch {
			case resp.StatusCode != http.StatusOK:
				last = fmt.Sprintf("%s %s", resp.Status, strings.TrimSpace(string(body)))
			case c.spec.Serves == "":
				return nil
			default:
				var d net.Dialer
				conn, err := d.DialContext(ctx, "tcp", c.spec.Serves)
				if err == nil {
					_ = conn.Close()
					return nil
				}
				if ctx.Err() == nil {
					last = "ready, but nothing accepts connections on " + c.spec.Serves + " yet"
				}
			}
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited before it was ready (%s)", c.spec.Name, exitText(c.err))
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errLate) {
				return fmt.Errorf("%s was not ready within %s: /readyz: %s", c.spec.Name, timeout, last)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM to every running child, waits up to timeout for them
// to end, and kills (SIGKILL) those that are still running. It returns an
// error naming every child that had to be killed or that ended with a
// failure while stopping.
func (s *supervisor) stop(timeout time.Duration) error {
	live := s.running()
	for _, c := range live {
		// The process may end between running() and here; then there is
		// nothing to signal and its exit is what is reported.
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	// One deadline for all: they stop in parallel.
	wait, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	for _, c := range live {
		select {
		case <-c.done:
		case <-wait.Done():
		}
		if c.exited() {
			if c.err != nil && !endedBySIGTERM(c.err) {
				errs = append(errs, fmt.Errorf("%s stopped with a failure (%s)", c.spec.Name, exitText(c.err)))
			}
			continue
		}
		s.con.Printf("%s did not stop within %s: killing it", c.spec.Name, timeout)
		_ = c.cmd.Process.Kill()
		select {
		case <-c.done:
			errs = append(errs, fmt.Errorf("%s did not stop within %s and was killed", c.spec.Name, timeout))
		case <-time.After(killWait):
			errs = append(errs, fmt.Errorf("%s (pid %d) did not end even after SIGKILL", c.spec.Name, c.Pid()))
		}
	}
	return errors.Join(errs...)
}

// endedBySIGTERM reports whether a process was ended by SIGTERM itself: a
// child that had not yet set up its handler when it was told to stop
// (SIGTERM's default action ends it) stopped as asked.
func endedBySIGTERM(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}

// exitText describes how a process ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
