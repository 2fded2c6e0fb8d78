package runner

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// item is one command stream entry handed to a table's goroutine.
type item struct {
	msg  streams.Message
	span trace.SpanContext // the reader's span, to continue the trace
}

// slot is the runner's handle on one table: the inbox the shared reader
// fills, and the reading state the reader and the table's goroutine share.
type slot struct {
	id     string
	cmd    string
	inbox  chan item
	cancel context.CancelCauseFunc

	mu          sync.Mutex
	catchup     bool   // the table reads its backlog itself; the reader drops its entries
	lastDropped string // the newest entry the reader dropped meanwhile
	inTailer    bool   // the shared reader follows the command stream
	closed      bool
	lease       streams.Lease
	hasLease    bool
}

func (s *slot) currentLease() (streams.Lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lease, s.hasLease
}

func (s *slot) setLease(l streams.Lease) {
	s.mu.Lock()
	s.lease, s.hasLease = l, true
	s.mu.Unlock()
}

func (s *slot) needCatchUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.catchup
}

// actor is the state of one table's goroutine.
type actor struct {
	r       *Runner
	s       *slot
	lease   streams.Lease
	t       *table.Table
	lastEv  string // last event entry appended (or restored)
	readPos string // last command stream entry handled
	// handled: the last command stream entry trimmed away and recorded
	// (tablelog.HandledKey); untrimmed counts the entries handled since.
	handled   string
	untrimmed int
	// dirty: the table's memory may be ahead of what is durable — a step
	// whose append, or whose publications, did not complete. Such a state
	// must not become a snapshot.
	dirty bool
	stop  <-chan struct{} // the table is being stopped
	// stake is the table's Domino Coin stake (0: a free table), from its
	// start (loadStake).
	stake int64
}

