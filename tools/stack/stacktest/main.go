package stacktest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// closer is a stack Main stops if its test binary has not.
type closer interface{ Close(keepLogs bool) }

var open struct {
	sync.Mutex
	stacks []closer
}

func register(c closer) {
	open.Lock()
	open.stacks = append(open.stacks, c)
	open.Unlock()
}

func unregister(c closer) {
	open.Lock()
	defer open.Unlock()
	for i, o := range open.stacks {
		if o == c {
			open.stacks = append(open.stacks[:i], open.stacks[i+1:]...)
			return
		}
	}
}

// Main is the TestMain of a package that starts stacks:
//
//	func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, nil)) }
//
// It runs setup (when not nil: start a stack every test uses, say), then
// the tests, then stops every stack still running — the shared ones, and any
// a test left — keeping their logs when a test failed, and removes the
// binaries. A setup that fails ends the run with its error.
func Main(m *testing.M, setup func() error) int {
	code := 1
	defer func() {
		closeAll(code != 0)
		removeBinaries()
	}()
	if setup != nil {
		if err := setup(); err != nil {
			fmt.Fprintln(os.Stderr, "stacktest:", err)
			return code
		}
	}
	code = m.Run()
	return code
}

// closeAll stops every stack still open, newest first.
func closeAll(keepLogs bool) {
	open.Lock()
	stacks := append([]closer(nil), open.stacks...)
	open.Unlock()
	for i := len(stacks) - 1; i >= 0; i-- {
		stacks[i].Close(keepLogs)
	}
}

// skipShort skips t under -short: a stack builds and runs every service.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("stacktest: builds and runs every service; skipped under -short")
	}
}

// once is a value made at most once per test binary under a name.
type once[T any] struct {
	mu   sync.Mutex
	vals map[string]*onceVal[T]
}

type onceVal[T any] struct {
	once sync.Once
	val  T
	err  error
}

// forTest is the value named name for t, made by the first caller; it
// skips t under -short and fails it when the value could not be made.
func (o *once[T]) forTest(t testing.TB, name string, make func() (T, error)) T {
	t.Helper()
	skipShort(t)
	v, err := o.get(name, make)
	if err != nil {
		t.Fatalf("stacktest: the shared %s: %v", name, err)
	}
	return v
}

func (o *once[T]) get(name string, make func() (T, error)) (T, error) {
	o.mu.Lock()
	if o.vals == nil {
		o.vals = map[string]*onceVal[T]{}
	}
	v, ok := o.vals[name]
	if !ok {
		v = &onceVal[T]{}
		o.vals[name] = v
	}
	o.mu.Unlock()
	v.once.Do(func() { v.val, v.err = make() })
	return v.val, v.err
}
