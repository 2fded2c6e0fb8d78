package main

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/tools/stack"
)

func noRedisServer(string) (string, error) { return "", exec.ErrNotFound }

func withRedisServer(string) (string, error) { return "/usr/bin/redis-server", nil }

func quietConsole() (*console, *lockedBuffer) {
	out := &lockedBuffer{}
	return newConsole(out, 0, true), out
}

// crippled is an embedded server that answers one command with an error,
// as a Redis too old to know it would.
func crippled(t *testing.T, command string) *miniredis.Miniredis {
	t.Helper()
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	m.Server().SetPreHook(func(c *server.Peer, cmd string, _ ...string) bool {
		if strings.EqualFold(cmd, command) {
			c.WriteError("ERR unknown command '" + cmd + "'")
			return true
		}
		return false
	})
	t.Cleanup(m.Close)
	return m
}

func TestProbeRedis_PassesOnRedisServerAndOnTheEmbeddedServer(t *testing.T) {
	real := redistest.Start(t)
	emb, err := startEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Stop()
	for name, addr := range map[string]string{"redis-server": real.Addr(), "embedded": emb.Addr} {
		t.Run(name, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			defer rdb.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := probeRedis(ctx, rdb); err != nil {
				t.Fatalf("probe: %v", err)
			}
			// The probe cleans up after itself.
			if keys, err := rdb.Keys(ctx, "pulka-local:probe:*").Result(); err != nil || len(keys) != 0 {
				t.Errorf("probe left keys %v (%v)", keys, err)
			}
		})
	}
}

func TestProbeRedis_NamesTheCommandThatIsMissing(t *testing.T) {
	for _, command := range []string{"XAUTOCLAIM", "EVALSHA", "XREADGROUP"} {
		t.Run(command, func(t *testing.T) {
			m := crippled(t, command)
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
			defer rdb.Close()
			err := probeRedis(context.Background(), rdb)
			if err == nil || !strings.Contains(err.Error(), command) {
				t.Fatalf("want an error naming %s, got %v", command, err)
			}
		})
	}
}

func TestProbeRedis_RefusesKeysThatNeverExpire(t *testing.T) {
	// miniredis without ClockTTL keeps TTLs frozen, as a unit-test double
	// does: leases would never run out and no table could ever move.
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	err := probeRedis(context.Background(), rdb)
	if err == nil || !strings.Contains(err.Error(), "expiry") {
		t.Fatalf("want the expiry step to fail, got %v", err)
	}
}

func TestStartRedis_UsesRedisServerWhenInstalledAndTheEmbeddedOneOtherwise(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal(redistest.ErrNoRedisServer)
	}
	cases := []struct {
		name     string
		cfg      Config
		lookPath func(string) (string, error)
		kind     string
		notice   bool // the "not installed, using the embedded one" line
	}{
		{"installed", Config{}, exec.LookPath, redisServer, false},
		{"not installed", Config{}, noRedisServer, redisEmbedded, true},
		{"embedded asked for", Config{EmbeddedRedis: true}, withRedisServer, redisEmbedded, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			con, out := quietConsole()
			h, err := startRedis(context.Background(), tc.cfg, host{LookPath: tc.lookPath}, con)
			if err != nil {
				t.Fatal(err)
			}
			if h.Kind != tc.kind {
				t.Errorf("kind %q, want %q (%s)", h.Kind, tc.kind, h.About)
			}
			if got := strings.Contains(out.String(), "redis-server is not installed"); got != tc.notice {
				t.Errorf("notice printed: %v, want %v: %q", got, tc.notice, out.String())
			}
			rdb := redis.NewClient(&redis.Options{Addr: h.Addr, MaxRetries: -1})
			defer rdb.Close()
			if err := rdb.Ping(context.Background()).Err(); err != nil {
				t.Fatalf("ping %s: %v", h.Addr, err)
			}
			h.Stop()
			if err := rdb.Ping(context.Background()).Err(); err == nil {
				t.Fatalf("the %s Redis still answers after Stop", h.Kind)
			}
		})
	}
}

func TestStartRedis_AnExistingRedisIsUsedAndLeftRunning(t *testing.T) {
	srv := redistest.Start(t)
	con, _ := quietConsole()
	h, err := startRedis(context.Background(), Config{Redis: srv.Addr()}, host{LookPath: withRedisServer}, con)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind != redisExisting || h.Addr != srv.Addr() || !strings.HasPrefix(h.About, "Redis ") {
		t.Fatalf("got %+v", h)
	}
	h.Stop()
	if err := srv.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatalf("the launcher stopped a Redis it did not start: %v", err)
	}
}

func TestStartRedis_RefusesARedisThatCannotRunPulka(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		m := crippled(t, "XAUTOCLAIM")
		stopped := false
		emb := func() (*redisHandle, error) {
			return &redisHandle{Addr: m.Addr(), Kind: redisEmbedded, stop: func() { stopped = true; m.Close() }}, nil
		}
		con, _ := quietConsole()
		_, err := startRedis(context.Background(), Config{}, host{LookPath: noRedisServer, Embedded: emb}, con)
		if !errors.Is(err, ErrRedis) || !strings.Contains(err.Error(), "XAUTOCLAIM") ||
			!strings.Contains(err.Error(), "install redis-server") {
			t.Fatalf("want ErrRedis naming XAUTOCLAIM and saying install redis-server, got %v", err)
		}
		if !stopped {
			t.Error("the refused embedded server was left running")
		}
	})
	t.Run("existing", func(t *testing.T) {
		m := crippled(t, "EVALSHA")
		con, _ := quietConsole()
		_, err := startRedis(context.Background(), Config{Redis: m.Addr()}, host{LookPath: noRedisServer}, con)
		if !errors.Is(err, ErrRedis) || !strings.Contains(err.Error(), m.Addr()) || !strings.Contains(err.Error(), "EVALSHA") {
			t.Fatalf("want ErrRedis naming the address and EVALSHA, got %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		ports, err := stack.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
		con, _ := quietConsole()
		_, err = startRedis(context.Background(), Config{Redis: addr}, host{LookPath: noRedisServer}, con)
		if !errors.Is(err, ErrRedis) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "PING") {
			t.Fatalf("want ErrRedis naming %s and PING, got %v", addr, err)
		}
	})
}

// make run keeps Redis in memory and says so when it starts (issue 17);
// a Redis given with -redis is the user's, and is not described.
func TestSummary_SaysAnInMemoryRedisLosesEverything(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want bool
	}{{redisServer, true}, {redisEmbedded, true}, {redisExisting, false}} {
		var out strings.Builder
		printSummary(newConsole(&out, 0, true), Config{Addr: "localhost:8080"}, &redisHandle{Addr: "127.0.0.1:1", Kind: tc.kind}, nil)
		if got := strings.Contains(out.String(), "in memory only") && strings.Contains(out.String(), "loses"); got != tc.want {
			t.Errorf("Redis kind %v: notice shown %v, want %v:\n%s", tc.kind, got, tc.want, out.String())
		}
	}
}