// runTable is the goroutine of one table: it takes the lease, restores (or
// creates) the table, then applies inputs and timer ticks until the game is
// over or the table is stopped.
//
// Stopping (ctx) is looked at only between steps: a step's Redis calls run
// to completion (bounded by the client's timeouts), because an append
// abandoned half-way would leave the table not knowing whether its log
// holds the step.
func (r *Runner) runTable(ctx context.Context, s *slot) (err error) {
	a := &actor{r: r, s: s, stop: ctx.Done()}
	io := context.WithoutCancel(ctx)
	if err := a.open(io); err != nil {
		return err
	}
	defer func() {
		if cause := context.Cause(ctx); errors.Is(cause, errShutdown) || errors.Is(cause, errMoved) {
			a.handOver(io)
		}
	}()
	if a.t.Over() {
		return a.finish(io)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if len(s.inbox) == 0 && s.needCatchUp() {
			if err := a.catchUp(io); err != nil {
				return err
			}
		}
		var fire <-chan time.Time
		if at, ok := a.t.NextDeadline(); ok {
			d := time.Until(at)
			if d <= 0 {
				seq := a.t.Seq()
				if err := a.step(io, table.Tick(time.Now())); err != nil {
					return err
				}
				if a.t.Over() {
					return a.finish(io)
				}
				if a.t.Seq() != seq {
					continue
				}
				// Nothing was due after all (the wall clock moved back):
				// look again shortly rather than spin.
				d = 10 * time.Millisecond
			}
			timer.Reset(d)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case it := <-s.inbox:
			err = a.handle(trace.ContextWithSpanContext(io, it.span), it.msg)
		case <-fire:
			err = a.step(io, table.Tick(time.Now()))
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		if err != nil {
			return err
		}
		if a.t.Over() {
			return a.finish(io)
		}
	}
}

// open takes the table's lease (a new epoch: whatever wrote before is
// fenced from now on) and restores the table from its snapshot and log, or
// creates its game from the start the assigner stored.
func (a *actor) open(ctx context.Context) error {
	r := a.r
	l, err := r.leases.Acquire(ctx, streams.TableLease(a.s.id), r.opt.ID)
	if err != nil {
		return fmt.Errorf("open %s: %w", a.s.id, err)
	}
	a.lease = l
	a.s.setLease(l)
	st, err := tablelog.Restore(ctx, r.rdb, a.s.id)
	source := "genesis"
	switch {
	case errors.Is(err, tablelog.ErrNotStarted):
		source = "created"
		err = a.create(ctx)
	case err == nil:
		if st.FromSnapshot {
			source = "snapshot"
		}
		a.t, a.lastEv = st.Table, st.EventID
		// The previous owner may have died between appending these
		// events and publishing what follows from them; publishing again
		// is harmless (scoring, the lobby and the wallet dedupe).
		if err = a.loadStake(ctx); err == nil {
			err = a.effects(ctx, st.Replayed)
		}
	}
	var handled string
	if err == nil {
		// Entries after the log's position that a previous owner refused
		// or ignored are trimmed and recorded: resume after them.
		handled, err = r.rdb.Get(ctx, tablelog.HandledKey(a.s.id)).Result()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	r.m.restores.Add(ctx, 1, metric.WithAttributes(attribute.String("source", source), attribute.String("outcome", outcome)))
	if err != nil {
		return fmt.Errorf("open %s: %w", a.s.id, err)
	}
	a.readPos = a.t.LastEntryID()
	if handled != "" && streams.CompareIDs(handled, a.readPos) > 0 {
		a.readPos = handled
	}
	a.handled = handled
	r.log.Info("runner: table open", "table", a.s.id, "epoch", l.Epoch, "source", source,
		"replayed_steps", st.Steps, "seq", a.t.Seq(), "after_command", a.readPos)
	return nil
}

// create starts the game from the assigner's TableStarted and logs its
// genesis.
func (a *actor) create(ctx context.Context) error {
	r := a.r
	raw, err := r.rdb.Get(ctx, assign.StartKey(a.s.id)).Bytes()
	if errors.Is(err, redis.Nil) {
		// Assigned, but neither a log nor a start: Redis lost the table
		// (restarted without persistence, flushed, restored from an older
		// backup). Nothing can bring it back; retrying would loop.
		return a.drop(ctx, "open", errors.New("the table has no start, snapshot or log in Redis"))
	}
	if err != nil {
		return fmt.Errorf("read start: %w", err)
	}
	ts := &lobbyv1.TableStarted{}
	if err := proto.Unmarshal(raw, ts); err != nil {
		return a.abandon(ctx, fmt.Errorf("decode start: %w", err))
	}
	set, err := tablesettings.FromProto(ts.GetSettings())
	if err != nil {
		return a.abandon(ctx, err)
	}
	if ts.GetSettings().GetMoveTime() == nil {
		set.MoveTimeout = r.opt.MoveTimeout
	}
	if ts.GetSettings().GetReconnectGrace() == nil {
		set.ReconnectGrace = r.opt.ReconnectGrace
	}
	set.BotDelay = r.opt.BotDelay
	set.SeedTimeout = r.opt.SeedTimeout
	a.stake = stakeOf(ts)
	seats := make([]table.SeatInfo, len(ts.GetSeats()))
	for i, s := range ts.GetSeats() {
		seats[i] = table.SeatInfo{PlayerID: s.GetPlayerId(), Name: s.GetDisplayName(), Bot: s.GetBot()}
	}
	t, evs, err := table.New(a.s.id, ts.GetGameId(), set, seats, time.Now(), newEntropy())
	if err != nil {
		return a.abandon(ctx, err)
	}
	genesis, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	entries, err := tablelog.Entries(a.s.id, a.lease.Epoch, nil, genesis, evs)
	if err != nil {
		return err
	}
	ids, err := r.fenced.AppendFenced(telemetry.ContextWithTrace(ctx, ts.GetTrace()), a.lease, entries...)
	if err != nil {
		return a.appendFailed(ctx, err)
	}
	a.t, a.lastEv = t, ids[len(ids)-1]
	a.countSeeds(ctx, evs)
	return a.effects(ctx, evs)
}

// abandon gives up a table whose start can never become a game (the lobby
// validates starts, so this is a bug somewhere): the lobby is told the table
// is over and the assignment forgets it, instead of retrying for ever.
func (a *actor) abandon(ctx context.Context, why error) error {
	a.r.log.Error("runner: the table's start is unplayable; abandoning it", "table", a.s.id, "err", why)
	if err := a.r.giveUp(ctx, a.s.id, a.lease); err != nil {
		return err
	}
	return fmt.Errorf("%w: %w", errAbandoned, why)
}

// drop gives up a table whose data Redis lost (see Runner.gone): like
// abandon, with its own log line and metric.
func (a *actor) drop(ctx context.Context, stage string, why error) error {
	a.r.lost(ctx, a.s.id, stage, why)
	if err := a.r.giveUp(ctx, a.s.id, a.lease); err != nil {
		return err
	}
	return fmt.Errorf("%w: %w", errGone, why)
}

// handle turns one command stream entry into an input and applies it.
// Entries at or before the read position were handled already (they come
// again around catch-up and reopening) and are skipped.
func (a *actor) handle(ctx context.Context, m streams.Message) error {
	if streams.CompareIDs(m.ID, a.readPos) <= 0 {
		return nil
	}
	if err := a.handleNew(ctx, m); err != nil {
		return err
	}
	return a.trimSome(ctx)
}

// handleNew handles an entry after the read position.
func (a *actor) handleNew(ctx context.Context, m streams.Message) error {
	a.readPos = m.ID
	now := time.Now()
	var in table.Input
	if player, away, isPresence, err := streams.ParsePresence(m); isPresence {
		if err != nil {
			a.r.m.malformed.Add(ctx, 1)
			a.r.log.Warn("runner: bad presence report", "table", a.s.id, "id", m.ID, "err", err)
			return nil
		}
		in = table.Back(player, now)
		if away {
			live, err := a.connected(ctx, player)
			if err != nil {
				return err // the table reopens and reads the report again
			}
			if live {
				a.r.m.staleAway.Add(ctx, 1)
				return nil
			}
			in = table.Away(player, now)
		}
		in.EntryID = m.ID
	} else {
		cmd := &tablev1.Command{}
		if err := proto.Unmarshal(m.Data, cmd); err != nil {
			a.r.m.malformed.Add(ctx, 1)
			a.r.log.Warn("runner: undecodable command", "table", a.s.id, "id", m.ID, "err", err)
			return nil
		}
		in = table.CommandInput(cmd, m.ID, now)
	}
	return a.step(ctx, in)
}

// connected reports whether player has a live connection to the table. An
// away report can be stale by the time it is read: the gateways report
// "away" and "back" independently, so a player who dropped on one gateway
// (or whose dead gateway was swept) and reconnected through another may have
// their "back" read first. Applied, that away would start a grace, and then
// give the seat to a bot or lose the match, while the player is connected.
//
// A failed read is tried again a few times before it stops the table (which
// then reopens from its log, as after a failed append): nothing is applied
// yet, and a Redis hiccup should not cost a restore.
func (a *actor) connected(ctx context.Context, player string) (bool, error) {
	var err error
	for wait := 20 * time.Millisecond; wait <= 320*time.Millisecond; wait *= 2 {
		var live bool
		if live, err = streams.Connected(ctx, a.r.rdb, a.s.id, player); err == nil {
			return live, nil
		}
		select {
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-time.After(wait):
		}
	}
	return false, fmt.Errorf("runner: %w", err)
}

// step applies one input and makes its effect durable: the input and its
// events are appended to the event stream in one fenced append, then
// scoring and the lobby hear what they must, then (at a hand boundary) the
// snapshot is written. Any failure to append stops the table: its memory
// may be ahead of the log, and the log is the truth it is reopened from.
func (a *actor) step(ctx context.Context, in table.Input) error {
	r := a.r
	start := time.Now()
	ctx, span := r.tracer.Start(ctx, "table.apply")
	defer span.End()
	if span.IsRecording() { // unsampled spans would drop them: skip building them
		span.SetAttributes(attribute.String("pulka.table_id", a.s.id), attribute.String("pulka.input", in.Kind.String()))
	}
	if r.opt.beforeApply != nil {
		r.opt.beforeApply(a.s.id, in)
	}
	a.dirty = true
	in.Entropy = newEntropy()
	evs, err := a.t.Apply(in)
	var rej *table.RejectError
	switch {
	case err == nil:
	case errors.As(err, &rej):
		r.m.rejections.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", rej.Reason.String())))
		span.SetAttributes(attribute.String("pulka.rejected", rej.Reason.String()))
	case len(evs) == 0:
		// An input the table cannot read changes nothing.
		a.dirty = false
		r.log.Warn("runner: input refused", "table", a.s.id, "kind", in.Kind, "err", err)
		return nil
	default:
		span.SetStatus(codes.Error, err.Error())
		return fmt.Errorf("apply %v: %w", in.Kind, err)
	}
	if len(evs) == 0 {
		a.dirty = false
		if rej != nil {
			// Refused, and nothing was due before it: the table did not
			// change, and nothing is logged.
			return a.refuse(ctx, rej)
		}
		return nil // a duplicate or stale input
	}
	data, err := table.MarshalInput(table.ForLog(in, evs))
	if err != nil {
		return err
	}
	entries, err := tablelog.Entries(a.s.id, a.lease.Epoch, data, nil, evs)
	if err != nil {
		return err
	}
	ids, err := r.fenced.AppendFenced(ctx, a.lease, entries...)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return a.appendFailed(ctx, err)
	}
	a.lastEv = ids[len(ids)-1]
	kind := inputCommand
	switch in.Kind {
	case table.InputTick:
		kind = inputTick
	case table.InputAway, table.InputBack:
		kind = inputPresence
	}
	r.m.apply.Record(ctx, time.Since(start).Seconds(), r.m.applyBy[kind])
	a.countSeeds(ctx, evs)
	if err := a.effects(ctx, evs); err != nil {
		return err
	}
	a.dirty = false
	if rej != nil {
		// What fired as due before the refused command is logged with the
		// input (its replay refuses the command again); the answer is not.
		if err := a.refuse(ctx, rej); err != nil {
			return err
		}
	}
	if handBoundary(evs) {
		// The hand's snapshot and the trim of its commands, in one step.
		return a.snapshotHandled(ctx)
	}
	return nil
}

func (a *actor) appendFailed(ctx context.Context, err error) error {
	if errors.Is(err, streams.ErrStaleEpoch) {
		a.r.m.fenced.Add(ctx, 1)
		return fmt.Errorf("%w: %w", errFenced, err)
	}
	return err
}

func handBoundary(evs []*tablev1.Event) bool {
	for _, e := range evs {
		switch e.GetEvent().(type) {
		case *tablev1.Event_HandEnded, *tablev1.Event_GameEnded:
			return true
		}
	}
	return false
}

// lobbyCommand is what the lobby must hear of e, if anything: the game's end
// (FinishTable), or a seat of a running game changing hands (SeatChanged),
// so that the list shows who plays it. Each command's id is the event's, so
// a republished one has one effect.
func (a *actor) lobbyCommand(e *tablev1.Event) *lobbyv1.LobbyCommand {
	seat := func(s uint32, player, name string, bot bool) *lobbyv1.LobbyCommand {
		return &lobbyv1.LobbyCommand{CommandId: fmt.Sprintf("table-runner:seat:%s:%d", e.GetGameId(), e.GetSeq()),
			Command: &lobbyv1.LobbyCommand_SeatChanged{SeatChanged: &lobbyv1.SeatChanged{
				TableId: a.s.id, Seat: s, PlayerId: player, DisplayName: name, Bot: bot, EventSeq: e.GetSeq()}}}
	}
	switch ev := e.GetEvent().(type) {
	case *tablev1.Event_GameEnded:
		return &lobbyv1.LobbyCommand{CommandId: "table-runner:finish:" + e.GetGameId(),
			Command: &lobbyv1.LobbyCommand_FinishTable{FinishTable: &lobbyv1.FinishTable{TableId: a.s.id}}}
	case *tablev1.Event_SeatTakenByBot:
		// The player a bot holds the seat for (their grace ran out) still
		// owns it, and may leave it through the lobby. The state is the
		// latest, not the event's: republished after a restore, a change
		// the player has since undone may read as a bot for good, which the
		// later PlayerSeated, with its higher seq, corrects.
		s := ev.SeatTakenByBot.GetSeat()
		return seat(s, a.t.HeldFor(int(s)), "", true)
	case *tablev1.Event_PlayerSeated:
		sp := ev.PlayerSeated.GetSeat()
		return seat(sp.GetSeat(), sp.GetPlayerId(), sp.GetDisplayName(), false)
	case *tablev1.Event_PlayerLeft:
		// A player who leaves a seat a bot plays for them gets no
		// SeatTakenByBot (the bot is there already): the leave itself
		// makes the bot's for good. (A Japanese leave ends the match.)
		if a.t.Settings().Game == tablesettings.Classic {
			return seat(ev.PlayerLeft.GetSeat(), "", "", true)
		}
	}
	return nil
}

// effects publishes what other services must hear about evs: scoring's
// inputs (game start, each finished hand, game end; deduplicated by game,
// kind and hand) and the lobby's (lobbyCommand). Both are
// retried until they succeed: the snapshot, which ends the need to publish
// them again, comes only after.
func (a *actor) effects(ctx context.Context, evs []*tablev1.Event) error {
	var out []streams.Entry
	for _, in := range a.t.ScoringInputs(evs) {
		in.Trace = telemetry.TraceContextFrom(ctx)
		data, err := proto.Marshal(in)
		if err != nil {
			return err
		}
		out = append(out, streams.Entry{Stream: scoringclient.HandsStream, Data: data})
	}
	for _, e := range evs {
		if cmd := a.lobbyCommand(e); cmd != nil {
			cmd.Trace = telemetry.TraceContextFrom(ctx)
			data, err := proto.Marshal(cmd)
			if err != nil {
				return err
			}
			out = append(out, streams.Entry{Stream: lobbyclient.CommandStream, Data: data})
		}
	}
	wallet, err := a.walletEntries(ctx, evs)
	if err != nil {
		return err
	}
	out = append(out, wallet...)
	if len(out) == 0 {
		return nil
	}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		_, err := a.r.pub.PublishBatch(ctx, out)
		if err == nil {
			return nil
		}
		a.r.log.Warn("runner: publish results, retrying", "table", a.s.id, "err", err)
		select {
		case <-a.stop:
			return fmt.Errorf("publish results of %s: stopped while retrying: %w", a.s.id, err)
		case <-time.After(wait):
		}
	}
}

