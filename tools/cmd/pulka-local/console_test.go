package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHumanLog(t *testing.T) {
	utc := time.UTC
	cases := []struct{ name, in, want string }{
		{"a service line",
			`{"time":"2026-05-01T12:04:05.123456Z","level":"INFO","msg":"started","service":"lobby","admin_addr":"127.0.0.1:9091","version":"(devel)"}`,
			`12:04:05.123 INFO  started admin_addr=127.0.0.1:9091 version=(devel)`},
		{"attributes keep their order and types",
			`{"level":"WARN","msg":"slow","zeta":1.5,"alpha":true,"n":null}`,
			`WARN  slow zeta=1.5 alpha=true n=null`},
		{"strings with spaces, quotes or = are quoted, empty ones too",
			`{"level":"ERROR","msg":"service failed","err":"dial tcp: refused","reason":"a=b","empty":""}`,
			`ERROR service failed err="dial tcp: refused" reason="a=b" empty=""`},
		{"objects stay compact JSON",
			`{"msg":"ready","checks":{ "redis" : "ok" },"ids":[1, 2]}`,
			`ready checks={"redis":"ok"} ids=[1,2]`},
		{"a time that does not parse is kept", `{"time":"yesterday","msg":"x"}`, `yesterday x`},
		{"not JSON", `panic: runtime error: index out of range`, `panic: runtime error: index out of range`},
		{"JSON that is not an object", `["a","b"]`, `["a","b"]`},
		{"broken JSON", `{"msg":"cut off`, `{"msg":"cut off`},
		{"trailing text after the object", `{"msg":"a"} extra`, `{"msg":"a"} extra`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := humanLog(tc.in, utc); got != tc.want {
				t.Errorf("humanLog(%s)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestConsole_PrefixesEveryLineWithItsProcessInOneColumn(t *testing.T) {
	var out bytes.Buffer
	con := newConsole(&out, len("table-runner-1"), true)
	con.Printf("hello %d", 1)
	con.pump("lobby", strings.NewReader("one\r\n\ntwo"))
	want := "" +
		"pulka-local    | hello 1\n" +
		"lobby          | one\n" +
		"lobby          | two\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestConsole_KeepsLongLinesWholeWhileProcessesWriteAtOnce(t *testing.T) {
	var out lockedBuffer
	con := newConsole(&out, 5, true)
	long := strings.Repeat("x", 200_000) // beyond any scanner's default buffer
	var wg sync.WaitGroup
	for i := range 4 {
		r, w := io.Pipe()
		wg.Go(func() { con.pump(fmt.Sprintf("p%d", i), r) })
		go func() {
			for range 20 {
				_, _ = io.WriteString(w, long[:1000*(i+1)]+"\n")
			}
			_, _ = io.WriteString(w, long+"\n")
			_ = w.Close()
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4*21 {
		t.Fatalf("got %d lines, want %d", len(lines), 4*21)
	}
	for _, l := range lines {
		name, text, ok := strings.Cut(l, " | ")
		if !ok || strings.Trim(text, "x") != "" {
			t.Fatalf("a line was mixed with another: %.80q…", l)
		}
		var i int
		if _, err := fmt.Sscanf(name, "p%d", &i); err != nil || (len(text) != 1000*(i+1) && len(text) != len(long)) {
			t.Fatalf("line of %s has %d bytes", name, len(text))
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the test to read while the
// console writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
