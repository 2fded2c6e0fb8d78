package service

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

// resultKeys counts the stored command results (pulka:{lobby}:done:*).
func (e *env) resultKeys() int {
	e.t.Helper()
	keys, err := e.rdb.Keys(context.Background(), store.ResultKey("*")).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return len(keys)
}

// The security review's probe: one player sits, stands and stands at a
// table that does not exist, 200 times in a row, as fast as the lobby
// answers. Every answered command (accepted or refused) is stored for the
// result TTL (24 h), so without a limit one account filled Redis at request
// speed (600 commands: 601 result keys). Now only the first
// CommandsPerMinute of the minute are applied and stored; the rest are
// refused RATE_LIMITED and leave nothing behind.
func TestLimit_SitStandFlappingIsBoundedAndStoresNothingPastTheLimit(t *testing.T) {
	e := newEnv(t)
	clk := &clock{} // frozen: the flood takes well under the window
	e.lobby("l1", withLimits(clk, Limits{}))
	limit := DefaultLimits().CommandsPerMinute
	table := e.mustCreate("host", classic(), "", true)
	before := e.resultKeys()
	applied, limited := 0, 0
	for range 200 {
		for _, cmd := range []*lobbyv1.LobbyCommand{sit(table, 1, ""), standUp(table), standUp("no-such-table")} {
			r := e.do("p1", cmd)
			if r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED {
				applied++
				continue
			}
			limited++
			if ra := r.GetRetryAfter().AsDuration(); ra <= 0 || r.GetMessage() == "" {
				t.Fatalf("a limit's refusal without retry_after or message: %v", r)
			}
			if n := e.rdb.Exists(context.Background(), store.ResultKey(r.GetCommandId())).Val(); n != 0 {
				t.Fatalf("the limit's refusal of %s was stored", r.GetCommandId())
			}
		}
	}
	after := e.resultKeys()
	t.Logf("600 commands in a row: %d applied, %d refused by the limit; result keys %d -> %d", applied, limited, before, after)
	if applied != limit || limited != 600-limit {
		t.Fatalf("%d commands applied and %d refused by the limit, want %d and %d", applied, limited, limit, 600-limit)
	}
	if after-before != limit {
		t.Fatalf("%d result keys stored, want %d (one per applied command)", after-before, limit)
	}
	// What one result costs Redis, for docs/limits.md's bound per account.
	keys, _ := e.rdb.Keys(context.Background(), store.ResultKey("*")).Result()
	var bytes int64
	for _, k := range keys {
		bytes += e.rdb.MemoryUsage(context.Background(), k).Val()
	}
	t.Logf("%d result keys: %d bytes each on average", len(keys), bytes/int64(len(keys)))
}

// wantLimited checks that r is a refusal by a rate limit (RATE_LIMITED,
// which the gateway answers 429 with Retry-After) and that it was not
// stored: the same command may be sent again once the window has room.
func (e *env) wantLimited(what string, r *lobbyv1.LobbyCommandResult) {
	e.t.Helper()
	wantReason(e.t, what, r, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED)
	if ra := r.GetRetryAfter().AsDuration(); ra <= 0 || ra > time.Minute {
		e.t.Fatalf("%s: retry after %v, want within the minute", what, ra)
	}
	if n := e.rdb.Exists(context.Background(), store.ResultKey(r.GetCommandId())).Val(); n != 0 {
		e.t.Fatalf("%s: the limit's refusal was stored", what)
	}
}

// limitedMetric reads pulka_lobby_limited as limit → count.
func limitedMetric(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	return counterBy(t, reader, "pulka_lobby_limited", func(a attribute.Set) string {
		l, _ := a.Value("limit")
		return l.AsString()
	})
}

// counterBy reads the int64 counter name, summed by key of each data
// point's attributes.
func counterBy(t *testing.T, reader *sdkmetric.ManualReader, name string, key func(attribute.Set) string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != name || !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				out[key(dp.Attributes)] += dp.Value
			}
		}
	}
	return out
}

