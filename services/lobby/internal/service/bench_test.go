package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/redistest"
)

// benchLimits lift the per-player command limit: the benchmarks measure a
// command's cost, and one player sends them all (the window is counted
// all the same, one script per command).
var benchLimits = Limits{CommandsPerMinute: 1_000_000}

// BenchmarkApply_SitAndStand measures one command end to end inside the
// service (dedupe check, load, decide, commit script) against a local
// redis-server: the lobby's per-command cost without the stream hops.
func BenchmarkApply_SitAndStand(b *testing.B) {
	srv := redistest.Start(b)
	svc, err := New(srv.Client(b), Options{Password: cheapPasswords, Limits: benchLimits})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	created, err := svc.Apply(ctx, &lobbyv1.LobbyCommand{CommandId: "create", PlayerId: "host",
		Command: &lobbyv1.LobbyCommand_CreateTable{CreateTable: &lobbyv1.CreateTable{Settings: classic(), SitDown: true}}})
	if err != nil || !created.GetAccepted() {
		b.Fatal(created, err)
	}
	id := created.GetTableId()
	i := 0
	for b.Loop() {
		cmd := sit(id, 1, "")
		if i%2 == 1 {
			cmd = standUp(id)
		}
		cmd.CommandId, cmd.PlayerId = fmt.Sprint("c", i), "guest"
		r, err := svc.Apply(ctx, cmd)
		if err != nil || !r.GetAccepted() {
			b.Fatal(r, err)
		}
		i++
	}
}

// BenchmarkApply_ParallelTables runs commands on many tables at once, as
// several consumers do.
func BenchmarkApply_ParallelTables(b *testing.B) {
	srv := redistest.Start(b)
	svc, err := New(srv.Client(b), Options{Password: cheapPasswords, Limits: benchLimits})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		me := n.Add(1)
		created, err := svc.Apply(ctx, &lobbyv1.LobbyCommand{CommandId: fmt.Sprint("create", me), PlayerId: "host",
			Command: &lobbyv1.LobbyCommand_CreateTable{CreateTable: &lobbyv1.CreateTable{Settings: classic(), SitDown: true}}})
		if err != nil || !created.GetAccepted() {
			b.Error(created, err)
			return
		}
		for i := 0; pb.Next(); i++ {
			cmd := sit(created.GetTableId(), 1, "")
			if i%2 == 1 {
				cmd = standUp(created.GetTableId())
			}
			cmd.CommandId, cmd.PlayerId = fmt.Sprint("c", me, "-", i), "guest"
			if r, err := svc.Apply(ctx, cmd); err != nil || !r.GetAccepted() {
				b.Error(r, err)
				return
			}
		}
	})
}

// BenchmarkDo_EndToEnd is a gateway's view of one command: XADD to
// pulka:lobby:cmd, a lobby replica (2 consumers) applies it, the result
// comes back on the reply stream. Run in parallel, as many players do.
func BenchmarkDo_EndToEnd(b *testing.B) {
	srv := redistest.Start(b)
	e := &env{srv: srv, rdb: srv.Client(b)}
	e.client = newTestClient(srv)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() }) // before the server stops
	svc, err := New(srv.Client(b), Options{Consumers: 2, Password: cheapPasswords, Limits: benchLimits})
	if err != nil {
		b.Fatal(err)
	}
	wg.Add(2)
	go func() { defer wg.Done(); _ = e.client.Run(ctx) }()
	go func() { defer wg.Done(); _ = svc.Run(ctx) }()
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		me := n.Add(1)
		created, err := e.client.Do(ctx, &lobbyv1.LobbyCommand{PlayerId: "host",
			Command: &lobbyv1.LobbyCommand_CreateTable{CreateTable: &lobbyv1.CreateTable{Settings: classic(), SitDown: true}}})
		if err != nil || !created.GetAccepted() {
			b.Error(created, err)
			return
		}
		for i := 0; pb.Next(); i++ {
			cmd := sit(created.GetTableId(), 1, "")
			if i%2 == 1 {
				cmd = standUp(created.GetTableId())
			}
			cmd.CommandId, cmd.PlayerId = fmt.Sprint("c", me, "-", i), "guest"
			if r, err := e.client.Do(ctx, cmd); err != nil || !r.GetAccepted() {
				b.Error(r, err)
				return
			}
		}
	})
}
