package service

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/daemon"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
)

func load(t *testing.T, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	var c Config
	err := daemon.Load(&c, "wallet", args, func(k string) string { return env[k] }, &bytes.Buffer{})
	return c, err
}

func TestConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		bad  string
	}{
		{"defaults", nil, nil, ""},
		{"env sets the grant", map[string]string{"PULKA_WALLET_SIGNUP_GRANT": "500"}, nil, ""},
		{"empty group", nil, []string{"-group="}, "group is empty"},
		{"tiny reclaim idle", nil, []string{"-reclaim-idle=1ms"}, "reclaim-idle"},
		{"no workers", nil, []string{"-workers=0"}, "workers"},
		{"negative bonus", nil, []string{"-daily-bonus=-1"}, "daily-bonus"},
		{"unknown time zone", nil, []string{"-time-zone=Mars/Olympus"}, "time-zone"},
		{"repair before reclaim", nil, []string{"-repair-grace=1s", "-reclaim-idle=5s"}, "repair-grace"},
		{"negative pot ttl", nil, []string{"-pot-ttl=-1h"}, "pot-ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.env, tc.args...)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.bad != "" && (!errors.Is(err, daemon.ErrConfig) || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("want ErrConfig mentioning %q, got %v", tc.bad, err)
			}
		})
	}
}

// The daily bonus's day is the wallet's calendar day in its time zone:
// 21:00 UTC is already the next day in Tbilisi (UTC+4).
func TestDay_IsTheCalendarDayOfTheTimeZone(t *testing.T) {
	tbilisi, err := time.LoadLocation(DefaultLocation)
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	w := New(nil, Options{Location: tbilisi}, nil)
	if got := w.Day(time.Date(2026, 12, 5, 21, 0, 0, 0, time.UTC)); got != "2026-12-06" {
		t.Fatalf("day %s", got)
	}
}

// Under the daemon: ready with its consumer, metrics served, scoring's
// FinalStandings settle a coin table (published once on the settled
// stream), and it stops cleanly.
func TestRun_SettlesFromScoringsStandingsUnderTheDaemon(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg, err := load(t, map[string]string{daemon.EnvRedisAddr: srv.Addr(), daemon.EnvAdminAddr: "127.0.0.1:0"},
		"-consumer", "test-1", "-shutdown-timeout", "5s", "-audit-interval", "50ms", "-repair-grace", "5s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan *daemon.Daemon, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "wallet", Config: cfg.Base, LogWriter: io.Discard},
			func(ctx context.Context, d *daemon.Daemon) error { started <- d; return cfg.Run(ctx, d) })
	}()
	d := <-started
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + d.AdminAddr() + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor(t, func() bool { code, _ := get("/readyz"); return code == 200 })
	if _, body := get("/readyz"); !strings.Contains(body, `"consumer":"ok"`) {
		t.Fatalf("readiness does not include the consumer: %s", body)
	}

	cs := clients(t, rdb, 1, 5*time.Second)
	for _, c := range []*walletv1.WalletCommand{
		{CommandId: "o1", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: "ana"}}},
		{CommandId: "o2", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: "beso"}}},
		{CommandId: "h1", Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: "ana", TableId: "j1", Amount: 100, Game: lobbyv1.Game_GAME_JAPANESE}}},
		{CommandId: "h2", Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: "beso", TableId: "j1", Amount: 100, Game: lobbyv1.Game_GAME_JAPANESE}}},
	} {
		if res := do(t, cs[0], c); !res.GetAccepted() {
			t.Fatalf("%s: %v", c.GetCommandId(), res)
		}
	}
	if ttl, err := rdb.PTTL(ctx, cs[0].ReplyStream()).Result(); err != nil || ttl <= 0 || ttl > ReplyTTL {
		t.Fatalf("reply stream ttl %v, %v", ttl, err)
	}
	// Scoring publishes the standings (twice, as a retried publish would).
	fs := &scoringv1.FinalStandings{TableId: "j1", GameId: "g1", Standings: []*scoringv1.Standing{
		{Place: 1, Seat: 1, PlayerId: "beso"}, {Place: 2, Seat: 0, PlayerId: "ana"}}}
	data, _ := proto.Marshal(fs)
	pub := streams.NewPublisher(rdb)
	for range 2 {
		if _, err := pub.Publish(ctx, streams.Entry{Stream: scoringclient.StandingsStream, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		b, err := walletclient.ReadBalance(ctx, rdb, "beso")
		return err == nil && b.GetAvailable() == 1100
	})
	if b, _ := walletclient.ReadBalance(ctx, rdb, "ana"); b.GetAvailable() != 900 || b.GetHeld() != 0 {
		t.Fatalf("ana %v", b)
	}
	waitFor(t, func() bool { n, _ := rdb.XLen(ctx, walletclient.SettledStream("j1")).Result(); return n == 1 })
	// Settled where they were read: no SettleGame went to a command shard
	// (a hop of its own, once).
	for _, shard := range walletclient.CommandStreams() {
		msgs, _ := rdb.XRange(ctx, shard, "-", "+").Result()
		for _, m := range msgs {
			cmd := &walletv1.WalletCommand{}
			if s, _ := m.Values[streams.FieldData].(string); proto.Unmarshal([]byte(s), cmd) == nil && cmd.GetSettleGame() != nil {
				t.Fatalf("the standings were forwarded to %s", shard)
			}
		}
	}
	entries, _, err := walletclient.Ledger(ctx, rdb, "beso", "", 10)
	if err != nil || len(entries) != 4 || entries[2].GetKind() != walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_STAKE_SETTLED ||
		entries[3].GetKind() != walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT ||
		entries[3].GetCounterparty() != walletclient.PotAccount("j1") || entries[3].GetAvailableDelta() != 200 {
		t.Fatalf("beso's ledger %v, %v", entries, err)
	}
	// The periodic audit ran and its figures are exported.
	waitFor(t, func() bool {
		_, body := get("/metrics")
		return auditOK.MatchString(body) && issued.MatchString(body)
	})
	_, body := get("/metrics")
	for _, name := range []string{"pulka_wallet_commands_total", "pulka_wallet_settle_duration_seconds", "pulka_streams_consumed_total"} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wallet did not stop")
	}
}

