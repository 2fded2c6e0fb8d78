package operator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/operator"
)

// buildRunner builds the table-runner binary of this repository.
func buildRunner(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "table-runner")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/table-runner")
	cmd.Dir = filepath.Join("..", "..", "..", "table-runner")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the table-runner: %v\n%s", err, out)
	}
	return bin
}

// startRunner runs a real table-runner process as the runner of pod, the
// way the pod's container would be started: its id is the pod's name, and
// it leaves assigning to the operator.
func startRunner(t *testing.T, bin, pod, redisAddr string) *exec.Cmd {
	t.Helper()
	cmd, _ := startRunnerLogged(t, bin, pod, redisAddr)
	return cmd
}

// startRunnerLogged is startRunner, also returning the path of the
// runner's log (warnings and errors, JSON lines).
func startRunnerLogged(t *testing.T, bin, pod, redisAddr string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"PULKA_RUNNER_ID="+pod,
		"PULKA_REDIS_ADDR="+redisAddr,
		"PULKA_RUNNER_ASSIGNER=false",
		"PULKA_ADMIN_ADDR=127.0.0.1:0",
		"PULKA_RUNNER_HEARTBEAT_TTL=600ms",
		"PULKA_RUNNER_POLL_INTERVAL=100ms",
		"PULKA_RUNNER_LEASE_TTL=1s",
		"PULKA_RUNNER_BOT_DELAY=20ms",
		"PULKA_LOG_LEVEL=warn",
	)
	logf, err := os.Create(filepath.Join(t.TempDir(), pod+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("log of runner %s:\n%s", pod, tail(b, 3000))
		}
	})
	return cmd, logf.Name()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Real table-runner processes, one per pod the operator created; a game of
// four bots placed by the operator's assigner. Two faults while it plays:
//   - the runner playing it is SIGKILLed while its pod stays Ready (the
//     kubelet has not noticed yet): its heartbeat runs out, the operator
//     moves the table to the other runner, which takes the table's lease and
//     plays on from where the log ends;
//   - the pod of that runner is deleted and its process gets SIGTERM (as the
//     kubelet would send): the table moves to the runner of the replacement
//     pod the operator created for the failed one.
func TestRealRunnersKilledAndDeleted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the table-runner")
	}
	bin := buildRunner(t)
	ctx := context.Background()
	ns, err := env.Namespace(ctx, "real")
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := env.Client
	pool := createPool(t, ns, 2, 600*time.Millisecond, time.Second)
	startReplica(t, operator.Config{Pool: ns + "/rp", LeaseNamespace: ns, LeaderElect: false,
		LeaseDuration: 2 * time.Second, AssignLeaderTTL: 600 * time.Millisecond, Reconcile: 100 * time.Millisecond}, "op", srv)

	pods := awaitPods(t, ns, 2)
	procs := map[string]*exec.Cmd{}
	for i := range pods {
		procs[pods[i].Name] = startRunner(t, bin, pods[i].Name, srv.Addr())
		if err := env.SetReady(ctx, &pods[i], true); err != nil {
			t.Fatal(err)
		}
	}

	const table = "real-1"
	start := &lobbyv1.TableStarted{TableId: table, GameId: "00000000000000a1",
		Seats: []*lobbyv1.Seat{
			{Index: 0, DisplayName: "Bot", Bot: true}, {Index: 1, DisplayName: "Bot", Bot: true},
			{Index: 2, DisplayName: "Bot", Bot: true}, {Index: 3, DisplayName: "Bot", Bot: true},
		},
		Settings: &lobbyv1.TableSettings{
			Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
			Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200, Premia: true, Moshla: true, RestDocked: true,
		}}
	data, err := proto.Marshal(start)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: lobbyclient.TableStartStream,
		Values: []any{streams.FieldData, data}}).Err(); err != nil {
		t.Fatal(err)
	}

	leaseOwner := func() string {
		v, _ := rdb.HGet(ctx, streams.TableLease(table), "owner").Result()
		return v
	}
	events := func() int64 {
		n, _ := rdb.XLen(ctx, streams.TableEvents(table)).Result()
		return n
	}
	var first string
	eventually(t, "the table placed and played by a runner", 30*time.Second, func() error {
		first = leaseOwner()
		if first == "" || events() < 20 {
			return fmt.Errorf("lease owner %q, %d events", first, events())
		}
		return nil
	})
	other := pods[0].Name
	if other == first {
		other = pods[1].Name
	}

	// SIGKILL: no snapshot, no Leave; only the heartbeat stops.
	if err := procs[first].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = procs[first].Wait()
	atKill := events()
	killed := time.Now()
	eventually(t, "the other runner plays on", 30*time.Second, func() error {
		if o := leaseOwner(); o != other {
			return fmt.Errorf("lease owner %q", o)
		}
		if n := events(); n <= atKill+10 {
			return fmt.Errorf("%d events, %d at the kill", n, atKill)
		}
		return nil
	})
	t.Logf("SIGKILL → the other runner appending again: within %v (heartbeat TTL 600ms)", time.Since(killed).Round(10*time.Millisecond))

	// The kubelet notices: the killed runner's pod fails, the operator
	// deletes it and creates a replacement, whose runner the test starts.
	var dead corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: first}, &dead); err != nil {
		t.Fatal(err)
	}
	if err := env.SetPhase(ctx, &dead, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	var third string
	eventually(t, "a replacement pod", 20*time.Second, func() error {
		var l corev1.PodList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range l.Items {
			if n := l.Items[i].Name; n != first && n != other {
				third = n
				procs[n] = startRunner(t, bin, n, srv.Addr())
				return env.SetReady(ctx, &l.Items[i], true)
			}
		}
		return fmt.Errorf("pods %v", podNames(l.Items))
	})

	// Pod deleted (a drain of its node, an eviction): the kubelet sends
	// SIGTERM; the runner writes a snapshot, releases the lease and leaves,
	// and the table moves to the replacement runner at once.
	var doomed corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: other}, &doomed); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &doomed); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if err := procs[other].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	atDelete := events()
	eventually(t, "the replacement runner plays on", 30*time.Second, func() error {
		if o := leaseOwner(); o != third {
			return fmt.Errorf("lease owner %q", o)
		}
		if n := events(); n <= atDelete+10 {
			return fmt.Errorf("%d events, %d at the deletion", n, atDelete)
		}
		return nil
	})
	t.Logf("pod deleted → the replacement runner appending again: within %v", time.Since(deleted).Round(10*time.Millisecond))
	if err := procs[other].Wait(); err != nil {
		t.Errorf("the runner of the deleted pod did not stop cleanly on SIGTERM: %v", err)
	}
	var p pulkav1.RunnerPool
	if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the migration counted", 10*time.Second, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
			return err
		}
		// Two moves: HeartbeatExpired, then the deleted pod's (PodGone:
		// with no kubelet to hold it, the pod is gone at once).
		if p.Status.Migrations.Count != 2 {
			return fmt.Errorf("migrations %+v", p.Status.Migrations)
		}
		return nil
	})
}

func podNames(ps []corev1.Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}
