package service

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/services/lobby/internal/domain"
	"github.com/pulka/pulka/services/lobby/internal/password"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

// Options are the service's knobs and dependencies; zero values take the
// defaults.
type Options struct {
	// Name names this replica's consumers in the group ("<name>-<i>"); it
	// should be stable per replica (the pod name).
	Name string
	// Consumers is how many consumers this replica runs: commands are
	// handled one at a time per consumer, so this is the replica's
	// parallelism (password hashing makes a command take ~25 ms).
	Consumers int
	// SnapshotInterval is how often the LobbyView snapshot is refreshed
	// when the list changed.
	SnapshotInterval time.Duration
	// MaxDeliveries is how often a command whose handling fails (Redis
	// errors) is tried before the lobby answers it with UNAVAILABLE.
	MaxDeliveries int64
	// MinIdle is how long a command taken by a replica that died waits
	// before another replica takes it over.
	MinIdle time.Duration
	// MaxAttempts bounds the optimistic retries of one command.
	MaxAttempts int
	// Store bounds what is kept in Redis.
	Store store.Config
	// Password are the argon2id parameters for new tables.
	Password password.Params

	Logger         *slog.Logger
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
	// Now and Rand replace the clock and the random source (tests).
	Now  func() time.Time
	Rand io.Reader
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "lobby"
	}
	if o.Consumers <= 0 {
		o.Consumers = 2
	}
	if o.SnapshotInterval <= 0 {
		o.SnapshotInterval = time.Second
	}
	if o.MaxDeliveries <= 0 {
		o.MaxDeliveries = streams.DefaultMaxDeliveries
	}
	if o.MinIdle <= 0 {
		o.MinIdle = streams.DefaultMinIdle
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 32
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MeterProvider == nil {
		o.MeterProvider = metricnoop.NewMeterProvider()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
}

// Service is one lobby replica.
type Service struct {
	rdb    redis.UniversalClient
	store  *store.Store
	hasher password.Hasher
	opt    Options
	log    *slog.Logger
	m      metrics

	randMu sync.Mutex
	ready  atomic.Bool
}

// New makes a lobby replica on rdb.
func New(rdb redis.UniversalClient, opt Options) (*Service, error) {
	opt.defaults()
	m, err := newMetrics(opt.MeterProvider.Meter("github.com/pulka/pulka/services/lobby"))
	if err != nil {
		return nil, err
	}
	return &Service{
		rdb: rdb, store: store.New(rdb, opt.Store), hasher: password.NewHasher(opt.Password),
		opt: opt, log: opt.Logger, m: m,
	}, nil
}

// Ready reports whether the replica is consuming: its consumer group exists
// and it wrote or checked the snapshot at least once.
func (s *Service) Ready(context.Context) error {
	if !s.ready.Load() {
		return errors.New("lobby: not consuming yet")
	}
	return nil
}

// Run consumes commands and refreshes the snapshot until ctx is cancelled,
// then lets the commands in hand finish and returns.
func (s *Service) Run(ctx context.Context) error {
	var opts []streams.Option
	opts = append(opts, streams.WithLogger(s.log), streams.WithMeterProvider(s.opt.MeterProvider),
		streams.WithMaxDeliveries(s.opt.MaxDeliveries), streams.WithMinIdle(s.opt.MinIdle), streams.WithWorkers(1))
	if s.opt.TracerProvider != nil {
		opts = append(opts, streams.WithTracerProvider(s.opt.TracerProvider))
	}
	consumers := make([]*streams.Consumer, s.opt.Consumers)
	for i := range consumers {
		consumers[i] = streams.NewConsumer(s.rdb, lobbyclient.ConsumerGroup, fmt.Sprintf("%s-%d", s.opt.Name, i), s.handle, opts...)
		if err := consumers[i].Add(ctx, lobbyclient.CommandStream); err != nil {
			return fmt.Errorf("lobby: %w", err)
		}
	}
	if _, _, err := s.store.WriteSnapshot(ctx); err != nil {
		// Not fatal: Redis may come back; the loop retries.
		s.log.WarnContext(ctx, "lobby: first snapshot failed", "err", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(consumers))
	for i, c := range consumers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Run(ctx) }()
	}
	s.ready.Store(true)
	s.snapshotLoop(ctx)
	s.ready.Store(false)
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Service) snapshotLoop(ctx context.Context) {
	t := time.NewTicker(s.opt.SnapshotInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// One last snapshot so a restart starts from the newest list.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_, _, _ = s.store.WriteSnapshot(sctx)
			cancel()
			return
		case <-t.C:
			if _, wrote, err := s.store.WriteSnapshot(ctx); err != nil {
				s.log.WarnContext(ctx, "lobby: snapshot failed", "err", err)
			} else if wrote {
				s.m.snapshots.Add(ctx, 1)
			}
		}
	}
}

