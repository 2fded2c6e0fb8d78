package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/pulka/pulka/tools/stack"
)

// killWait bounds the wait for a process after SIGKILL (it cannot refuse
// to die, but a process stuck in the kernel can take a moment).
const killWait = 5 * time.Second

// child is one running service process.
type child struct {
	spec stack.Process
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
func (s *supervisor) start(spec stack.Process) (*child, error) {
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

// waitReady waits until c is ready (stack.WaitReady), naming how it ended
// when it ended first.
func waitReady(ctx context.Context, c *child, timeout time.Duration) error {
	err := stack.WaitReady(ctx, c.spec, c.done, timeout)
	if errors.Is(err, stack.ErrExited) {
		return fmt.Errorf("%w (%s)", err, stack.ExitText(c.err))
	}
	return err
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
				errs = append(errs, fmt.Errorf("%s stopped with a failure (%s)", c.spec.Name, stack.ExitText(c.err)))
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
