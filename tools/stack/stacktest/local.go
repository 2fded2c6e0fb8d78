package stacktest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pulka/pulka/tools/stack"
)

// localReadyTimeout bounds the launcher's start: Redis, every service and
// its readiness on a loaded machine.
const localReadyTimeout = 3 * time.Minute

// LocalOptions are what a test chooses about a pulka-local run.
type LocalOptions struct {
	// Args are more pulka-local flags (-embedded-redis, -runners 1,
	// -log-level warn); the harness gives -addr and -bin-dir.
	Args []string
	// Settings are more settings (NAME=value, names from pkg/envnames) in
	// the launcher's environment, which every service inherits. The
	// launcher's own settings for a process win over them.
	Settings map[string][]string
}

// Local is a running pulka-local: the launcher, its Redis and every service.
type Local struct {
	// URL is where the test reaches the gateway: http://127.0.0.1:<port>.
	URL string
	// Origin is the URL the launcher prints, what a browser's page on this
	// machine has as its origin: http://localhost:<port>.
	Origin string

	cmd    *exec.Cmd
	out    lockedBuffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
	once   sync.Once
}

// StartLocal runs pulka-local for t until it says everything runs (its
// summary printed); when t ends, the launcher is stopped if the test has
// not, and its output is logged if t failed.
func StartLocal(t testing.TB, o LocalOptions) *Local {
	t.Helper()
	skipShort(t)
	l, err := NewLocal(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.Close(false)
		if t.Failed() {
			t.Logf("pulka-local's output:\n%s", l.Output())
		}
	})
	return l
}

var sharedLocal once[*Local]

// SharedLocal is the pulka-local of this test binary named name, started by
// the first caller with o (later callers' o is not looked at) and stopped
// by Main after the tests; it fails t when it could not start.
func SharedLocal(t testing.TB, name string, o LocalOptions) *Local {
	t.Helper()
	return sharedLocal.forTest(t, name, func() (*Local, error) { return NewLocal(o) })
}

// NewLocal runs pulka-local outside a test, with the gateway on a free
// loopback port, until it says everything runs. The caller closes it, or
// Main does after the tests. A launcher that ends before it is ready
// because a port chosen for it — the gateway's here, or one of its own
// choosing (its services' admin ports, its Redis) — was taken by another
// program between the choice and the bind is started again on new ports,
// up to portAttempts times in all, as Stack does for its processes.
func NewLocal(o LocalOptions) (*Local, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	return retryLostPort(portAttempts, func() (*Local, error) {
		ports, err := stack.FreePorts(1)
		if err != nil {
			return nil, err
		}
		return startLocal(o, bin, net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])))
	})
}

// retryLostPort calls start until it does not fail with errLostPort, at
// most attempts times; the error of a last failure also tells the earlier
// ones.
func retryLostPort[T any](attempts int, start func() (T, error)) (T, error) {
	var tries []string
	for attempt := 1; ; attempt++ {
		v, err := start()
		if err == nil || attempt == attempts || !errors.Is(err, errLostPort) {
			if err != nil && len(tries) > 0 {
				err = fmt.Errorf("%w\n(%d earlier attempts lost a port:\n%s)", err, len(tries), strings.Join(tries, "\n"))
			}
			return v, err
		}
		tries = append(tries, err.Error())
	}
}

// errLostPort marks a launcher that exited before it was ready because an
// address it was to listen on was taken.
var errLostPort = errors.New("a port chosen for it was taken")

// addrInUse is how a process's log says it could not listen on an address
// another program holds (Go's net; redis-server writes "Address").
const addrInUse = "bind: address already in use"

// lostPort says whether a launcher's output shows a process that could not
// bind its address: every address it binds is one chosen free (by
// NewLocal, or by the launcher itself) moments before.
func lostPort(output string) bool {
	return strings.Contains(strings.ToLower(output), addrInUse)
}

// startLocal is one attempt of NewLocal, the gateway on addr.
func startLocal(o LocalOptions, bin, addr string) (*Local, error) {
	args := append([]string{"-addr", addr, "-bin-dir", bin}, o.Args...)
	cmd := exec.Command(filepath.Join(bin, Launcher), args...)
	cmd.Env = os.Environ()
	for _, b := range binaries() {
		cmd.Env = append(cmd.Env, oneAddress()[b]...)
	}
	for _, b := range binaries() {
		cmd.Env = append(cmd.Env, o.Settings[b]...)
	}
	cmd.SysProcAttr = procAttr()
	l := &Local{URL: "http://" + addr, Origin: stack.BrowserURL(addr), cmd: cmd, exited: make(chan struct{})}
	cmd.Stderr = &l.out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stacktest: start %s: %w", Launcher, err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		signalled := false
		for sc.Scan() {
			_, _ = l.out.Write(append(sc.Bytes(), '\n'))
			if !signalled && strings.HasSuffix(sc.Text(), "| "+stack.LauncherReady) {
				close(ready)
				signalled = true
			}
		}
		l.err = cmd.Wait()
		close(l.exited)
	}()
	select {
	case <-ready:
		register(l)
		return l, nil
	case <-l.exited:
		err := fmt.Errorf("stacktest: %s exited before it was ready (%s):\n%s", Launcher, stack.ExitText(l.err), l.Output())
		if lostPort(l.Output()) {
			err = fmt.Errorf("%w: %w", errLostPort, err)
		}
		return nil, err
	case <-time.After(localReadyTimeout):
		l.Close(false)
		return nil, fmt.Errorf("stacktest: %s did not say it was running within %v:\n%s", Launcher, localReadyTimeout, l.Output())
	}
}

// Output is everything the launcher printed so far: its own lines, its
// summary, and its services' logs.
func (l *Local) Output() string { return l.out.String() }

// Pid is the launcher's process id.
func (l *Local) Pid() int { return l.cmd.Process.Pid }

// ErrStillRunning is Interrupt's error when the launcher did not exit in
// time; it is then killed.
var ErrStillRunning = errors.New("still running")

// Interrupt stops the launcher as a person does, with Ctrl-C (SIGINT),
// and waits up to timeout for it to exit. It returns how the launcher
// ended (nil: exit status 0), or an error wrapping ErrStillRunning when it
// did not end in time (it is then killed).
func (l *Local) Interrupt(timeout time.Duration) error {
	var err error
	l.once.Do(func() { err = l.stop(os.Interrupt, timeout) })
	return err
}

// Close stops the launcher with SIGTERM (it stops every service), killing
// it after a minute. The flag is that of Stack.Close, for Main: the
// launcher's logs are its output, which nothing keeps but StartLocal's
// report of a failed test.
func (l *Local) Close(bool) {
	unregister(l)
	l.once.Do(func() { _ = l.stop(syscall.SIGTERM, time.Minute) })
}

func (l *Local) stop(sig os.Signal, timeout time.Duration) error {
	select {
	case <-l.exited:
		return l.err
	default:
	}
	if err := l.cmd.Process.Signal(sig); err != nil {
		return err
	}
	select {
	case <-l.exited:
		return l.err
	case <-time.After(timeout):
		_ = l.cmd.Process.Kill()
		<-l.exited
		return fmt.Errorf("%s after %v: %w", Launcher, timeout, ErrStillRunning)
	}
}

// lockedBuffer is a bytes.Buffer safe for the launcher's two writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
