package operator_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// netns is a network namespace joined to this one by a veth pair: a runner
// started in it reaches Redis through the link, and the test cuts the link.
type netns struct {
	name, hostIf, hostIP string
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip(8)")
	}
	id := os.Getpid() % 250
	n := &netns{name: fmt.Sprintf("pulka-op-%d", os.Getpid()), hostIf: fmt.Sprintf("pko%dh", os.Getpid()%100000),
		hostIP: fmt.Sprintf("10.213.%d.1", id)}
	nsIf := fmt.Sprintf("pko%dn", os.Getpid()%100000)
	run(t, "ip", "netns", "add", n.name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", n.name).Run() }) // takes the veth pair with it
	run(t, "ip", "link", "add", n.hostIf, "type", "veth", "peer", "name", nsIf)
	run(t, "ip", "link", "set", nsIf, "netns", n.name)
	run(t, "ip", "addr", "add", n.hostIP+"/30", "dev", n.hostIf)
	run(t, "ip", "link", "set", n.hostIf, "up")
	run(t, "ip", "netns", "exec", n.name, "ip", "addr", "add", fmt.Sprintf("10.213.%d.2/30", id), "dev", nsIf)
	run(t, "ip", "netns", "exec", n.name, "ip", "link", "set", nsIf, "up")
	run(t, "ip", "netns", "exec", n.name, "ip", "link", "set", "lo", "up")
	return n
}

// A real runner in its own network namespace plays a bot game; the test
// drops its link to Redis while its pod stays Ready (a partition the kubelet
// does not see). Its heartbeat runs out, the operator moves the table, and
// the other runner takes the table's lease (a new epoch: the cut-off runner
// is fenced) and plays on. When the link comes back, the table stays with
// the new owner.
func TestRealRunnerPartitioned(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the table-runner")
	}
	n := newNetns(t)
	bin := buildRunner(t)
	ctx := context.Background()
	ns, err := env.Namespace(ctx, "partition")
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t, redistest.WithArgs("--bind", "127.0.0.1", n.hostIP))
	rdb := srv.Client(t)
	c := env.Client
	pool := createPool(t, ns, 2, 600*time.Millisecond, time.Second)
	startReplica(t, operator.Config{Pool: ns + "/rp", LeaseNamespace: ns, LeaderElect: false,
		LeaseDuration: 2 * time.Second, AssignLeaderTTL: 600 * time.Millisecond, Reconcile: 100 * time.Millisecond}, "op", srv)
	pods := awaitPods(t, ns, 2)
	cutOff, other := pods[0].Name, pods[1].Name

	// The runner of the first pod lives in the namespace; only its pod is
	// Ready at first, so the game goes to it.
	redisVia := n.hostIP + ":" + strconv.Itoa(srv.Port())
	wrapped := filepath.Join(t.TempDir(), "in-netns")
	script := fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", n.name, bin)
	if err := os.WriteFile(wrapped, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, cutLog := startRunnerLogged(t, wrapped, cutOff, redisVia)
	if err := env.SetReady(ctx, &pods[0], true); err != nil {
		t.Fatal(err)
	}
	startRunner(t, bin, other, srv.Addr())

	const table = "partition-1"
	data, err := proto.Marshal(&lobbyv1.TableStarted{TableId: table, GameId: "00000000000000b2",
		Seats: []*lobbyv1.Seat{
			{Index: 0, DisplayName: "Bot", Bot: true}, {Index: 1, DisplayName: "Bot", Bot: true},
			{Index: 2, DisplayName: "Bot", Bot: true}, {Index: 3, DisplayName: "Bot", Bot: true},
		},
		Settings: &lobbyv1.TableSettings{
			Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
			Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200, Premia: true, Moshla: true, RestDocked: true,
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: lobbyclient.TableStartStream,
		Values: []any{streams.FieldData, data}}).Err(); err != nil {
		t.Fatal(err)
	}
	lease := func() (string, string) {
		v, _ := rdb.HMGet(ctx, streams.TableLease(table), "owner", "epoch").Result()
		s := func(x any) string { str, _ := x.(string); return str }
		return s(v[0]), s(v[1])
	}
	events := func() int64 {
		k, _ := rdb.XLen(ctx, streams.TableEvents(table)).Result()
		return k
	}
	eventually(t, "the cut-off runner plays the table", 30*time.Second, func() error {
		if o, _ := lease(); o != cutOff || events() < 20 {
			return fmt.Errorf("lease owner %q, %d events", o, events())
		}
		return nil
	})
	if err := env.SetReady(ctx, &pods[1], true); err != nil {
		t.Fatal(err)
	}
	_, epochBefore := lease()

	run(t, "ip", "link", "set", n.hostIf, "down") // the partition
	cut := time.Now()
	atCut := events()
	eventually(t, "the other runner plays on", 30*time.Second, func() error {
		if o, _ := lease(); o != other {
			return fmt.Errorf("lease owner %q", o)
		}
		if k := events(); k <= atCut+10 {
			return fmt.Errorf("%d events, %d at the cut", k, atCut)
		}
		return nil
	})
	t.Logf("partition → the other runner appending again: within %v (heartbeat TTL 600ms)", time.Since(cut).Round(10*time.Millisecond))
	if _, epoch := lease(); epoch == epochBefore {
		t.Errorf("the table's lease epoch is still %s: the cut-off runner is not fenced", epoch)
	}
	var p pulkav1.RunnerPool
	if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
		t.Fatal(err)
	}
	if !isPodReady(c, ns, cutOff) {
		t.Error("the cut-off runner's pod is not Ready: this was not a partition the kubelet misses")
	}

	// The link comes back: the cut-off runner's next write for the table
	// (a lease renewal or an append) is refused by the new epoch, and the
	// table stays where it is.
	run(t, "ip", "link", "set", n.hostIf, "up")
	eventually(t, "the cut-off runner refused by the fence", 15*time.Second, func() error {
		b, err := os.ReadFile(cutLog)
		if err != nil {
			return err
		}
		for _, refusal := range []string{"fenced by a newer lease epoch", "lease lost"} {
			if bytes.Contains(b, []byte(refusal)) {
				t.Logf("the cut-off runner's log: %q", refusal)
				return nil
			}
		}
		return fmt.Errorf("no refusal in its log:\n%s", tail(b, 1500))
	})
	if o, _ := lease(); o != other {
		t.Errorf("after the link came back the lease is %q's, want %s's", o, other)
	}
	eventually(t, "the migration counted as HeartbeatExpired", 10*time.Second, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
			return err
		}
		if p.Status.Migrations.Count < 1 || p.Status.Migrations.LastReason != "HeartbeatExpired" {
			return fmt.Errorf("migrations %+v", p.Status.Migrations)
		}
		return nil
	})
}

func isPodReady(c client.Client, ns, name string) bool {
	var p corev1.Pod
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		return false
	}
	return kubeReady(&p)
}
