package ws

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
)

// BenchmarkFanOut_WebSockets measures a move's way from the table's event
// stream to every watcher's WebSocket: 64 clients on one table (a table with
// spectators, or 16 tables' worth of players), events published one at a
// time as a runner would; it reports the latency from XADD to the last client
// holding the event.
func BenchmarkFanOut_WebSockets(b *testing.B) {
	e := newEnvB(b)
	fanOut(b, e, e.gatewayB(b), func() (context.Context, func()) { return context.Background(), func() {} })
}

// BenchmarkFanOut_WebSocketsTraced is BenchmarkFanOut_WebSockets with the
// gateway and the publisher (the runner) on the OpenTelemetry SDK: unsampled
// is production without an exporter (parentbased_always_off: trace ids
// travel, nothing is recorded), sampled records every move, a span per
// client write included (and drops it: no exporter).
func BenchmarkFanOut_WebSocketsTraced(b *testing.B) {
	for _, bc := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{
		{"unsampled", sdktrace.ParentBased(sdktrace.NeverSample())},
		{"sampled", sdktrace.ParentBased(sdktrace.AlwaysSample())},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(bc.sampler))
			e := newEnvB(b)
			e.pub = streams.NewPublisher(e.rdb, streams.WithMaxLen(0), streams.WithTracerProvider(tp))
			e.tailer = []streams.Option{streams.WithTracerProvider(tp)}
			g := e.gatewayCfg(b, Config{}, func(d *Deps) { d.Tracer = tp.Tracer("gateway") })
			runner := tp.Tracer("runner")
			fanOut(b, e, g, func() (context.Context, func()) {
				ctx, span := runner.Start(context.Background(), "table.apply")
				return ctx, func() { span.End() }
			})
		})
	}
}

// fanOut runs the fan-out benchmark on g, each event published under the
// context move returns (and ended by the function it returns).
func fanOut(b *testing.B, e *env, g *gateway, move func() (context.Context, func())) {
	const clients = 64
	conns := make([]*websocket.Conn, clients)
	ctx := context.Background()
	for i := range conns {
		tok, _, _ := g.signer.Issue(authClaims(fmt.Sprintf("p%d", i)))
		c, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{HTTPHeader: map[string][]string{"Cookie": {"pulka_session=" + tok}}})
		closeBody(resp)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = c.CloseNow() }()
		_, _, _ = c.Read(ctx) // welcome
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"join":{"table":"bench"}}`))
		for {
			_, m, err := c.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(string(m), `"joined"`) {
				break
			}
		}
		conns[i] = c
	}
	data, _ := proto.Marshal(&tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 1, Tricks: 2}}})
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		mctx, end := move()
		if _, err := e.pub.Publish(mctx, streams.Entry{Stream: streams.TableEvents("bench"), Data: data}); err != nil {
			b.Fatal(err)
		}
		end()
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, _ = c.Read(ctx)
			}()
		}
		wg.Wait()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(clients, "clients")
}
