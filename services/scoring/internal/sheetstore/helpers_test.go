package sheetstore_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
)

// backends runs f against a plain Redis and against a one-node Redis
// Cluster: in cluster mode Redis refuses a script that touches keys of two
// slots, so passing there proves the key layout's hash tags.
func backends(t *testing.T, f func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		f(t, srv.Client(t))
	})
	t.Run("cluster", func(t *testing.T) {
		f(t, clusterClient(t))
	})
}

// sharedCluster is one cluster-mode server for the whole package: making a
// node's cluster state "ok" takes about two seconds, too long to repeat per
// test. Tests flush it before use.
var sharedCluster struct {
	once sync.Once
	srv  *redistest.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedCluster.srv != nil {
		sharedCluster.srv.Stop()
	}
	os.Exit(code)
}

func clusterClient(t *testing.T) *redis.ClusterClient {
	t.Helper()
	sharedCluster.once.Do(func() {
		sharedCluster.srv, sharedCluster.err = startCluster()
	})
	if sharedCluster.err != nil {
		t.Fatalf("cluster: %v", sharedCluster.err)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{sharedCluster.srv.Addr()}})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.FlushAll(ctx).Err() }); err != nil {
		t.Fatalf("flush cluster: %v", err)
	}
	return c
}

func startCluster() (*redistest.Server, error) {
	srv, err := redistest.Launch(redistest.WithArgs("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
	if err != nil {
		return nil, err
	}
	admin := srv.NewClient()
	ctx := context.Background()
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("cluster addslots: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := admin.ClusterInfo(ctx).Result()
		if err == nil && contains(info, "cluster_state:ok") {
			return srv, nil
		}
		if time.Now().After(deadline) {
			srv.Stop()
			return nil, fmt.Errorf("cluster did not become ok: %q: %w", info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