func withMetrics(reader *sdkmetric.ManualReader) func(*Options) {
	return func(o *Options) { o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)) }
}

// Every kind of command a player sends counts against one window: the
// N+1-th in a minute is refused before anything is decided, stores no
// result and changes nothing; another player is not affected; once the
// window slides the same command goes through.
func TestLimit_CommandsPerPlayer(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	reader := sdkmetric.NewManualReader()
	e.lobby("a", withLimits(clk, Limits{CommandsPerMinute: 5}), withMetrics(reader))
	table := e.mustCreate("host", classic(), "", true)
	before := e.resultKeys()
	// Five commands of every kind, accepted or refused (refusals by the
	// table count: each is stored).
	for i, c := range []*lobbyv1.LobbyCommand{sit(table, 1, ""), standUp(table), sit(table, 2, ""), fillBots(table), leave(table)} {
		if r := e.do("p", c); r.GetReason() == lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED {
			t.Fatalf("command %d of 5 refused by the limit: %v", i+1, r)
		}
		clk.advance(time.Second)
	}
	if got := e.resultKeys() - before; got != 5 {
		t.Fatalf("%d results stored, want 5", got)
	}
	// The sixth of any kind is refused, a sit-down, a creation, a stand-up
	// at a table that does not exist; nothing is stored, the seat stays free.
	sixth := standUp("no-such-table")
	sixth.CommandId = "sixth"
	e.wantLimited("the sixth command", e.do("p", sixth))
	r := e.do("p", sit(table, 1, ""))
	e.wantLimited("a sit-down past the limit", r)
	if ra := r.GetRetryAfter().AsDuration(); ra != 55*time.Second {
		t.Fatalf("retry after %v, want 55s (the first command leaves the window then)", ra)
	}
	if s := e.fetch(table).GetSeats()[1]; s.GetPlayerId() != "" {
		t.Fatalf("a refused sit-down took seat 1: %v", s)
	}
	e.wantLimited("a creation past the limit", e.create("p", classic(), "", true))
	if got := e.resultKeys() - before; got != 5 {
		t.Fatalf("%d results stored after the refusals, want 5", got)
	}
	if n := e.rdb.ZCard(context.Background(), store.CommandRateKey("p")).Val(); n != 5 {
		t.Fatalf("p's window holds %d entries, want 5 (refusals count nothing)", n)
	}
	// Another player is not affected.
	if r := e.do("q", sit(table, 1, "")); !r.GetAccepted() {
		t.Fatalf("another player: %v", r)
	}
	// The window slides: the refused command, sent again, is applied.
	clk.advance(55 * time.Second)
	wantReason(t, "the sixth command again", e.do("p", sixth), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND)
	if r := e.do("p", sit(table, 2, "")); r.GetAccepted() {
		t.Fatalf("one slot freed, two commands went through: %v", r)
	}
	if got := limitedMetric(t, reader); fmt.Sprint(got) != fmt.Sprint(map[string]int64{"commands": 4}) {
		t.Fatalf("pulka_lobby_limited %v, want commands: 4", got)
	}
}

