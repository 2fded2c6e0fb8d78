package stacktest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
)

// stopWait is how long Stop waits after SIGTERM before it kills.
const stopWait = 10 * time.Second

// Process is one running service process of a Stack.
type Process struct {
	// Process is what was started: its name, binary, id in Redis, the
	// settings it was given (Env: the plan's and the test's) and its admin
	// address.
	stack.Process

	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // cmd.Wait's, once exited is closed
	once    sync.Once
}

// start runs p's binary from bin (under the command line wrap, when
// given) with env appended to the test binary's environment, its output
// going to logPath.
func start(p stack.Process, bin string, wrap []string, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append(slices.Clone(wrap), filepath.Join(bin, p.Binary))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = slices.Concat(os.Environ(), p.Env)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	proc := &Process{Process: p, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		proc.err = cmd.Wait()
		_ = log.Close()
		close(proc.exited)
	}()
	return proc, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// LogPath is the file holding the process's output (its JSON log lines).
func (p *Process) LogPath() string { return p.logPath }

// Stop sends SIGTERM and waits for the process, killing it after 10 s.
func (p *Process) Stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopWait):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// Kill sends SIGKILL: no snapshot, no lease released, no goodbye.
func (p *Process) Kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	})
}

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 4*n {
			lines = lines[len(lines)-n:]
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// UnreadSettings lists the settings given to p (the names in its Env) that
// its binary's -help does not name: a misspelt or renamed setting, or one
// given to the wrong service, would silently leave a default — a
// one-minute move timer, say — under a test. The session secret is read
// from the environment only, so -help does not list it (the gateway
// refuses to start without it).
func UnreadSettings(p stack.Process) ([]string, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	// -h prints the usage and exits 0 (flag.ErrHelp).
	out, err := exec.Command(filepath.Join(bin, p.Binary), "-h").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s -h: %w\n%s", p.Binary, err, out)
	}
	var unread []string
	for _, kv := range p.Env {
		name, _, _ := strings.Cut(kv, "=")
		if name != envnames.SessionSecret && !strings.Contains(string(out), "(env "+name+")") && !slices.Contains(unread, name) {
			unread = append(unread, name)
		}
	}
	return unread, nil
}
