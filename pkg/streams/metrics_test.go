package streams_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// manualMeter is a meter provider whose reader the test collects from; it
// is shut down when the test ends.
func manualMeter(t *testing.T) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return reader, mp
}

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] += p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name] += int64(p.Count)
				}
			}
		}
	}
	return out
}

func TestMetrics_CountPublishConsumeRedeliveryDeadLetterAndLag(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	reader, mp := manualMeter(t)

	stream := streams.TableCommands("m")
	pub := streams.NewPublisher(rdb, streams.WithMeterProvider(mp))
	for _, d := range []string{"ok", "ok", "bad"} {
		if _, err := pub.Publish(ctx, streams.Entry{Stream: stream, Data: []byte(d)}); err != nil {
			t.Fatal(err)
		}
	}
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		if string(m.Data) == "bad" {
			return errors.New("bad")
		}
		return nil
	}, fast(streams.WithMeterProvider(mp), streams.WithMaxDeliveries(2), streams.WithMinIdle(100*time.Millisecond),
		streams.WithLagInterval(50*time.Millisecond))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	eventually(t, 5*time.Second, "dead letter", func() bool { return collect(t, reader)["pulka.streams.dead_lettered"] == 1 })
	m := collect(t, reader)
	want := map[string]int64{
		"pulka.streams.published":        3,
		"pulka.streams.consumed":         4, // ok, ok, bad, bad
		"pulka.streams.handler.duration": 4,
		"pulka.streams.redelivered":      1,
		"pulka.streams.dead_lettered":    1,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %d, want %d", k, m[k], v)
		}
	}
	if _, ok := m["pulka.streams.group.lag"]; !ok {
		t.Errorf("no lag gauge reported")
	}
}

func TestConsumer_LagAndPendingAreSampled(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableCommands("lag")
	pub := streams.NewPublisher(rdb)
	block := make(chan struct{})
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil
	}, fast(streams.WithLagInterval(50*time.Millisecond), streams.WithCount(1), streams.WithMaxInFlight(1))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := pub.Publish(ctx, streams.Entry{Stream: stream}); err != nil {
			t.Fatal(err)
		}
	}
	runConsumer(t, c)
	// One message is held by the blocked handler; four wait undelivered.
	eventually(t, 3*time.Second, "lag 4 pending 1", func() bool { return c.Lag() == 4 && c.Pending() == 1 })
	close(block)
	eventually(t, 3*time.Second, "lag 0 pending 0", func() bool { return c.Lag() == 0 && c.Pending() == 0 })
}

// A Tailer counts the entries it delivered straight from their bells apart
// from those it had to read: what an operator watches to see the bells work.
func TestMetrics_TailerCountsEntriesDeliveredFromTheirBells(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	reader, mp := manualMeter(t)
	s := streams.TableEvents("counted")
	col := followed(t, rdb, s, "$", streams.WithMeterProvider(mp))
	time.Sleep(100 * time.Millisecond) // past the first read
	pub := streams.NewPublisher(rdb, streams.WithEntryBells())
	publishN(t, pub, s, 0, 3)
	eventually(t, 2*time.Second, "three entries", func() bool { return col.datas(s) == "0,1,2" })
	// A silent entry: the next bell finds the gap, and both are read.
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []any{streams.FieldData, "3"}}).Err(); err != nil {
		t.Fatal(err)
	}
	publishN(t, pub, s, 4, 5)
	eventually(t, 2*time.Second, "the read ones", func() bool { return col.datas(s) == "0,1,2,3,4" })
	m := collect(t, reader)
	if m["pulka.streams.consumed"] != 5 || m["pulka.streams.tail.from_bell"] != 3 {
		t.Fatalf("consumed %d, from their bells %d; want 5 and 3", m["pulka.streams.consumed"], m["pulka.streams.tail.from_bell"])
	}
}
