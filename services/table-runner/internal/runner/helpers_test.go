package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

func startRedis(t *testing.T) (*redistest.Server, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t)
	return srv, srv.Client(t)
}

// testOptions are fast options for in-process runners.
func testOptions(id string) Options {
	return Options{
		ID: id, BotDelay: time.Millisecond, MoveTimeout: time.Minute, ReconnectGrace: time.Minute, SeedTimeout: 100 * time.Millisecond,
		HeartbeatTTL: 600 * time.Millisecond, LeaseTTL: 3 * time.Second, PollInterval: 30 * time.Millisecond,
		LeaderTTL: 600 * time.Millisecond, ReconcileEvery: 50 * time.Millisecond,
	}
}

type testRunner struct {
	*Runner
	cancel context.CancelFunc
	done   chan struct{}
}

// startRunner runs a runner until the test ends (or stop).
func startRunner(t *testing.T, rdb redis.UniversalClient, opt Options) *testRunner {
	t.Helper()
	r, err := New(rdb, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr := &testRunner{Runner: r, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(tr.done); _ = r.Run(ctx) }()
	t.Cleanup(tr.stop)
	return tr
}

func (tr *testRunner) stop() {
	tr.cancel()
	<-tr.done
}

func seatsOf(players []string, bots int) []*lobbyv1.Seat {
	out := make([]*lobbyv1.Seat, 0, len(players)+bots)
	for i, p := range players {
		out = append(out, &lobbyv1.Seat{Index: uint32(i), PlayerId: p, DisplayName: "Player " + p})
	}
	for range bots {
		out = append(out, &lobbyv1.Seat{Index: uint32(len(out)), DisplayName: "Bot", Bot: true})
	}
	return out
}

// classicStart is a classic table with the given human players and bots in
// the other seats.
func classicStart(id string, seed uint64, players ...string) *lobbyv1.TableStarted {
	return &lobbyv1.TableStarted{TableId: id, GameId: fmt.Sprintf("%016x", seed), Seats: seatsOf(players, 4-len(players)),
		Settings: &lobbyv1.TableSettings{
			Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
			Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200, Premia: true, Moshla: true, RestDocked: true,
		}}
}

func japaneseStart(id string, seed uint64, target uint32, players ...string) *lobbyv1.TableStarted {
	return &lobbyv1.TableStarted{TableId: id, GameId: fmt.Sprintf("%016x", seed), Seats: seatsOf(players, 0),
		Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE, JapaneseTarget: target}}
}

// withMoveTime sets the table's own move timeout.
func withMoveTime(ts *lobbyv1.TableStarted, d time.Duration) *lobbyv1.TableStarted {
	ts.Settings.MoveTime = durationpb.New(d)
	return ts
}

// publishStart puts a TableStarted on the start stream, as the lobby does.
func publishStart(t *testing.T, rdb redis.UniversalClient, ts *lobbyv1.TableStarted) {
	t.Helper()
	data, err := proto.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	err = rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: lobbyclient.TableStartStream,
		Values: []any{streams.FieldData, data}}).Err()
	if err != nil {
		t.Fatal(err)
	}
}

// place gives a table to runner directly, as the assigner would.
func place(t *testing.T, rdb redis.UniversalClient, ts *lobbyv1.TableStarted, runner string) {
	t.Helper()
	ctx := context.Background()
	data, err := proto.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, assign.StartKey(ts.GetTableId()), data, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := assign.NewStore(rdb).Add(ctx, streams.Lease{}, ts.GetTableId(), runner); err != nil {
		t.Fatal(err)
	}
}

var cmdNo atomic.Int64

// send appends a command to the table's command stream as the gateway does
// (a streams.Publisher, which rings the stream's bell) and returns its id.
func send(t *testing.T, rdb redis.UniversalClient, tableID, player string, c *tablev1.Command) string {
	t.Helper()
	return sendWith(t, context.Background(), streams.NewPublisher(rdb), tableID, player, c)
}

