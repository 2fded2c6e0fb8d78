package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// The operations side of issue 17's abuse suite: a seated player spamming
// refused commands, and a Redis that loses everything under a live game.
// Each loop is bounded in count and time and stops by itself.

// opsRefusals returns the refusals (event frames without an id) the client
// got for table.
func opsRefusals(c *client, table string) []*frame {
	var out []*frame
	for _, f := range c.snapshot() {
		if f.ev != nil && f.Table == table && f.ID == "" && f.ev.GetMoveRejected() != nil {
			out = append(out, f)
		}
	}
	return out
}

// idleJapaneseTable seats two guests at a new Japanese table (its id in
// *table) with a minute to move, and returns them once the first hand's
// declarer is to move, with the declarer's seat: nothing moves until the
// declarer does, so the other seat is never to move meanwhile.
func idleJapaneseTable(t *testing.T, s *stack, name string, table *string) ([]*client, int) {
	t.Helper()
	players := seatPlayers(t, s, tableSpec{japanese: true, moveTime: time.Minute, name: name}, []session{s.guest(t), s.guest(t)}, table)
	hs := players[0].awaitEvent(0, 15*time.Second, *table, "the first hand", func(ev *tablev1.Event) bool { return ev.GetHandStarted() != nil })
	declarer := int(hs.ev.GetHandStarted().GetDealerSeat())
	players[declarer].awaitEvent(0, 10*time.Second, *table, "the declarer's timer", func(ev *tablev1.Event) bool { return wire.TimerOf(ev) != nil })
	return players, declarer
}