// snapshot writes the table's state with the last event it includes.
func (a *actor) snapshot(ctx context.Context) error {
	_, err := a.writeSnapshot(ctx, tablelog.Handled{})
	return err
}

// snapshotHandled is snapshot and markHandled (without a notice) in one
// round trip: at a hand's end the table writes its snapshot and trims the
// commands it handled (docs/limits.md, the command stream's retention).
func (a *actor) snapshotHandled(ctx context.Context) error {
	if a.readPos == "" || a.readPos == a.handled {
		return a.snapshot(ctx)
	}
	next, err := nextID(a.readPos)
	if err != nil {
		return err
	}
	trimmed, err := a.writeSnapshot(ctx, tablelog.Handled{ID: a.readPos, TrimFrom: next})
	if err != nil {
		return err
	}
	a.handled, a.untrimmed = a.readPos, 0
	a.r.m.trimmed.Add(ctx, trimmed)
	return nil
}

// writeSnapshot writes the table's snapshot, and with h.ID set the command
// stream position it handled (tablelog.WriteSnapshotHandled); it returns the
// command entries trimmed.
func (a *actor) writeSnapshot(ctx context.Context, h tablelog.Handled) (int64, error) {
	b, err := a.t.MarshalBinary()
	if err != nil {
		return 0, err
	}
	trimmed, err := tablelog.WriteSnapshotHandled(ctx, a.r.rdb, a.lease, a.s.id, tablelog.Snapshot{EventID: a.lastEv, Table: b}, h)
	if err != nil {
		return 0, a.appendFailed(ctx, err)
	}
	return trimmed, nil
}