// sendWith is send through pub, in ctx (whose span the entry carries).
func sendWith(t *testing.T, ctx context.Context, pub *streams.Publisher, tableID, player string, c *tablev1.Command) string {
	t.Helper()
	if c.CommandId == "" {
		c.CommandId = "cmd-" + strconv.FormatInt(cmdNo.Add(1), 10)
	}
	c.TableId, c.PlayerId = tableID, player
	data, err := proto.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pub.Publish(ctx, streams.Entry{Stream: streams.TableCommands(tableID), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return c.CommandId
}

func playCmd(c cards.Card) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: commonv1.Card(c + 1)}}}
}

func bidCmd(n int) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: uint32(n)}}}
}

// loggedEvent is one event of a table's event stream and its entry's id (a
// packed LegalMoves event has its host's, wire.FieldLegal).
type loggedEvent struct {
	id string
	ev *tablev1.Event
}

// eventsAfter reads (and decodes) the event stream after `after`.
func eventsAfter(t *testing.T, rdb redis.UniversalClient, tableID, after string) []loggedEvent {
	t.Helper()
	xs, err := rdb.XRange(context.Background(), streams.TableEvents(tableID), "("+after, "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []loggedEvent
	for _, x := range xs {
		var data string
		header := map[string]string{}
		for k, v := range x.Values {
			s, _ := v.(string)
			if k == streams.FieldData {
				data = s
			} else {
				header[k] = s
			}
		}
		ev, packed, err := wire.DecodeEventEntry([]byte(data), header)
		if err != nil {
			t.Fatalf("event %s: %v", x.ID, err)
		}
		out = append(out, loggedEvent{x.ID, ev})
		if packed != nil {
			out = append(out, loggedEvent{x.ID, packed})
		}
	}
	return out
}

func allEvents(t *testing.T, rdb redis.UniversalClient, tableID string) []loggedEvent {
	return eventsAfter(t, rdb, tableID, "0")
}

func kindOf(e *tablev1.Event) string {
	f := e.ProtoReflect().WhichOneof(e.ProtoReflect().Descriptor().Oneofs().ByName("event"))
	if f == nil {
		return "none"
	}
	return string(f.Name())
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitEvent waits for an event of the table matching pred, after `after`,
// and returns it.
func waitEvent(t *testing.T, rdb redis.UniversalClient, tableID, after string, timeout time.Duration, what string, pred func(*tablev1.Event) bool) loggedEvent {
	t.Helper()
	var got loggedEvent
	waitFor(t, timeout, what, func() bool {
		for _, e := range eventsAfter(t, rdb, tableID, after) {
			if pred(e.ev) {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

func isKind(kind string) func(*tablev1.Event) bool {
	return func(e *tablev1.Event) bool { return kindOf(e) == kind }
}

// hasTimer matches an event that starts a move timer: a timer_started of
// its own, or the timer riding on the step's last public event.
func hasTimer(e *tablev1.Event) bool { return wire.TimerOf(e) != nil }

// checkLog proves the invariants of a table's log: the whole log replays
// purely (byte for byte); the genesis is what table.New makes from the
// start; seqs run 1..n without gap or repeat; epochs never go back; every
// command id is applied at most once. It returns the replayed table and
// the steps.
func checkLog(t *testing.T, rdb redis.UniversalClient, ts *lobbyv1.TableStarted, opt Options) (*table.Table, []tablelog.Step) {
	t.Helper()
	steps, err := tablelog.Read(context.Background(), rdb, ts.GetTableId())
	if err != nil {
		t.Fatal(err)
	}
	final, err := tablelog.Verify(steps)
	if err != nil {
		t.Fatalf("pure replay of the log: %v", err)
	}
	// The genesis is table.New on the start, at the time GameStarted says.
	o, _ := opt.withDefaults()
	set, err := tablesettings.FromProto(ts.GetSettings())
	if err != nil {
		t.Fatal(err)
	}
	if ts.GetSettings().GetMoveTime() == nil {
		set.MoveTimeout = o.MoveTimeout
	}
	if ts.GetSettings().GetReconnectGrace() == nil {
		set.ReconnectGrace = o.ReconnectGrace
	}
	set.BotDelay = o.BotDelay
	set.SeedTimeout = o.SeedTimeout
	seats := make([]table.SeatInfo, len(ts.GetSeats()))
	for i, s := range ts.GetSeats() {
		seats[i] = table.SeatInfo{PlayerID: s.GetPlayerId(), Name: s.GetDisplayName(), Bot: s.GetBot()}
	}
	at := steps[0].Events[0].GetOccurredAt().AsTime()
	// The genesis is table.New of the start but for hand 0's secret: its
	// server seed derives from the entropy New drew (HMAC, docs/fair-play.md)
	// and nothing gives that entropy back. So a table made by table.New with
	// other entropy must equal it in everything else: ids, settings, seq,
	// deadline and every seat's view without the cards and the commitment.
	genesis, err := table.Restore(steps[0].Genesis)
	if err != nil {
		t.Fatal(err)
	}
	first, ok := genesis.CurrentSeeds()
	if !ok || first.Hand.Index != 0 || first.Hand.GameID != ts.GetGameId() || first.Hand.TableID != ts.GetTableId() {
		t.Fatalf("the genesis has no seeding of hand 0 of game %q: %+v", ts.GetGameId(), first.Hand)
	}
	fresh, _, err := table.New(ts.GetTableId(), ts.GetGameId(), set, seats, at, table.Entropy{1})
	if err != nil {
		t.Fatal(err)
	}
	if !sameButSecrets(genesis, fresh) {
		t.Fatal("the logged genesis is not table.New of the start")
	}
	var seq, epoch uint64
	applied := map[string]int{}
	for _, s := range steps {
		for _, ev := range s.Events {
			if ev.GetSeq() != seq+1 {
				t.Fatalf("seq %d follows %d", ev.GetSeq(), seq)
			}
			seq = ev.GetSeq()
			if ev.GetEpoch() < epoch {
				t.Fatalf("event %d has epoch %d after epoch %d", seq, ev.GetEpoch(), epoch)
			}
			epoch = ev.GetEpoch()
		}
		if s.Input != nil && s.Input.Kind == table.InputCommand {
			applied[s.Input.Command.GetCommandId()]++
		}
	}
	for id, n := range applied {
		if n != 1 {
			t.Fatalf("command %s is in the log %d times", id, n)
		}
	}
	return final, steps
}

// scoringInputs reads the scoring input stream for one game, keyed by
// kind and hand (a republished input must be identical to the first).
func scoringInputs(t *testing.T, rdb redis.UniversalClient, gameID string) map[string]*scoringv1.ScoringInput {
	t.Helper()
	xs, err := rdb.XRange(context.Background(), scoringclient.HandsStream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*scoringv1.ScoringInput{}
	for _, x := range xs {
		s, _ := x.Values[streams.FieldData].(string)
		in := &scoringv1.ScoringInput{}
		if err := proto.Unmarshal([]byte(s), in); err != nil {
			t.Fatal(err)
		}
		if in.GetGameId() != gameID {
			continue
		}
		k := scoringKey(in)
		in.Trace = nil
		if prev, ok := out[k]; ok && !proto.Equal(prev, in) {
			t.Fatalf("scoring input %s published twice with different contents", k)
		}
		out[k] = in
	}
	return out
}

func scoringKey(in *scoringv1.ScoringInput) string {
	switch x := in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		return "start"
	case *scoringv1.ScoringInput_HandResult:
		return fmt.Sprint("hand", x.HandResult.GetHandIndex())
	case *scoringv1.ScoringInput_GameEnded:
		return "end"
	}
	return "?"
}

// pureScoring is what scoring must have heard about a game: the scoring
// inputs of every event of its pure replay.
func pureScoring(final *table.Table, steps []tablelog.Step) map[string]*scoringv1.ScoringInput {
	out := map[string]*scoringv1.ScoringInput{}
	for _, s := range steps {
		for _, in := range final.ScoringInputs(s.Events) {
			out[scoringKey(in)] = in
		}
	}
	return out
}

// jDriver plays the human seats of a Japanese match by sending commands,
// following the match on a shadow pkg/japanese game fed by the public
// events.
type jDriver struct {
	t       *testing.T
	rdb     redis.UniversalClient
	table   string
	players [2]string
	g       *japanese.Game
	after   string
	waiting bool      // a command was sent and its move has not shown up yet
	sent    []string  // command ids, in order
	moves   int       // moves seen
	lastAt  time.Time // when the last move was seen
	onMove  func(n int)
}

func newJDriver(t *testing.T, rdb redis.UniversalClient, ts *lobbyv1.TableStarted) *jDriver {
	g, err := japanese.NewLive(japanese.Settings{Target: int(ts.GetSettings().GetJapaneseTarget())})
	if err != nil {
		t.Fatal(err)
	}
	return &jDriver{t: t, rdb: rdb, table: ts.GetTableId(), g: g, after: "0",
		players: [2]string{ts.GetSeats()[0].GetPlayerId(), ts.GetSeats()[1].GetPlayerId()}}
}

// follow applies one public move event to the shadow game, and deals it
// each hand from the key the table's log holds (the driver is privileged:
// the players' clients could not know it before the hand's reveal).
func (d *jDriver) follow(ev *tablev1.Event) error {
	var m japanese.Move
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_HandStarted:
		k := dealKey(d.t, d.rdb, d.table, e.HandStarted.GetHandIndex())
		_, err := d.g.Deal(k, nil)
		return err
	case *tablev1.Event_TrumpChosen:
		m = japanese.TrumpMove(int(e.TrumpChosen.GetSeat()), cards.Suit(e.TrumpChosen.GetTrump()-1))
	case *tablev1.Event_CardPlayed:
		c := cards.Card(e.CardPlayed.GetCard() - 1)
		seat := int(e.CardPlayed.GetSeat())
		m = japanese.PlayMove(seat, c)
		if d := e.CardPlayed.GetDeclaration(); c.IsJoker() && d.GetAction() == tablev1.JokerAction_JOKER_ACTION_HIGHEST {
			m = japanese.LeadJoker(seat, c, cards.Suit(d.GetSuit()-1))
		}
	default:
		return nil
	}
	if _, err := d.g.Apply(m, nil); err != nil {
		return fmt.Errorf("shadow game refuses %v: %w", m, err)
	}
	d.moves++
	d.lastAt = time.Now()
	d.waiting = false
	if d.onMove != nil {
		d.onMove(d.moves)
	}
	return nil
}

func commandOf(m japanese.Move) *tablev1.Command {
	if m.Kind == japanese.KindTrump {
		return &tablev1.Command{Command: &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit(m.Suit + 1)}}}
	}
	pc := &tablev1.PlayCardCommand{Card: commonv1.Card(m.Card + 1)}
	if m.Card.IsJoker() && m.Suit != cards.NoSuit {
		pc.Declaration = &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: commonv1.Suit(m.Suit + 1)}
	}
	return &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: pc}}
}

// play drives the match to its end (or fails the test after timeout).
func (d *jDriver) play(timeout time.Duration) {
	d.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !d.waiting && !d.g.Over() && !d.g.AwaitingDeal() {
			seat := d.g.ToMove()
			m, ok := japanese.Bot{}.Choose(d.g, seat)
			if !ok {
				d.t.Fatalf("no move for seat %d", seat)
			}
			d.sent = append(d.sent, send(d.t, d.rdb, d.table, d.players[seat], commandOf(m)))
			d.waiting = true
		}
		res, err := d.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{streams.TableEvents(d.table), d.after}, Block: 100 * time.Millisecond}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			d.t.Fatal(err)
		}
		for _, x := range res[0].Messages {
			d.after = x.ID
			s, _ := x.Values[streams.FieldData].(string)
			ev := &tablev1.Event{}
			if err := proto.Unmarshal([]byte(s), ev); err != nil {
				d.t.Fatal(err)
			}
			if err := d.follow(ev); err != nil {
				d.t.Fatal(err)
			}
			if _, ok := ev.GetEvent().(*tablev1.Event_GameEnded); ok {
				return
			}
		}
	}
	d.t.Fatalf("the match did not end within %v (%d moves)", timeout, d.moves)
}