// A sit-down at a coin table holds a stake in the wallet, which keeps
// every operation for ever: sit-downs there have a tighter window of their
// own, counted before the hold is sent. Refused, nothing reaches the
// wallet and nothing is stored.
func TestLimit_CoinSitsPerPlayer(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	reader := sdkmetric.NewManualReader()
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-p": 1000, "u-q": 1000})
	e.lobby("a", withLimits(clk, Limits{CoinSitsPerMinute: 2, CommandsPerMinute: 30}), withWallet(w), withMetrics(reader))
	table := e.mustCreate("u-host", coins(10), "", true)
	free := e.mustCreate("u-host", classic(), "", true)
	for range 2 {
		if r := e.do("u-p", sit(table, 1, "")); !r.GetAccepted() {
			t.Fatal(r)
		}
		// Moving seats holds nothing: not counted.
		if r := e.do("u-p", sit(table, 2, "")); !r.GetAccepted() {
			t.Fatal(r)
		}
		if r := e.do("u-p", standUp(table)); !r.GetAccepted() {
			t.Fatal(r)
		}
	}
	heard := strings.Join(w.kinds(), ",")
	if want := "hold u-host,hold u-p,release u-p,hold u-p,release u-p"; heard != want {
		t.Fatalf("wallet heard %s, want %s", heard, want)
	}
	before := e.resultKeys()
	third := sit(table, 1, "")
	third.CommandId = "third-coin-sit"
	e.wantLimited("a third coin sit-down in the minute", e.do("u-p", third))
	if got := strings.Join(w.kinds(), ","); got != heard {
		t.Fatalf("the refused sit-down reached the wallet: %s", got)
	}
	if s := e.fetch(table).GetSeats()[1]; s.GetPlayerId() != "" {
		t.Fatalf("a refused sit-down took seat 1: %v", s)
	}
	if n := e.rdb.SCard(context.Background(), store.StakersKey(table)).Val(); n != 2 {
		t.Fatalf("%d stakers recorded, want 2 (the host and p; the refusal recorded nothing)", n)
	}
	// A coin table created with its host seated holds a stake too: counted
	// before its table id is reserved.
	create := &lobbyv1.LobbyCommand{CommandId: "coin-create", Command: &lobbyv1.LobbyCommand_CreateTable{
		CreateTable: &lobbyv1.CreateTable{Name: "mine", Settings: coins(10), SitDown: true}}}
	e.wantLimited("a coin table created seated", e.do("u-p", create))
	if n := e.rdb.Exists(context.Background(), store.CreatingKey("coin-create")).Val(); n != 0 {
		t.Fatal("the refused creation reserved a table id")
	}
	if got := strings.Join(w.kinds(), ","); got != heard {
		t.Fatalf("the refused creation reached the wallet: %s", got)
	}
	if got := e.resultKeys(); got != before {
		t.Fatalf("result keys %d -> %d: a limit's refusal was stored", before, got)
	}
	// Free tables and other players are not affected.
	if r := e.do("u-p", sit(free, 1, "")); !r.GetAccepted() {
		t.Fatalf("a free table: %v", r)
	}
	if r := e.do("u-q", sit(table, 1, "")); !r.GetAccepted() {
		t.Fatalf("another player: %v", r)
	}
	// A minute later the same sit-down goes through (seat 2: q took 1).
	clk.advance(time.Minute)
	third.GetSitDown().Seat = 2
	if r := e.do("u-p", third); !r.GetAccepted() {
		t.Fatalf("after the window: %v", r)
	}
	if a, h := w.state("u-p", table); a != 990 || h != 10 {
		t.Fatalf("p after the window: available %d held %d", a, h)
	}
	if got := limitedMetric(t, reader); fmt.Sprint(got) != fmt.Sprint(map[string]int64{"coin_sits": 2}) {
		t.Fatalf("pulka_lobby_limited %v, want coin_sits: 2", got)
	}
}

// The review's probe at a coin table, with the default limits: however
// fast one account sits down and stands up, the wallet hears at most
// CoinSitsPerMinute holds (and their releases) a minute.
func TestLimit_CoinSitStandFlappingIsBoundedAtTheWallet(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-p": 1000})
	e.lobby("a", withLimits(clk, Limits{}), withWallet(w))
	table := e.mustCreate("u-host", coins(10), "", true)
	for range 100 {
		e.do("u-p", sit(table, 1, ""))
		e.do("u-p", standUp(table))
	}
	holds, releases := 0, 0
	for _, k := range w.kinds() {
		switch k {
		case "hold u-p":
			holds++
		case "release u-p":
			releases++
		}
	}
	t.Logf("200 commands: the wallet heard %d holds and %d releases for the player", holds, releases)
	if want := DefaultLimits().CoinSitsPerMinute; holds != want || releases != want {
		t.Fatalf("the wallet heard %d holds and %d releases, want %d each", holds, releases, want)
	}
}
