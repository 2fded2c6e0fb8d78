package operator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/operator/internal/operator"
)

// The operator acts the moment a runner stops being live, not at its next
// pass: with a reconcile interval of 10 s, a runner whose heartbeat runs out
// while its pod stays Ready (a partition) loses its table within
// milliseconds of the heartbeat's deadline, and a runner whose pod turned
// NotReady loses its table when the grace ends (counted, as ReadyWithin
// does, from the transition time the API server keeps, plus its second).
// An operator that only passed every interval would keep both tables where
// they are for 10 s.
func TestMigrationAtTheMomentARunnerStopsBeingLive(t *testing.T) {
	ctx := context.Background()
	ns, err := env.Namespace(ctx, "timing")
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	const ttl, grace = 300 * time.Millisecond, 1500 * time.Millisecond
	createPool(t, ns, 3, ttl, grace)
	startReplica(t, operator.Config{Pool: ns + "/rp", LeaseNamespace: ns, LeaderElect: false,
		LeaseDuration: 2 * time.Second, AssignLeaderTTL: 600 * time.Millisecond, Reconcile: 10 * time.Second}, "op", srv)
	pods := awaitPods(t, ns, 3)
	cutOff, notReady, healthy := pods[0].Name, pods[1].Name, pods[2].Name

	// The runners beat every 100 ms until the test cuts one off.
	beats := assign.NewHeartbeats(rdb, ttl)
	var mu sync.Mutex
	beating := map[string]bool{cutOff: true, notReady: true, healthy: true}
	bctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		for bctx.Err() == nil {
			mu.Lock()
			for id, on := range beating {
				if on {
					_ = beats.Beat(bctx, assign.Member{ID: id})
				}
			}
			mu.Unlock()
			select {
			case <-bctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	// As a runner's readiness probe does, the pods turn Ready once their
	// runners beat: each turn wakes the operator, whose pass then sees the
	// runner live and times its next pass by the heartbeat.
	for i := range pods {
		if err := env.SetReady(ctx, &pods[i], true); err != nil {
			t.Fatal(err)
		}
	}
	store := assign.NewStore(rdb)
	for tb, r := range map[string]string{"t-cut": cutOff, "t-notready": notReady} {
		if ok, err := store.Add(ctx, streams.Lease{}, tb, r); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	// movedAt waits for tb to leave from and says when it did.
	movedAt := func(tb, from string, within time.Duration) time.Time {
		t.Helper()
		limit := time.Now().Add(within)
		for {
			o, _, err := store.Owner(ctx, tb)
			if err != nil {
				t.Fatal(err)
			}
			if o != from {
				if o != healthy {
					t.Fatalf("%s moved to %q, want %s", tb, o, healthy)
				}
				return time.Now()
			}
			if time.Now().After(limit) {
				t.Fatalf("%s still on %s after %v (reconcile interval 10 s)", tb, from, within)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	eventually(t, "the operator sees three live runners", 20*time.Second, func() error {
		var n int
		for _, p := range pods {
			var q corev1.Pod
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&p), &q); err != nil {
				return err
			}
			if kubeReady(&q) {
				n++
			}
		}
		if n != 3 {
			return fmt.Errorf("%d pods Ready", n)
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // its cache has them too

	// A partition: the heartbeat stops, the pod stays Ready.
	mu.Lock()
	beating[cutOff] = false
	mu.Unlock()
	pipe := rdb.Pipeline()
	score := pipe.ZScore(ctx, assign.RunnersKey, cutOff)
	now := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.UnixMilli(int64(score.Val())).Sub(now.Val()))
	late := movedAt("t-cut", cutOff, 3*time.Second).Sub(expires)
	t.Logf("heartbeat expired → table moved: %v", late.Round(time.Millisecond))
	if late < -5*time.Millisecond || late > 300*time.Millisecond {
		t.Errorf("t-cut moved %v after its runner's heartbeat expired, want 0–300ms", late)
	}

	// NotReady: the table moves when the grace ends.
	if err := env.SetReady(ctx, &pods[1], false); err != nil {
		t.Fatal(err)
	}
	var q corev1.Pod
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&pods[1]), &q); err != nil {
		t.Fatal(err)
	}
	var since time.Time
	for _, c := range q.Status.Conditions {
		if c.Type == corev1.PodReady {
			since = c.LastTransitionTime.Time
		}
	}
	end := since.Add(grace + time.Second)
	late = movedAt("t-notready", notReady, 5*time.Second).Sub(end)
	t.Logf("NotReady grace ended → table moved: %v", late.Round(time.Millisecond))
	if late < -5*time.Millisecond || late > 300*time.Millisecond {
		t.Errorf("t-notready moved %v after its grace ended, want 0–300ms", late)
	}
}