// handle is the consumer's handler for one command entry.
func (s *Service) handle(ctx context.Context, m streams.Message) error {
	var cmd lobbyv1.LobbyCommand
	if err := proto.Unmarshal(m.Data, &cmd); err != nil {
		// Nobody to answer (reply_to is inside): drop it, never retry it.
		s.log.WarnContext(ctx, "lobby: undecodable command dropped", "id", m.ID, "err", err)
		s.forget(ctx, m)
		return nil
	}
	res, err := s.Apply(ctx, &cmd)
	if err != nil {
		if m.Deliveries < s.opt.MaxDeliveries {
			return err // left pending: redelivered after MinIdle
		}
		// Answer instead of letting the entry go to the dead-letter stream:
		// it may carry a password in the clear, and the player deserves an
		// answer. Not stored, so the same command_id may be tried again.
		s.log.ErrorContext(ctx, "lobby: command failed on its last delivery", "command_id", cmd.GetCommandId(), "err", err)
		res = reject(&cmd, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE, "the lobby could not apply the command; try again", tableIDOf(&cmd))
	}
	if to := cmd.GetReplyTo(); to != "" {
		if !strings.HasPrefix(to, lobbyclient.ReplyStream("")) {
			// Never let a command make the lobby write into another key
			// (a table's event stream, say).
			s.log.WarnContext(ctx, "lobby: reply_to is not a lobby reply stream; not answering", "reply_to", to)
		} else if err := s.store.Reply(ctx, to, res); err != nil {
			return err // redelivered: the stored result is sent again
		}
	}
	s.forget(ctx, m)
	return nil
}

func (s *Service) forget(ctx context.Context, m streams.Message) {
	if err := s.store.Forget(ctx, m.Stream, m.ID); err != nil {
		s.log.WarnContext(ctx, "lobby: could not delete a handled command", "id", m.ID, "err", err)
	}
}

// Apply applies one command exactly once per command_id and returns its
// result: the first result again when the command was seen before. An
// error means Redis failed and nothing is known to be applied; applying the
// same command again is safe.
func (s *Service) Apply(ctx context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, error) {
	start := s.opt.Now()
	kind := commandKind(cmd)
	res, outcome, err := s.apply(ctx, cmd)
	if err != nil {
		outcome = "error"
	}
	attrs := metric.WithAttributes(attribute.String("command", kind), attribute.String("outcome", outcome))
	s.m.commands.Add(ctx, 1, attrs)
	s.m.latency.Record(ctx, s.opt.Now().Sub(start).Seconds(), attrs)
	return res, err
}

