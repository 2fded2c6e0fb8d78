package sheetstore_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
)

// backends runs f against a plain Redis and against a Redis Cluster of
// three masters: a script that touches keys of two slots is refused, and the
// tables' keys spread over every master, so passing there proves the key
// layout's hash tags.
func backends(t *testing.T, f func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) {
		srv := redistest.Start(t)
		f(t, srv.Client(t))
	})
	t.Run("cluster", func(t *testing.T) {
		f(t, clusterClient(t))
	})
}

// sharedCluster is one cluster for the whole package: forming one takes
// seconds, too long to repeat per test. Tests flush it before use.
var sharedCluster struct {
	once sync.Once
	srv  *redistest.Cluster
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
		sharedCluster.srv, sharedCluster.err = redistest.LaunchCluster(3, 0)
	})
	if sharedCluster.err != nil {
		t.Fatalf("cluster: %v", sharedCluster.err)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: sharedCluster.srv.Addrs()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.FlushAll(ctx).Err() }); err != nil {
		t.Fatalf("flush cluster: %v", err)
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
