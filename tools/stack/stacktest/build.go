package stacktest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/pulka/pulka/tools/stack"
)

// Environment variables of the harness.
const (
	// EnvBin names a directory of prebuilt binaries (make build's bin/):
	// the harness uses them instead of building.
	EnvBin = "PULKA_E2E_BIN"
	// EnvKeepLogs keeps every stack's logs after the run.
	EnvKeepLogs = "PULKA_E2E_KEEP_LOGS"
)

// Launcher is the file name of pulka-local, which the harness builds with
// the services.
const Launcher = "pulka-local"

// binaries lists every program a stack runs: the launcher and the services.
func binaries() []string { return append([]string{Launcher}, stack.Services()...) }

// packageOf is where a binary's main package is, from the repository root.
func packageOf(binary string) string {
	if binary == Launcher {
		return "./tools/cmd/" + Launcher
	}
	return "./services/" + binary + "/cmd/" + binary
}

var built struct {
	once sync.Once
	dir  string // the test binary's own copy, removed by Main
	own  bool   // dir is the harness's to remove
	err  error
}

// Binaries returns the directory of pulka-local and every service binary,
// built the first time a test binary asks (EnvBin names prebuilt ones
// instead). Main removes it after the tests.
func Binaries() (string, error) {
	built.once.Do(func() { built.dir, built.own, built.err = buildBinaries() })
	return built.dir, built.err
}

// removeBinaries removes the test binary's copy of the binaries.
func removeBinaries() {
	if built.own && built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

func buildBinaries() (dir string, own bool, err error) {
	if d := os.Getenv(EnvBin); d != "" {
		for _, b := range binaries() {
			if _, err := os.Stat(filepath.Join(d, b)); err != nil {
				return "", false, fmt.Errorf("stacktest: %s=%s: %w", EnvBin, d, err)
			}
		}
		return d, false, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false, err
	}
	root, err := RepoRoot(wd)
	if err != nil {
		return "", false, err
	}
	shared, err := sharedBinDir(root)
	if err != nil {
		return "", false, err
	}
	dir, err = os.MkdirTemp("", "pulka-stacktest-bin-")
	if err != nil {
		return "", false, err
	}
	if err := buildInto(root, shared, dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", false, err
	}
	return dir, true, nil
}

// ErrNoRepository means the harness found no Pulka repository to build the
// binaries from.
var ErrNoRepository = errors.New("stacktest: no Pulka repository (a go.work beside services/ and tools/) in this directory or above it")

// RepoRoot is the repository root at or above dir: the first directory
// holding go.work, services/ and tools/. A test runs in its package's
// directory, so this finds the repository whether the module is tested in
// the workspace or on its own (GOWORK=off).
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if isRepoRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: started from %s; the harness builds the services from source (or set %s to a directory of built binaries, e.g. make build's bin/)",
				ErrNoRepository, dir, EnvBin)
		}
	}
}

func isRepoRoot(d string) bool {
	for _, name := range []string{"go.work", "services", "tools"} {
		if _, err := os.Stat(filepath.Join(d, name)); err != nil {
			return false
		}
	}
	return true
}

// sharedBinDir is where the binaries of the repository at root are built,
// shared by every test binary (and every run) of this user: go build
// relinks only a binary whose inputs changed, so the second test binary of
// a go test ./... finds them up to date in a second.
func sharedBinDir(root string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("stacktest: a cache directory for the binaries: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	parent := filepath.Join(cache, "pulka", "stacktest")
	dir := filepath.Join(parent, hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("stacktest: %w", err)
	}
	// Mark this checkout's binaries used, and drop those of checkouts
	// (CI's clones, worktrees) unused for staleBinAge: each holds every
	// service's binary, some 200 MB.
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
	pruneStale(parent, dir, now.Add(-staleBinAge))
	return dir, nil
}

// staleBinAge is how long the binaries of a checkout no test has used are
// kept.
const staleBinAge = 7 * 24 * time.Hour

// pruneStale removes the directories under parent (and their lock files),
// other than keep, last used before cutoff. A failure leaves them for the
// next run: pruning is housekeeping, never a reason to fail a test.
func pruneStale(parent, keep string, cutoff time.Time) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(parent, e.Name())
		if !e.IsDir() || path == keep {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if os.RemoveAll(path) == nil {
			_ = os.Remove(path + ".lock")
		}
	}
}

// buildInto builds every binary into shared with one go build at the root
// (the packages compile in parallel and share the build cache), holding a
// lock so that test binaries running at once build one after the other,
// then links them into dir: the test binary runs its own copies, which a
// later build (a source changed meanwhile) cannot change under it.
//
// The build uses the repository's go.work whatever GOWORK says: the
// module under test may be tested on its own (GOWORK=off), but the services
// are built as make build builds them.
func buildInto(root, shared, dir string) error {
	lock, err := os.OpenFile(shared+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("stacktest: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("stacktest: lock %s: %w", lock.Name(), err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()

	args := []string{"build", "-o", shared + string(filepath.Separator)}
	for _, b := range binaries() {
		args = append(args, packageOf(b))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("stacktest: go %v in %s: %w\n%s", args, root, err, out)
	}
	fmt.Fprintf(os.Stderr, "stacktest: built %d binaries in %v\n", len(binaries()), time.Since(start).Round(time.Millisecond))
	for _, b := range binaries() {
		if err := linkOrCopy(filepath.Join(shared, b), filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("stacktest: %w", err)
		}
	}
	return nil
}

// linkOrCopy makes dst the file src: a hard link, or a copy where src's
// file system is another one.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