// dealKey is the shuffle key of hand h of a table, read from its log as only
// the server could: from the hand's HandRevealed when it has one, else from
// the seeds of the table the log replays to (the hand being played).
func dealKey(t *testing.T, rdb redis.UniversalClient, tableID string, h uint32) fairdeal.Key {
	t.Helper()
	steps, err := tablelog.Read(context.Background(), rdb, tableID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		for _, ev := range s.Events {
			if r := ev.GetHandRevealed(); r != nil && r.GetHandIndex() == h {
				cs := make([]fairdeal.ClientSeed, len(r.GetClientSeeds()))
				for i, c := range r.GetClientSeeds() {
					cs[i] = fairdeal.ClientSeed(c)
				}
				k, err := fairdeal.ShuffleKey(fairdeal.Hand{TableID: tableID, GameID: ev.GetGameId(), Index: h},
					fairdeal.ServerSeed(r.GetServerSeed()), cs)
				if err != nil {
					t.Fatal(err)
				}
				return k
			}
		}
	}
	final, err := tablelog.Verify(steps)
	if err != nil {
		t.Fatal(err)
	}
	sd, ok := final.CurrentSeeds()
	if !ok || sd.Hand.Index != h || !sd.Dealt {
		t.Fatalf("hand %d is neither revealed nor the table's dealt hand (%+v)", h, sd.Hand)
	}
	k, err := sd.Key()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// byServer reports whether e is a move the server made for a seat (its
// timer ran out).
func byServer(e *tablev1.Event) bool {
	return e.GetTrumpChosen().GetByServer() || e.GetCardPlayed().GetByServer() || e.GetBidMade().GetByServer()
}

// moveSeat is the seat of a move event (false for other events).
func moveSeat(e *tablev1.Event) (uint32, bool) {
	switch {
	case e.GetTrumpChosen() != nil:
		return e.GetTrumpChosen().GetSeat(), true
	case e.GetCardPlayed() != nil:
		return e.GetCardPlayed().GetSeat(), true
	case e.GetBidMade() != nil:
		return e.GetBidMade().GetSeat(), true
	}
	return 0, false
}

// sameButSecrets reports whether a and b are the same table but for their
// current hand's seeds and what follows from them (the cards, the
// commitment).
func sameButSecrets(a, b *table.Table) bool {
	if a.ID() != b.ID() || a.GameID() != b.GameID() || a.Seq() != b.Seq() || a.Settings() != b.Settings() ||
		a.LastEntryID() != b.LastEntryID() || a.Over() != b.Over() {
		return false
	}
	da, oka := a.NextDeadline()
	db, okb := b.NextDeadline()
	if oka != okb || !da.Equal(db) {
		return false
	}
	for seat := -1; seat < len(a.View(-1).GetSeats()); seat++ {
		va, vb := a.View(seat), b.View(seat)
		for _, v := range []*tablev1.TableView{va, vb} {
			// A hand dealt at once (no seat awaited) has its first dealer and
			// so its turn drawn from the key too.
			v.YourHand, v.TurnedCard, v.Trump, v.Committed, v.DealerSeat, v.TurnSeat = nil, 0, 0, nil, 0, 0
			v.NextCommitted = nil // a hand dealt at once commits the next one ahead
		}
		if !proto.Equal(va, vb) {
			return false
		}
	}
	return true
}
