package redistest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestStart_AnswersOnFreePortWithoutPersistence(t *testing.T) {
	s := Start(t)
	if s.Port() == 6379 {
		t.Fatalf("test server must not use the default port")
	}
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	cfg, err := c.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["appendonly"] != "no" {
		t.Fatalf("appendonly = %q, want no", cfg["appendonly"])
	}
	save, err := c.ConfigGet(ctx, "save").Result()
	if err != nil {
		t.Fatal(err)
	}
	if save["save"] != "" {
		t.Fatalf("save = %q, want empty", save["save"])
	}
}

func TestStart_TwoServersGetDifferentPorts(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Addr() == b.Addr() {
		t.Fatalf("both servers on %s", a.Addr())
	}
}

func TestRestart_WithoutPersistenceLosesData(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	// The client reconnects by itself on the same address.
	n, err := c.Exists(ctx, "k").Result()
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if n != 0 {
		t.Fatalf("key survived a restart without persistence")
	}
}

func TestRestart_WithPersistenceKeepsAcknowledgedWritesAfterKill(t *testing.T) {
	s := Start(t, WithPersistence())
	c := s.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		if err := c.Incr(ctx, "counter").Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.Kill()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatalf("ping succeeded on a killed server")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "counter").Int()
	if err != nil {
		t.Fatal(err)
	}
	if got != 100 {
		t.Fatalf("counter = %d after kill+restart, want 100", got)
	}
}

func TestStop_ClosesClientsAndIsIdempotent(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	s.Stop()
	s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatalf("client still works after Stop")
	}
}

func TestLaunch_StopRemovesDirectory(t *testing.T) {
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	dir := s.Dir()
	s.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dir %s still there after Stop: %v", dir, err)
	}
}

func TestWithCluster_RefusesCrossSlotLikeARealCluster(t *testing.T) {
	s := Start(t, WithCluster())
	c := s.ClusterClient(t)
	ctx := context.Background()
	if err := c.Set(ctx, "{a}x", 1, 0).Err(); err != nil {
		t.Fatalf("set on cluster: %v", err)
	}
	direct := s.Client(t)
	if err := direct.MGet(ctx, "{a}x", "{b}y").Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot MGET: %v, want CROSSSLOT", err)
	}
	if err := direct.MGet(ctx, "{a}x", "{a}y").Err(); err != nil {
		t.Fatalf("same-slot MGET: %v", err)
	}
}