// TestAbuse_SeatedPlayerRefusalSpamLeavesTheLogAlone: a seated player sends
// 2,000 illegal plays (out of turn) at 150 a second, under the gateway's
// rate limit. Each is answered to them alone, none is logged: the table's
// event stream has exactly the length it had before, and its command
// stream is trimmed as the table handles it. Meanwhile an honest player at
// another table plays on with normal latency (abuse_test.go), and no
// service panics, exits or restarts.
func TestAbuse_SeatedPlayerRefusalSpamLeavesTheLogAlone(t *testing.T) {
	s := shared
	ctx := context.Background()
	procs := s.processes()
	var spamTable, honestTable string
	s.dumpOnFailure(t, &spamTable, &honestTable)
	spam, declarer := idleJapaneseTable(t, s, "e2e refusal spam", &spamTable)
	spammer := spam[1-declarer] // never their turn: the declarer does not move
	honest := s.startHonestGame(t)
	honestTable = honest.table
	honest.c.awaitEvent(0, 15*time.Second, honestTable, "the honest table's first hand", func(ev *tablev1.Event) bool { return ev.GetHandStarted() != nil })
	before := time.Now()
	time.Sleep(3 * time.Second) // the honest player's baseline
	attack := time.Now()

	evLen := s.Redis().XLen(ctx, streams.TableEvents(spamTable)).Val()
	counted := func() (rejected, unheard, sent float64) {
		for _, svc := range s.Processes() {
			switch svc.Binary {
			case "table-runner":
				rejected += opsMetricSum(t, svc, "pulka_runner_rejections_total")
				unheard += opsMetricSum(t, svc, "pulka_runner_rejections_unheard_total")
			case "gateway":
				sent += opsMetricSum(t, svc, "pulka_gateway_refusals_sent_total")
			}
		}
		return rejected, unheard, sent
	}
	rejectedBefore, unheardBefore, sentBefore := counted()
	refusalsBefore := 0
	for _, c := range append(slices.Clone(spam), honest.c) {
		refusalsBefore += len(opsRefusals(c, spamTable)) + len(opsRefusals(c, honestTable))
	}
	const n = 2000
	spamFrom, start := spammer.len(), time.Now()
	for i := range n {
		spammer.send(map[string]any{"type": "play", "table": spamTable, "card": "AS", "cmd": fmt.Sprintf("spam-%d", i)})
		time.Sleep(time.Second/150 - 200*time.Microsecond)
	}
	eventually(t, 30*time.Second, "every refusal answered", func() bool { return len(opsRefusals(spammer, spamTable)) >= n })
	attackEnd := time.Now()
	t.Logf("%d refusals in %v", n, time.Since(start).Round(time.Millisecond))

	for _, f := range spammer.snapshot()[spamFrom:] {
		if f.Type == "error" {
			t.Fatalf("the gateway refused a spam frame (the test must stay under the rate limit): %s", f)
		}
	}
	caused := map[string]bool{}
	for _, f := range opsRefusals(spammer, spamTable) {
		if f.ev.GetSeq() != 0 || f.ev.GetVisibility().GetPlayerId() != spammer.ses.Player.ID {
			t.Fatalf("refusal %s is not the spammer's alone, outside the history", f)
		}
		caused[f.ev.GetCausedBy()] = true
	}
	if len(caused) != n {
		t.Errorf("%d distinct commands answered, want %d", len(caused), n)
	}
	if other := opsRefusals(spam[declarer], spamTable); len(other) != 0 {
		t.Errorf("the other player got %d of the spammer's refusals", len(other))
	}
	if got := s.Redis().XLen(ctx, streams.TableEvents(spamTable)).Val(); got != evLen {
		t.Errorf("the event stream went from %d to %d entries under %d refused commands", evLen, got, n)
	}
	if got := s.Redis().XLen(ctx, streams.TableCommands(spamTable)).Val(); got > 64 {
		t.Errorf("the command stream holds %d entries after %d handled refusals, want at most 64", got, n)
	}
	// The metrics count what happened: every refusal the runners made is
	// one the gateways sent and one a client got (the spammer's, and any
	// honest move a timer overtook), none unheard.
	refusalsGot := -refusalsBefore
	for _, c := range append(slices.Clone(spam), honest.c) {
		refusalsGot += len(opsRefusals(c, spamTable)) + len(opsRefusals(c, honestTable))
	}
	var rejected, unheard, sent float64
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, u, sn := counted()
		rejected, unheard, sent = r-rejectedBefore, u-unheardBefore, sn-sentBefore
		if (rejected == float64(refusalsGot) && sent == float64(refusalsGot)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rejected != float64(refusalsGot) || sent != float64(refusalsGot) || unheard != 0 {
		t.Errorf("metrics: pulka_runner_rejections_total +%v, pulka_gateway_refusals_sent_total +%v, pulka_runner_rejections_unheard_total +%v; "+
			"the clients got %d refusals (the spammer %d)", rejected, sent, unheard, refusalsGot, n)
	}
	honest.checkHonest(t, before, attack, attackEnd)
	s.noPanics(t, procs)
}

// TestAbuse_SeatedPlayerReconnectLoopLeavesTheLogBounded: a seated player
// drops and reconnects in a loop for 3 s (a hundred times or more).
// Each absence the table applied would be two durable events (PlayerAway,
// PlayerBack) that every watcher and every later join reads: the gateway
// reports only the first few (ws.DefaultAwayBurst), holds the next until
// its token and drops it when the player is back first, so the table's
// event stream grows by at most two events an absence reported, its
// command stream is trimmed as the table handles it, the held aways are
// counted, the honest player plays on with normal latency, and no service
// panics, exits or restarts.
func TestAbuse_SeatedPlayerReconnectLoopLeavesTheLogBounded(t *testing.T) {
	s := shared
	ctx := context.Background()
	procs := s.processes()
	var loopTable, honestTable string
	s.dumpOnFailure(t, &loopTable, &honestTable)
	players, declarer := idleJapaneseTable(t, s, "e2e reconnect loop", &loopTable)
	looper := players[1-declarer] // never their turn: nothing moves meanwhile
	honest := s.startHonestGame(t)
	honestTable = honest.table
	honest.c.awaitEvent(0, 15*time.Second, honestTable, "the honest table's first hand", func(ev *tablev1.Event) bool { return ev.GetHandStarted() != nil })
	before := time.Now()
	time.Sleep(3 * time.Second) // the honest player's baseline
	attack := time.Now()

	limited := func() (n float64) {
		for _, svc := range s.Processes() {
			if svc.Binary == "gateway" {
				n += opsMetricSum(t, svc, "pulka_gateway_presence_limited_total")
			}
		}
		return n
	}
	limitedBefore := limited()
	evLen := s.Redis().XLen(ctx, streams.TableEvents(loopTable)).Val()
	// As fast as the platform answers, with a breath between rounds, for
	// at least as long as the honest player needs to show their latency.
	n := 0
	for n < 60 || time.Since(attack) < 3*time.Second {
		looper.disconnect()
		looper.connect()
		looper.join(loopTable, looper.lastEventID(loopTable))
		n++
		time.Sleep(10 * time.Millisecond)
	}
	attackEnd := time.Now()
	// Every absence reported at once is two events (away, then back); the
	// table may also have started its hand's timer again. Far below the
	// two events an absence of a report per absence.
	const bound = 2*6 + 4
	grew := s.Redis().XLen(ctx, streams.TableEvents(loopTable)).Val() - evLen
	if grew > bound {
		t.Errorf("the event stream grew by %d entries under %d reconnects, want at most %d", grew, n, bound)
	}
	aways := 0
	for _, f := range players[declarer].snapshot() {
		if f.ev != nil && f.Table == loopTable && f.ev.GetPlayerAway() != nil && !f.At.Before(attack) {
			aways++
		}
	}
	if aways == 0 || aways > 6 {
		t.Errorf("the other player saw %d PlayerAway during the loop, want 1..6", aways)
	}
	if got := s.Redis().XLen(ctx, streams.TableCommands(loopTable)).Val(); got > 64 {
		t.Errorf("the command stream holds %d entries after the loop, want at most 64", got)
	}
	if got := limited() - limitedBefore; got < float64(n-6-1) {
		t.Errorf("pulka_gateway_presence_limited_total rose by %v, want an away held (then cancelled) for most of %d absences", got, n)
	}
	t.Logf("%d reconnects in %v: %d events, %d PlayerAway seen", n, attackEnd.Sub(attack).Round(time.Millisecond), grew, aways)
	honest.checkHonest(t, before, attack, attackEnd)
	s.noPanics(t, procs)
}

// TestAbuse_RedisLosingEverythingSendsPlayersBackToTheLobby: a game in
// progress, then Redis restarts without its data (no persistence, as
// make run's). Within seconds each player's client gets an error
// table_gone naming the table and an unjoined — not silence; the runner
// drops the table with a clear log line, and counts it; then a new table is
// created and played to its end on the same stack, scored and kept in the
// players' histories, and no service panics or exits.
func TestAbuse_RedisLosingEverythingSendsPlayersBackToTheLobby(t *testing.T) {
	s := startStack(t, "lostredis", 1)
	var lostTable, newTable string
	s.dumpOnFailure(t, &lostTable, &newTable)
	players := seatPlayers(t, s, tableSpec{japanese: true, moveTime: time.Minute, name: "e2e lost"}, []session{s.guest(t), s.guest(t)}, &lostTable)
	for _, c := range players {
		c.awaitEvent(0, 15*time.Second, lostTable, "the first hand", func(ev *tablev1.Event) bool { return ev.GetHandStarted() != nil })
	}
	from := make([]int, len(players))
	for i, c := range players {
		from[i] = c.len()
	}
	lost := time.Now()
	if err := s.RedisServer().Restart(); err != nil { // SIGKILL, then a fresh, empty server on the same port
		t.Fatal(err)
	}
	for i, c := range players {
		gone := c.await(from[i], 15*time.Second, "table_gone", func(f *frame) bool {
			return f.Type == "error" && f.Code == "table_gone" && f.Table == lostTable
		})
		c.await(gone.N, 5*time.Second, "unjoined", func(f *frame) bool { return f.Type == "unjoined" && f.Table == lostTable })
		t.Logf("%s: table_gone %v after Redis lost its data", c.name, gone.At.Sub(lost).Round(time.Millisecond))
	}
	// Joining it again is refused, not an empty table to wait at for ever
	// (the gateway may already know from the lobby that it does not exist).
	players[0].send(map[string]any{"type": "join", "table": lostTable, "ref": "rejoin-lost"})
	if f := players[0].errorFrame(0, "rejoin-lost"); f.Code != "table_gone" && f.Code != "table_not_found" {
		t.Errorf("a join of the lost table: %s, want table_gone (or table_not_found)", f)
	}
	runner := s.Of("table-runner")[0]
	eventually(t, 15*time.Second, "the runner's log line about the lost table", func() bool {
		b, _ := os.ReadFile(runner.LogPath())
		return strings.Contains(string(b), "data is gone from Redis") && strings.Contains(string(b), lostTable)
	})
	// One table lost, counted once (at the lease's renewal; no reopening
	// loop counts it again at open).
	if n := opsMetricSum(t, runner, "pulka_runner_tables_lost_total"); n != 1 {
		t.Errorf("pulka_runner_tables_lost_total = %v, want 1:\n%s", n, opsMetricLines(t, runner, "pulka_runner_tables_lost"))
	}

	// The platform goes on: new sessions, a new table, a whole match.
	var fresh []*client
	eventually(t, 30*time.Second, "the lobby taking tables again", func() bool {
		host := s.guest(t)
		status, _ := s.call(t, http.MethodGet, "/api/v1/tables", host.Token, nil)
		return status == http.StatusOK
	})
	fresh = seatPlayers(t, s, tableSpec{japanese: true, target: 11, name: "e2e after the loss"}, []session{s.guest(t), s.guest(t)}, &newTable)
	playToEnd(t, fresh, newTable, 3*time.Minute)
	// Scoring too: the sheet, the standings and the players' histories of
	// the new game are right (the pure replay of its log).
	verifyGame(t, s, newTable, fresh)
	s.noPanics(t)
}

// opsMetricSum sums the samples of metric name (any labels) in svc's
// /metrics; 0 when it has none.
func opsMetricSum(t *testing.T, svc *stacktest.Process, name string) float64 {
	t.Helper()
	return opsMetricSumWhere(t, svc, name, "")
}

// opsMetricSumWhere is opsMetricSum of the samples whose line contains
// label (`limit="guess_table"`, say).
func opsMetricSumWhere(t *testing.T, svc *stacktest.Process, name, label string) float64 {
	t.Helper()
	sum := 0.0
	for _, line := range strings.Split(opsMetrics(t, svc), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') || !strings.Contains(rest, label) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("%s: metric line %q: %v", svc.Name, line, err)
		}
		sum += v
	}
	return sum
}

// opsMetricLines returns svc's /metrics lines that start with prefix.
func opsMetricLines(t *testing.T, svc *stacktest.Process, prefix string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(opsMetrics(t, svc), "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// opsMetrics reads a service's /metrics.
func opsMetrics(t *testing.T, svc *stacktest.Process) string {
	t.Helper()
	resp, err := http.Get("http://" + svc.Admin + "/metrics")
	if err != nil {
		t.Fatalf("%s /metrics: %v", svc.Name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