// catchUp reads the table's command backlog from Redis — everything after
// the read position, a page (the inbox size) at a time — and applies it,
// until it has reached the end of the stream and everything the shared
// reader dropped meanwhile; then the shared reader follows the stream again
// from the read position. Entries the reader hands over later that were
// read here are skipped by the read position.
func (a *actor) catchUp(ctx context.Context) error {
	page := int64(cap(a.s.inbox))
	for {
		after := a.readPos
		if after == "" {
			after = "0"
		}
		msgs, err := streams.ReadAfter(ctx, a.r.rdb, a.s.cmd, after, page)
		if errors.Is(err, streams.ErrTrimmed) {
			// The table trims what it handled, so a read from exactly its
			// trim point finds the head trimmed (ReadAfter cannot tell that
			// nothing after it is missing). Anything else means commands
			// after the read position are gone: nothing can bring them
			// back, so go on with what is left.
			if after != a.handled {
				a.r.log.Error("runner: command stream trimmed past the table's position", "table", a.s.id, "after", after)
			}
			msgs, err = rawRead(ctx, a.r.rdb, a.s.cmd, after, page)
		}
		if err != nil {
			return fmt.Errorf("catch up %s: %w", a.s.id, err)
		}
		for _, m := range msgs {
			if err := a.handle(m.Context(ctx), m); err != nil {
				return err
			}
		}
		if int64(len(msgs)) == page {
			continue
		}
		s := a.s
		s.mu.Lock()
		if streams.CompareIDs(a.readPos, s.lastDropped) >= 0 {
			s.catchup, s.lastDropped = false, ""
			if !s.inTailer && !s.closed {
				if err := a.r.tailer.Add(ctx, s.cmd, after0(a.readPos)); err != nil {
					s.catchup = true
					s.mu.Unlock()
					return err
				}
				s.inTailer = true
			}
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
	}
}

func after0(id string) string {
	if id == "" {
		return "0"
	}
	return id
}

// rawRead is XRANGE after `after` without the trimming check.
func rawRead(ctx context.Context, rdb redis.UniversalClient, stream, after string, count int64) ([]streams.Message, error) {
	xs, err := rdb.XRangeN(ctx, stream, "("+after0(after), "+", count).Result()
	if err != nil {
		return nil, err
	}
	out := make([]streams.Message, len(xs))
	for i, x := range xs {
		m := streams.Message{Stream: stream, ID: x.ID, Header: map[string]string{}}
		for k, v := range x.Values {
			s, _ := v.(string)
			switch k {
			case streams.FieldData:
				m.Data = []byte(s)
			case streams.FieldTraceParent, streams.FieldTraceState, streams.FieldBaggage:
			default:
				m.Header[k] = s
			}
		}
		out[i] = m
	}
	return out, nil
}

// finish ends a table whose game is over: a last snapshot, the table's keys
// set to expire, the assignment and the lease given up.
func (a *actor) finish(ctx context.Context) error {
	r := a.r
	if err := a.snapshot(ctx); err != nil {
		return err
	}
	id := a.s.id
	pipe := r.rdb.Pipeline()
	for _, k := range tableKeys(id) {
		pipe.PExpire(ctx, k, r.opt.FinishedTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("finish %s: %w", id, err)
	}
	if _, err := r.store.Remove(ctx, id, r.opt.ID); err != nil {
		return fmt.Errorf("finish %s: %w", id, err)
	}
	if err := r.leases.Release(ctx, a.lease); err != nil && !errors.Is(err, streams.ErrStaleEpoch) {
		r.log.Warn("runner: release lease", "table", id, "err", err)
	}
	r.log.Info("runner: game over", "table", id, "seq", a.t.Seq())
	return errFinished
}

// handOver leaves the table ready for its next owner: a snapshot (so the
// next owner replays little) and the lease released (so it need not wait
// for the TTL). A table taken over already refuses both, harmlessly.
func (a *actor) handOver(ctx context.Context) {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.r.opt.ShutdownHandover)
	defer cancel()
	if !a.dirty {
		if err := a.snapshot(hctx); err != nil {
			a.r.log.Info("runner: no snapshot at hand-over", "table", a.s.id, "err", err)
			return
		}
	}
	if err := a.r.leases.Release(hctx, a.lease); err != nil {
		a.r.log.Info("runner: release at hand-over", "table", a.s.id, "err", err)
	}
}

// countSeeds counts the client seeds the logged events awaited and took.
func (a *actor) countSeeds(ctx context.Context, evs []*tablev1.Event) {
	for _, e := range evs {
		switch {
		case e.GetHandCommitted() != nil:
			if n := len(e.GetHandCommitted().GetAwaitedSeats()); n > 0 {
				a.r.m.seeds.Add(ctx, int64(n), a.r.m.seedsAwaited)
			}
		case e.GetClientSeedAccepted() != nil:
			a.r.m.seeds.Add(ctx, 1, a.r.m.seedsTaken)
		}
	}
}

// newEntropy reads the randomness of one step from crypto/rand: a hand the
// step commits takes its server seed from it (docs/fair-play.md). It is read
// for every step, because whether a step commits a hand is known only after
// it (a move may end the hand); a read of 32 bytes costs far less than the
// step's append to Redis.
func newEntropy() table.Entropy {
	var e table.Entropy
	_, _ = rand.Read(e[:]) // never fails: crypto/rand crashes the program rather than return short
	return e
}
