package redistest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestStartCluster_SpreadsKeysOverEveryMasterAndRefusesCrossSlot(t *testing.T) {
	cl := StartCluster(t, 3, 0)
	c := cl.Client(t)
	ctx := context.Background()
	masters := map[*Server]bool{}
	for i := range 30 {
		key := fmt.Sprintf("k%d", i)
		if err := c.Set(ctx, key, i, 0).Err(); err != nil {
			t.Fatalf("set %s: %v", key, err)
		}
		m, err := cl.MasterOf(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		masters[m] = true
	}
	if len(masters) != 3 {
		t.Fatalf("30 keys landed on %d masters, want 3", len(masters))
	}
	// A multi-key command across slots is refused by the node itself.
	err := c.Eval(ctx, "return redis.call('MGET', KEYS[1], KEYS[2])", []string{"{a}x", "{b}y"}).Err()
	if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot script: %v, want CROSSSLOT", err)
	}
	if err := c.Eval(ctx, "return redis.call('MGET', KEYS[1], KEYS[2])", []string{"{a}x", "{a}y"}).Err(); err != nil {
		t.Fatalf("same-slot script: %v", err)
	}
}

func TestCluster_FailoverPromotesTheReplicaAndKeepsTheData(t *testing.T) {
	cl := StartCluster(t, 3, 1)
	if n := len(cl.Nodes()); n != 6 {
		t.Fatalf("%d nodes, want 6", n)
	}
	c := cl.Client(t)
	ctx := context.Background()
	for i := range 100 {
		if err := c.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// WAIT on the master of k0: its replica has everything written to it.
	const key = "k0"
	m, err := cl.MasterOf(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := m.Client(t).Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v", n, err)
	}
	killed, promoted, err := cl.Failover(ctx, key)
	if err != nil {
		t.Fatalf("failover: %v", err)
	}
	if killed != m || promoted == m || promoted == nil {
		t.Fatalf("killed %v promoted %v, want %v replaced", killed, promoted, m)
	}
	// A client learns the new topology when a command to the dead node
	// fails or its periodic reload (10 s) comes: until then its commands to
	// the slot may fail, as every service's will.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 100; {
		k := fmt.Sprintf("k%d", i)
		v, err := c.Get(ctx, k).Int()
		if err != nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil || v != i {
			t.Fatalf("after failover %s = %d, %v", k, v, err)
		}
		i++
	}
	if err := c.Set(ctx, key, "new", 0).Err(); err != nil {
		t.Fatalf("write after failover: %v", err)
	}
	// The old master comes back as a replica of the one that replaced it.
	if err := killed.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := cl.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := role(ctx, killed); err != nil || r != "slave" {
		t.Fatalf("restarted old master: role %q, %v; want slave", r, err)
	}
	if now, err := cl.MasterOf(ctx, key); err != nil || now != promoted {
		t.Fatalf("master of %s after the restart: %v, %v; want %v", key, now, err, promoted)
	}
}

func TestLaunchCluster_StopRemovesEveryDirectory(t *testing.T) {
	cl, err := LaunchCluster(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, s := range cl.Nodes() {
		dirs = append(dirs, s.Dir())
	}
	cl.Stop()
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("dir %s still there after Stop: %v", d, err)
		}
	}
	if len(cl.Running()) != 0 {
		t.Errorf("%d nodes still running after Stop", len(cl.Running()))
	}
}
