package operator_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pulka/pulka/pkg/assign"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/operator"
)

// TestPlacementRate measures how many new tables per second the operator
// places: N TableStarted messages on the lobby's start stream at once, four
// live runners, until every table has an owner. It runs only with
// PULKA_OPERATOR_MEASURE=1 (a measurement, not a check: the machine decides
// the number); it fails only if the tables are not all placed.
//
//	PULKA_OPERATOR_MEASURE=1 KUBEBUILDER_ASSETS=$(scripts/envtest-bins.sh) \
//	  go test -run TestPlacementRate -v ./services/operator/internal/operator/
func TestPlacementRate(t *testing.T) {
	if os.Getenv("PULKA_OPERATOR_MEASURE") != "1" {
		t.Skip("a measurement: set PULKA_OPERATOR_MEASURE=1")
	}
	ctx := context.Background()
	ns, err := env.Namespace(ctx, "measure")
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := env.Client
	n := int32(4)
	pool := &pulkav1.RunnerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rp"},
		Spec: pulkav1.RunnerPoolSpec{Template: pulkav1.RunnerTemplate{Image: "r"}, MinRunners: 1, MaxRunners: 4, Replicas: &n,
			TablesPerRunner: 100000, TargetUtilizationPercent: 70, NotReadyGrace: metav1.Duration{Duration: time.Second}}}
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	startReplica(t, operator.Config{Pool: ns + "/rp", LeaseNamespace: ns, LeaseDuration: 2 * time.Second,
		AssignLeaderTTL: 3 * time.Second, Reconcile: 500 * time.Millisecond}, "op", srv)
	pods := awaitPods(t, ns, 4)
	ids := []string{}
	for i := range pods {
		if err := env.SetReady(ctx, &pods[i], true); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pods[i].Name)
	}
	beatRunners(t, assign.NewHeartbeats(rdb, 3*time.Second), ids...)
	time.Sleep(time.Second) // the membership sees the four runners live
	const N = 2000
	pipe := rdb.Pipeline()
	for i := range N {
		data, err := proto.Marshal(&lobbyv1.TableStarted{TableId: fmt.Sprintf("m%d", i), GameId: "00000000000000a1"})
		if err != nil {
			t.Fatal(err)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: lobbyclient.TableStartStream, Values: []any{streams.FieldData, data}})
	}
	began := time.Now()
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "all placed", 120*time.Second, func() error {
		m, err := rdb.HLen(ctx, assign.OwnersKey).Result()
		if err != nil {
			return err
		}
		if m < N {
			return fmt.Errorf("%d", m)
		}
		return nil
	})
	el := time.Since(began)
	t.Logf("%d tables placed in %v: %.0f/s", N, el, float64(N)/el.Seconds())
}