func (s *Service) apply(ctx context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, string, error) {
	if cmd.GetCommandId() == "" {
		return reject(cmd, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_COMMAND, "command_id is required", tableIDOf(cmd)), "rejected", nil
	}
	prev, ok, err := s.store.Result(ctx, cmd.GetCommandId())
	if err != nil {
		return nil, "", err
	}
	if ok {
		return s.repeat(prev, cmd), "duplicate", nil
	}
	for range s.opt.MaxAttempts {
		ch, err := s.decide(ctx, cmd)
		if err != nil {
			return nil, "", err
		}
		done, err := s.store.Commit(ctx, ch)
		if errors.Is(err, store.ErrConflict) {
			s.m.conflicts.Add(ctx, 1)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if done.Duplicate != nil {
			return s.repeat(done.Duplicate, cmd), "duplicate", nil
		}
		if ch.Started != nil {
			s.m.started.Add(ctx, 1)
			s.log.InfoContext(ctx, "lobby: table started", "table_id", ch.Started.GetTableId())
		}
		if ch.Result.GetAccepted() {
			return ch.Result, "accepted", nil
		}
		return ch.Result, "rejected", nil
	}
	return nil, "", fmt.Errorf("lobby: command %s: table kept changing (%d attempts)", cmd.GetCommandId(), s.opt.MaxAttempts)
}

// repeat answers a command id seen before. A command id is the sender's
// idempotency key; another player reusing it gets a refusal, not the first
// player's result (which may name a private table).
func (s *Service) repeat(prev *lobbyv1.LobbyCommandResult, cmd *lobbyv1.LobbyCommand) *lobbyv1.LobbyCommandResult {
	if prev.GetPlayerId() != cmd.GetPlayerId() {
		return reject(cmd, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_COMMAND, "command_id already used", "")
	}
	return prev
}

// decide loads what the command needs and decides its effect with the
// domain. Refusals become a Change that only stores the result; an error
// is an infrastructure failure.
func (s *Service) decide(ctx context.Context, cmd *lobbyv1.LobbyCommand) (store.Change, error) {
	player := domain.Player{ID: cmd.GetPlayerId(), Name: cmd.GetDisplayName()}
	refuse := func(err error, tableID string) (store.Change, error) {
		if domain.Reason(err) == lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNSPECIFIED {
			return store.Change{}, err
		}
		return store.Change{CommandID: cmd.GetCommandId(), Result: reject(cmd, domain.Reason(err), err.Error(), tableID)}, nil
	}
	if cmd.GetCommand() == nil {
		return refuse(fmt.Errorf("%w: no command set", domain.ErrInvalidCommand), "")
	}
	switch runner := fromRunner(cmd); {
	case player.ID == "" && !runner:
		return refuse(fmt.Errorf("%w: player_id is required", domain.ErrInvalidCommand), "")
	case player.ID != "" && runner:
		return refuse(fmt.Errorf("%w: %s comes from the table-runner, never from a player", domain.ErrInvalidCommand, commandKind(cmd)), "")
	}
	now := s.opt.Now()

	if c, ok := cmd.GetCommand().(*lobbyv1.LobbyCommand_CreateTable); ok {
		id, err := s.newTableID()
		if err != nil {
			return store.Change{}, err
		}
		t, err := domain.NewTable(id, player, c.CreateTable, now, s.hasher.Hash)
		if err != nil {
			return refuse(err, "")
		}
		return s.change(ctx, cmd, nil, 0, t, nil)
	}

	tableID := tableIDOf(cmd)
	if tableID == "" {
		return refuse(fmt.Errorf("%w: table_id is required", domain.ErrInvalidCommand), "")
	}
	t, rev, err := s.store.Load(ctx, tableID)
	if err != nil {
		return refuse(err, tableID)
	}
	before := t.Summary()
	var forward *tablev1.Command
	switch c := cmd.GetCommand().(type) {
	case *lobbyv1.LobbyCommand_SitDown:
		err = t.SitDown(player, c.SitDown.GetSeat(), c.SitDown.GetPassword(), password.Verify)
	case *lobbyv1.LobbyCommand_StandUp:
		err = t.StandUp(player.ID)
	case *lobbyv1.LobbyCommand_LeaveTable:
		var out domain.LeaveOutcome
		if out, err = t.Leave(player.ID); err == nil && out.TellRunner {
			forward = &tablev1.Command{
				CommandId: cmd.GetCommandId(), TableId: t.ID, PlayerId: player.ID, Trace: cmd.GetTrace(),
				Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}},
			}
		}
	case *lobbyv1.LobbyCommand_FillWithBots:
		err = t.FillWithBots(player.ID)
	case *lobbyv1.LobbyCommand_FinishTable:
		t.Finish()
	case *lobbyv1.LobbyCommand_SeatChanged:
		sc := c.SeatChanged
		err = t.SeatChanged(sc.GetSeat(), sc.GetPlayerId(), sc.GetDisplayName(), sc.GetBot(), sc.GetEventSeq())
	}
	if err != nil {
		return refuse(err, tableID)
	}
	return s.change(ctx, cmd, before, rev, t, forward)
}