// The order key is the message's subject: one account's commands in order,
// one table's (its release and its standings) in order, and different
// subjects in parallel even on one shard.
func TestOrderKey_OneAccountOrOneTableInOrder(t *testing.T) {
	enc := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	standings := enc(&scoringv1.FinalStandings{TableId: "j1", GameId: "g1"})
	hold := func(account string) []byte {
		return enc(&walletv1.WalletCommand{CommandId: "h", Command: &walletv1.WalletCommand_HoldStake{
			HoldStake: &walletv1.HoldStake{AccountId: account, TableId: "j1", Amount: 10}}})
	}
	release := enc(&walletv1.WalletCommand{CommandId: "r", Command: &walletv1.WalletCommand_ReleaseTable{
		ReleaseTable: &walletv1.ReleaseTable{TableId: "j1"}}})
	shard := walletclient.CommandStream(7)
	for _, tc := range []struct {
		name string
		m    streams.Message
		want string
	}{
		{"standings: their table", streams.Message{Stream: scoringclient.StandingsStream, Data: standings}, "t:j1"},
		{"a table's release: its table, as its standings", streams.Message{Stream: shard, Data: release}, "t:j1"},
		{"a hold: its account", streams.Message{Stream: shard, Data: hold("ana")}, "a:ana"},
		{"another account on the same shard: its own key", streams.Message{Stream: shard, Data: hold("bob")}, "a:bob"},
		{"unreadable standings: their stream", streams.Message{Stream: scoringclient.StandingsStream, Data: []byte{0xff}}, scoringclient.StandingsStream},
		{"an unreadable command: its shard", streams.Message{Stream: shard, Data: []byte{0xff}}, shard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OrderKey(tc.m); got != tc.want {
				t.Fatalf("OrderKey = %q, want %q", got, tc.want)
			}
		})
	}
}

var (
	auditOK = regexp.MustCompile(`(?m)^pulka_wallet_audit_ok(\{[^}]*\})? 1$`)
	issued  = regexp.MustCompile(`(?m)^pulka_wallet_coins_issued(\{[^}]*\})? 2000$`)
)

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A pot that stays open past StalePotAge is reported: its holds are no
// game in progress.
func TestAudit_ReportsAStalePot(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := &clock{t: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	w := New(rdb, Options{SignupGrant: 100, Location: time.UTC, Now: c.Now, StalePotAge: time.Hour}, nil)
	ctx := context.Background()
	for _, cmd := range []*walletv1.WalletCommand{
		{CommandId: "o", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: "ana"}}},
		{CommandId: "h", Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: "ana", TableId: "old", Amount: 10, Game: lobbyv1.Game_GAME_CLASSIC}}},
	} {
		if res, err := w.Apply(ctx, cmd); err != nil || !res.GetAccepted() {
			t.Fatalf("%v %v", res, err)
		}
	}
	if rep, err := w.Audit(ctx); err != nil || !rep.GetOk() || rep.GetOpenHolds() != 1 {
		t.Fatalf("fresh pot: %v %v", rep, err)
	}
	c.Add(2 * time.Hour)
	rep, err := w.Audit(ctx)
	if err != nil || rep.GetOk() || rep.GetStalePots() != 1 || !strings.Contains(strings.Join(rep.GetProblems(), "\n"), "old") {
		t.Fatalf("stale pot: %v %v", rep, err)
	}
}