// change builds the commit of an accepted command: the table (when it
// changed), the list operation, the start when the seats are now full.
func (s *Service) change(ctx context.Context, cmd *lobbyv1.LobbyCommand, before *lobbyv1.TableSummary, rev int64, t *domain.Table, forward *tablev1.Command) (store.Change, error) {
	ch := store.Change{CommandID: cmd.GetCommandId(), ExpectRevision: rev, Forward: forward}
	if t.Status == domain.Waiting && t.Full() {
		gameID, err := s.gameID()
		if err != nil {
			return store.Change{}, err
		}
		trace := telemetry.TraceContextFrom(ctx)
		if trace == nil {
			trace = cmd.GetTrace()
		}
		if ch.Started, err = t.Start(s.opt.Now(), gameID, trace); err != nil {
			return store.Change{}, err
		}
	}
	after := t.Summary()
	if before == nil || !proto.Equal(before, after) {
		ch.Table = t
		if t.Settings.Visibility == domain.Public {
			ch.List = store.ListUpsert
			if !t.Listed() {
				ch.List = store.ListRemove
			}
		}
	}
	ch.Result = &lobbyv1.LobbyCommandResult{
		CommandId: cmd.GetCommandId(), PlayerId: cmd.GetPlayerId(), Accepted: true,
		TableId: t.ID, Trace: cmd.GetTrace(),
	}
	if t.Status != domain.Finished {
		ch.Result.Table = after
	}
	return ch, nil
}

func reject(cmd *lobbyv1.LobbyCommand, reason lobbyv1.LobbyRejectReason, msg, tableID string) *lobbyv1.LobbyCommandResult {
	return &lobbyv1.LobbyCommandResult{
		CommandId: cmd.GetCommandId(), PlayerId: cmd.GetPlayerId(), Accepted: false,
		Reason: reason, Message: msg, TableId: tableID, Trace: cmd.GetTrace(),
	}
}

// tableIDEncoding writes 128 random bits as 26 lowercase base32 letters and
// digits: unguessable (a private table's id is its only key) and free of
// '{' and '}' (the Redis hash tag of a table's keys).
var tableIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func (s *Service) newTableID() (string, error) {
	var b [16]byte
	if err := s.read(b[:]); err != nil {
		return "", fmt.Errorf("lobby: table id: %w", err)
	}
	return tableIDEncoding.EncodeToString(b[:]), nil
}

// gameID is a new game's id: 128 random bits, derived from nothing secret
// (the deals' seeds are the table-runner's, drawn per hand).
func (s *Service) gameID() (string, error) {
	var b [16]byte
	if err := s.read(b[:]); err != nil {
		return "", fmt.Errorf("lobby: game id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

func (s *Service) read(b []byte) error {
	s.randMu.Lock() // a test's deterministic reader need not be safe for concurrent use
	defer s.randMu.Unlock()
	_, err := io.ReadFull(s.opt.Rand, b)
	return err
}

func commandKind(cmd *lobbyv1.LobbyCommand) string {
	switch cmd.GetCommand().(type) {
	case *lobbyv1.LobbyCommand_CreateTable:
		return "create_table"
	case *lobbyv1.LobbyCommand_SitDown:
		return "sit_down"
	case *lobbyv1.LobbyCommand_StandUp:
		return "stand_up"
	case *lobbyv1.LobbyCommand_LeaveTable:
		return "leave_table"
	case *lobbyv1.LobbyCommand_FillWithBots:
		return "fill_with_bots"
	case *lobbyv1.LobbyCommand_FinishTable:
		return "finish_table"
	case *lobbyv1.LobbyCommand_SeatChanged:
		return "seat_changed"
	default:
		return "unknown"
	}
}

func tableIDOf(cmd *lobbyv1.LobbyCommand) string {
	switch c := cmd.GetCommand().(type) {
	case *lobbyv1.LobbyCommand_SitDown:
		return c.SitDown.GetTableId()
	case *lobbyv1.LobbyCommand_StandUp:
		return c.StandUp.GetTableId()
	case *lobbyv1.LobbyCommand_LeaveTable:
		return c.LeaveTable.GetTableId()
	case *lobbyv1.LobbyCommand_FillWithBots:
		return c.FillWithBots.GetTableId()
	case *lobbyv1.LobbyCommand_FinishTable:
		return c.FinishTable.GetTableId()
	case *lobbyv1.LobbyCommand_SeatChanged:
		return c.SeatChanged.GetTableId()
	}
	return ""
}

// fromRunner reports whether cmd is one the table-runner sends about a
// table, on behalf of no player.
func fromRunner(cmd *lobbyv1.LobbyCommand) bool {
	switch cmd.GetCommand().(type) {
	case *lobbyv1.LobbyCommand_FinishTable, *lobbyv1.LobbyCommand_SeatChanged:
		return true
	}
	return false
}
