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
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/passhash"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/services/lobby/internal/domain"
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
	Password passhash.Params
	// Limits bound what players can make the lobby keep and do.
	Limits Limits
	// Wallet holds and releases the stakes of Domino Coin tables; nil: the
	// lobby refuses to create coin tables.
	Wallet Wallet

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
	o.Limits.defaults()
}

// Limits bound what one player, or many, can make the lobby keep and do
// (docs/limits.md, "Lobby"); zero values take the defaults.
type Limits struct {
	// WaitingPerPlayer is how many waiting tables one player may host or
	// sit at (a table counts once for each of its host and seated players).
	WaitingPerPlayer int
	// CreatesPerMinute is how many tables one player may create in any
	// minute (attempts, counted before the table is built).
	CreatesPerMinute int
	// CommandsPerMinute is how many lobby commands of any kind (create,
	// sit, stand, leave, bots) one player may send in any minute, counted
	// before anything is decided: every command the lobby answers is
	// stored for the result TTL (24 h), so this bounds what one account
	// makes Redis keep.
	CommandsPerMinute int
	// CoinSitsPerMinute is how many stakes one player may have the wallet
	// hold in any minute: sit-downs at Domino Coin tables and coin tables
	// created seated, counted before the hold is sent. The wallet keeps
	// every hold and release for ever, so this is tighter.
	CoinSitsPerMinute int
	// GuessesPerPlayer and GuessesPerTable bound the password guesses at one
	// table in any GuessWindow, by one player and by everybody. A guess is
	// counted before it is hashed.
	GuessesPerPlayer int
	GuessesPerTable  int
	// GuessesPerGuesser bounds one player's guesses at all tables together
	// in any GuessWindow, counted when the command is read, before it may
	// wait for a password worker: guesses spread over many tables cannot
	// fill the password queue.
	GuessesPerGuesser int
	GuessWindow       time.Duration
	// WaitingTTL: a waiting table nobody changed for this long is closed.
	WaitingTTL time.Duration
	// SweepInterval is how often a replica looks for such tables.
	SweepInterval time.Duration
	// PasswordWorkers hash and verify table passwords, off the command
	// consumers; PasswordQueue commands may wait for them, more are
	// refused UNAVAILABLE at once.
	PasswordWorkers int
	PasswordQueue   int
	// CreateQueue is the password workers' queue of table creations with a
	// password, apart from PasswordQueue and served first: guesses cannot
	// take the capacity that hashes new tables' passwords.
	CreateQueue int
}

// DefaultLimits are the limits a lobby runs with unless configured.
func DefaultLimits() Limits {
	return Limits{
		// A person sits, stands and changes tables a few times a minute
		// at most: 30 commands a minute is one every 2 s for a whole
		// minute, and bounds one account to 43,200 stored results a day
		// (instead of thousands a second). A coin sit-down is rarer still
		// (a stake is chosen, then the player waits for the table to
		// fill): 5 a minute bounds the wallet's ledger to 5 holds and 5
		// releases a minute per account (docs/limits.md, "Lobby").
		WaitingPerPlayer: 3, CreatesPerMinute: 10, CommandsPerMinute: 30, CoinSitsPerMinute: 5,
		GuessesPerPlayer: 5, GuessesPerTable: 20, GuessesPerGuesser: 20, GuessWindow: time.Minute,
		WaitingTTL: 15 * time.Minute, SweepInterval: 10 * time.Second,
		PasswordWorkers: 1, PasswordQueue: 64, CreateQueue: 16,
	}
}

func (l *Limits) defaults() {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *int }{
		{&l.WaitingPerPlayer, &d.WaitingPerPlayer}, {&l.CreatesPerMinute, &d.CreatesPerMinute},
		{&l.CommandsPerMinute, &d.CommandsPerMinute}, {&l.CoinSitsPerMinute, &d.CoinSitsPerMinute},
		{&l.GuessesPerPlayer, &d.GuessesPerPlayer}, {&l.GuessesPerTable, &d.GuessesPerTable},
		{&l.PasswordWorkers, &d.PasswordWorkers}, {&l.PasswordQueue, &d.PasswordQueue},
		{&l.GuessesPerGuesser, &d.GuessesPerGuesser}, {&l.CreateQueue, &d.CreateQueue},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	for _, f := range []struct{ v, def *time.Duration }{
		{&l.GuessWindow, &d.GuessWindow}, {&l.WaitingTTL, &d.WaitingTTL}, {&l.SweepInterval, &d.SweepInterval},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
}

// minuteWindow is the window of Limits.CreatesPerMinute,
// CommandsPerMinute and CoinSitsPerMinute.
const minuteWindow = time.Minute

// window is one of the sliding windows a player's command is counted
// against (store.Take): the rate, the refusal when it is full, and the
// label of pulka_lobby_limited_total counting those refusals.
type window struct {
	rate  store.Rate
	err   error  // the domain's refusal (a *domain.LimitError wraps it)
	scope string // whose window, for the message
	label string
}

func (s *Service) createWindow(player string) window {
	return window{rate: store.Rate{Key: store.CreateRateKey(player), Limit: s.opt.Limits.CreatesPerMinute, Window: minuteWindow},
		err: domain.ErrTooManyCreations, scope: "player", label: "create_rate"}
}

func (s *Service) commandWindow(player string) window {
	return window{rate: store.Rate{Key: store.CommandRateKey(player), Limit: s.opt.Limits.CommandsPerMinute, Window: minuteWindow},
		err: domain.ErrTooManyCommands, scope: "player", label: "commands"}
}

func (s *Service) coinSitWindow(player string) window {
	return window{rate: store.Rate{Key: store.CoinSitRateKey(player), Limit: s.opt.Limits.CoinSitsPerMinute, Window: minuteWindow},
		err: domain.ErrTooManyCoinSits, scope: "player", label: "coin_sits"}
}

func (s *Service) guesserWindow(player string) window {
	l := s.opt.Limits
	return window{rate: store.Rate{Key: store.GuesserRateKey(player), Limit: l.GuessesPerGuesser, Window: l.GuessWindow},
		err: domain.ErrTooManyGuesses, scope: "player at all tables", label: "guess_guesser"}
}

// playerWindows are the windows a player's command is counted against
// before the lobby decides anything: every command against its player's
// commands, a creation also against their creations, and a coin table
// created with its host seated (a stake held) also against their coin
// sit-downs: counted here, before its table id is reserved, so that a
// refusal leaves nothing behind. (A sit-down is counted once its table is
// known to be a coin table, before the hold: see apply.) A command without
// a player (the table-runner's) or without an id is counted against none
// (Apply refuses the latter as it is).
func (s *Service) playerWindows(cmd *lobbyv1.LobbyCommand) []window {
	p := cmd.GetPlayerId()
	if p == "" || cmd.GetCommandId() == "" {
		return nil
	}
	if c, ok := cmd.GetCommand().(*lobbyv1.LobbyCommand_CreateTable); ok {
		ws := []window{s.createWindow(p), s.commandWindow(p)}
		if c.CreateTable.GetSitDown() && c.CreateTable.GetSettings().GetStake().GetCoins() != nil {
			ws = append(ws, s.coinSitWindow(p))
		}
		return ws
	}
	return []window{s.commandWindow(p)}
}

// take counts cmd, by its command id, against every window at once (or
// against none), and returns the refusal of the first full one, a
// *domain.LimitError, counted by pulka_lobby_limited_total; nil when
// counted. A command counted already (a redelivery, a resend with the same
// id) is only moved, never counted twice. The caller answers a refusal
// without storing it: the same command succeeds once the window has room.
func (s *Service) take(ctx context.Context, now time.Time, cmd *lobbyv1.LobbyCommand, ws ...window) (refusal, err error) {
	if len(ws) == 0 {
		return nil, nil
	}
	rates := make([]store.Rate, len(ws))
	for i, w := range ws {
		rates[i] = w.rate
	}
	full, retry, err := s.store.Take(ctx, now, cmd.GetCommandId(), rates...)
	if err != nil || full < 0 {
		return nil, err
	}
	w := ws[full]
	s.limited(ctx, w.label)
	return &domain.LimitError{Err: w.err, Scope: w.scope, RetryAfter: retry}, nil
}

// Service is one lobby replica.
type Service struct {
	rdb    redis.UniversalClient
	store  *store.Store
	hasher passhash.Hasher
	opt    Options
	log    *slog.Logger
	m      metrics

	randMu sync.Mutex
	ready  atomic.Bool
	// hashJobs (sit-downs) and createJobs (creations) feed the password
	// workers (see handle), createJobs first.
	hashJobs   chan hashJob
	createJobs chan hashJob
}

// hashJob is a command that needs a password hashed or verified: it waits
// for a password worker instead of holding a command consumer.
type hashJob struct {
	ctx    context.Context
	m      streams.Message
	cmd    *lobbyv1.LobbyCommand
	queued time.Time
}

// New makes a lobby replica on rdb.
func New(rdb redis.UniversalClient, opt Options) (*Service, error) {
	opt.defaults()
	s := &Service{
		rdb: rdb, store: store.New(rdb, opt.Store), hasher: passhash.NewHasher(opt.Password),
		opt: opt, log: opt.Logger, hashJobs: make(chan hashJob, opt.Limits.PasswordQueue),
		createJobs: make(chan hashJob, opt.Limits.CreateQueue),
	}
	m, err := newMetrics(opt.MeterProvider.Meter("github.com/pulka/pulka/services/lobby"),
		func() (sits, creates int64) { return int64(len(s.hashJobs)), int64(len(s.createJobs)) })
	if err != nil {
		return nil, err
	}
	s.m = m
	return s, nil
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
		consumers[i] = streams.NewConsumer(s.rdb, store.ConsumerGroup, fmt.Sprintf("%s-%d", s.opt.Name, i), s.handle, opts...)
		if err := consumers[i].Add(ctx, lobbyclient.CommandStream); err != nil {
			return fmt.Errorf("lobby: %w", err)
		}
	}
	if _, _, err := s.store.WriteSnapshot(ctx); err != nil {
		// Not fatal: Redis may come back; the loop retries.
		s.log.WarnContext(ctx, "lobby: first snapshot failed", "err", err)
	}
	var hashers sync.WaitGroup
	for range s.opt.Limits.PasswordWorkers {
		hashers.Add(1)
		go func() { defer hashers.Done(); s.hashWorker() }() //nolint:contextcheck // each job carries its caller's context; the workers stop when the queues close
	}
	var wg sync.WaitGroup
	errs := make([]error, len(consumers))
	for i, c := range consumers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Run(ctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); s.sweepLoop(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); s.publishSummaries(ctx) }()
	s.ready.Store(true)
	s.snapshotLoop(ctx)
	s.ready.Store(false)
	wg.Wait()
	// The consumers are done: nothing else is queued. The workers answer
	// what is (each job has its own deadline).
	close(s.hashJobs)
	close(s.createJobs)
	hashers.Wait()
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
	if needsPassword(&cmd) {
		// Hashing takes ~25 ms of a core: a worker does it, so that guesses
		// never hold up the consumers (and the tables they create). The entry
		// is acknowledged now; if this replica dies before answering, the
		// player's retry (same command_id) is applied once.
		queue, limit := s.hashJobs, "password_queue"
		if _, ok := cmd.GetCommand().(*lobbyv1.LobbyCommand_CreateTable); ok {
			queue, limit = s.createJobs, "create_queue"
		} else if res, err := s.guesser(ctx, &cmd); err != nil {
			if m.Deliveries < s.opt.MaxDeliveries {
				return err // left pending: redelivered after MinIdle
			}
			s.answer(ctx, m, &cmd, reject(&cmd, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE, "the lobby could not apply the command; try again", tableIDOf(&cmd)))
			return nil
		} else if res != nil {
			s.answer(ctx, m, &cmd, res)
			return nil
		}
		select {
		case queue <- hashJob{ctx: ctx, m: m, cmd: &cmd, queued: time.Now()}:
		default:
			s.limited(ctx, limit)
			res := reject(&cmd, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE, "the lobby is busy checking passwords; try again", tableIDOf(&cmd))
			s.answer(ctx, m, &cmd, res)
		}
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
		switch err := s.store.Reply(ctx, to, res); {
		case errors.Is(err, streams.ErrNotReplyStream):
			// Never let a command make the lobby write into another key
			// (a table's event stream, say).
			s.log.WarnContext(ctx, "lobby: reply_to is not a lobby reply stream; not answering", "reply_to", to)
		case err != nil:
			return err // redelivered: the stored result is sent again
		}
	}
	s.forget(ctx, m)
	return nil
}

// needsPassword reports whether handling cmd may hash a password: a table
// created with one, or a seat asked for with one.
func needsPassword(cmd *lobbyv1.LobbyCommand) bool {
	switch c := cmd.GetCommand().(type) {
	case *lobbyv1.LobbyCommand_CreateTable:
		return c.CreateTable.GetPassword() != ""
	case *lobbyv1.LobbyCommand_SitDown:
		return c.SitDown.GetPassword() != ""
	}
	return false
}

// hashAttempts bounds the tries of a password command whose Apply fails
// (Redis errors): it was acknowledged already, so it is not redelivered.
const (
	hashAttempts = 3
	hashJobTime  = 10 * time.Second
)

// guesser counts a sit-down with a password against its player's guesses
// at all tables and their commands, before it may wait for a password
// worker, and returns the refusal when the player has none left (nil when
// counted). The count is by command id: a redelivered or resent command is
// counted once (Apply counts it again against the player's commands: it
// is only moved).
func (s *Service) guesser(ctx context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, error) {
	ws := s.playerWindows(cmd)
	if len(ws) == 0 {
		return nil, nil // refused by Apply as it is
	}
	// The guesses first: a guesser past their budget hears so.
	refusal, err := s.take(ctx, s.opt.Now(), cmd, append([]window{s.guesserWindow(cmd.GetPlayerId())}, ws...)...)
	if err != nil || refusal == nil {
		return nil, err
	}
	s.m.commands.Add(ctx, 1, metric.WithAttributes(attribute.String("command", commandKind(cmd)), attribute.String("outcome", "rejected")))
	return s.refuseLimit(cmd, refusal), nil
}

// nextJob is the password workers' next command: a creation when one
// waits, else whichever comes first. ok is false once both queues are
// closed and empty.
func (s *Service) nextJob() (hashJob, bool) {
	select {
	case j, ok := <-s.createJobs:
		if ok {
			return j, true
		}
		j, ok = <-s.hashJobs
		return j, ok
	default:
	}
	select {
	case j, ok := <-s.createJobs:
		if ok {
			return j, true
		}
		j, ok = <-s.hashJobs
		return j, ok
	case j, ok := <-s.hashJobs:
		if ok {
			return j, true
		}
		j, ok = <-s.createJobs
		return j, ok
	}
}

// hashWorker applies password commands until both queues are closed.
func (s *Service) hashWorker() {
	for {
		j, ok := s.nextJob()
		if !ok {
			return
		}
		s.m.hashWait.Record(j.ctx, time.Since(j.queued).Seconds())
		ctx, cancel := context.WithTimeout(context.WithoutCancel(j.ctx), hashJobTime)
		var res *lobbyv1.LobbyCommandResult
		var err error
		for attempt := range hashAttempts {
			if res, err = s.Apply(ctx, j.cmd); err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
		}
		if err != nil {
			s.log.ErrorContext(ctx, "lobby: password command failed", "command_id", j.cmd.GetCommandId(), "err", err)
			res = reject(j.cmd, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE, "the lobby could not apply the command; try again", tableIDOf(j.cmd))
		}
		s.answer(ctx, j.m, j.cmd, res)
		cancel()
	}
}

// answer replies to an acknowledged command and deletes its entry; it
// cannot be redelivered, so a failed reply is only logged (the player's
// retry gets the stored result).
func (s *Service) answer(ctx context.Context, m streams.Message, cmd *lobbyv1.LobbyCommand, res *lobbyv1.LobbyCommandResult) {
	if to := cmd.GetReplyTo(); to != "" {
		switch err := s.store.Reply(ctx, to, res); {
		case errors.Is(err, streams.ErrNotReplyStream):
			s.log.WarnContext(ctx, "lobby: reply_to is not a lobby reply stream; not answering", "reply_to", to)
		case err != nil:
			s.log.WarnContext(ctx, "lobby: reply failed", "command_id", cmd.GetCommandId(), "err", err)
		}
	}
	s.forget(ctx, m)
}

func (s *Service) limited(ctx context.Context, limit string) {
	s.m.limited.Add(ctx, 1, metric.WithAttributes(attribute.String("limit", limit)))
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
	now := s.opt.Now()
	// Counted before anything is decided, stored or sent to the wallet:
	// every other refusal is stored for the result TTL, so a player past
	// their commands must cost one script and leave nothing behind.
	if refusal, err := s.take(ctx, now, cmd, s.playerWindows(cmd)...); err != nil {
		return nil, "", err
	} else if refusal != nil {
		return s.refuseLimit(cmd, refusal), "rejected", nil
	}
	verify := s.guessVerifier(ctx, cmd, now)
	// held is the stake held for this command, kept across the retries of
	// a conflict (a hold is made once; deciding again may not need it).
	var held *stakes
	undo := func(t *domain.Table) {
		if held != nil {
			s.undoHold(ctx, cmd, *held, t)
			held = nil
		}
	}
	// undoLimited: a limit's refusal is not stored, so the same command may
	// come again and would find a released hold under its id (the wallet
	// answers the first acceptance): a sit-down's hold is left to it (or
	// to the player's next sit-down, HOLD_EXISTS, or to the table's start
	// or close). Only a creation's table, which may never exist, is released.
	undoLimited := func() {
		if held != nil && held.created {
			undo(nil)
		}
	}
	for range s.opt.MaxAttempts {
		ch, st, err := s.decide(ctx, cmd, verify)
		if err != nil {
			return nil, "", err
		}
		if held != nil && (st.hold == nil || st.hold.GetHoldStake().GetTableId() != held.hold.GetHoldStake().GetTableId()) {
			undo(st.table)
		}
		if st.hold != nil && held == nil {
			// The waiting-table limit is checked again by the commit; here
			// it spares a hold the commit would refuse. (A limit's refusal
			// is not stored, so a retry would find that hold released
			// under the same id and seat the player without a stake.)
			if full, err := s.waitingFull(ctx, cmd.GetPlayerId(), st.hold.GetHoldStake().GetTableId()); err != nil {
				return nil, "", err
			} else if full {
				s.limited(ctx, "waiting_tables")
				return s.refuseLimit(cmd, fmt.Errorf("%w: you already host or sit at %d waiting tables; leave one first",
					domain.ErrTooManyWaiting, s.opt.Limits.WaitingPerPlayer)), "rejected", nil
			}
			// The wallet keeps every hold (and its release) for ever: a
			// player sitting down and standing up at coin tables would grow
			// its ledger at request speed. Counted before the hold is sent
			// (and before the player is recorded among the table's
			// stakers); nothing is held yet, so nothing is undone. A
			// creation was counted already (playerWindows): only moved.
			if refusal, err := s.take(ctx, now, cmd, s.coinSitWindow(cmd.GetPlayerId())); err != nil {
				return nil, "", err
			} else if refusal != nil {
				return s.refuseLimit(cmd, refusal), "rejected", nil
			}
			refusal, err := s.holdStake(ctx, st)
			if err != nil {
				// No answer: not stored; the redelivery sends the same hold.
				return nil, "", err
			}
			if refusal != nil {
				// Nothing held, nothing seated: the refusal is the result.
				ch = store.Change{CommandID: cmd.GetCommandId(), Result: reject(cmd, domain.Reason(refusal), refusal.Error(), tableIDOf(cmd))}
				st = stakes{}
			} else {
				held = &st
			}
		}
		if ch.Table == nil && isLimit(ch.Result.GetReason()) {
			// A limit's refusal is not stored: the same command may succeed
			// once the limit allows it.
			undoLimited()
			return ch.Result, "rejected", nil
		}
		done, err := s.store.Commit(ctx, ch)
		if errors.Is(err, store.ErrConflict) {
			s.m.conflicts.Add(ctx, 1)
			continue
		}
		if errors.Is(err, domain.ErrTooManyWaiting) {
			undoLimited()
			s.limited(ctx, "waiting_tables")
			return s.refuseLimit(cmd, fmt.Errorf("%w: you already host or sit at %d waiting tables; leave one first",
				domain.ErrTooManyWaiting, s.opt.Limits.WaitingPerPlayer)), "rejected", nil
		}
		if err != nil {
			// The hold stays: the command's redelivery (or the player's
			// retry) sends the same hold and finds it, a creation at the
			// same table (store.ReserveTableID).
			return nil, "", err
		}
		if done.Duplicate != nil {
			// Another delivery of this command committed its seat on this
			// very hold (same id): nothing to undo.
			return s.repeat(done.Duplicate, cmd), "duplicate", nil
		}
		if ch.Started != nil {
			s.m.started.Add(ctx, 1)
			s.log.InfoContext(ctx, "lobby: table started", "table_id", ch.Started.GetTableId())
		}
		s.afterCommit(ctx, st, ch.Started != nil)
		if ch.Result.GetAccepted() {
			return ch.Result, "accepted", nil
		}
		return ch.Result, "rejected", nil
	}
	return nil, "", fmt.Errorf("lobby: command %s: table kept changing (%d attempts)", cmd.GetCommandId(), s.opt.MaxAttempts)
}

// refuseLimit answers a command refused by a limit (not stored).
func (s *Service) refuseLimit(cmd *lobbyv1.LobbyCommand, err error) *lobbyv1.LobbyCommandResult {
	res := reject(cmd, domain.Reason(err), err.Error(), tableIDOf(cmd))
	if d := domain.RetryAfter(err); d > 0 {
		res.RetryAfter = durationpb.New(d)
	}
	return res
}

func isLimit(r lobbyv1.LobbyRejectReason) bool {
	switch r {
	case lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES,
		lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED,
		lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES:
		return true
	}
	return false
}

// guessVerifier checks a password guess at the command's table: counted
// against the player's and the table's guess limits first, then hashed.
// Its answer is kept for the retries of the same command (a conflict
// decides again), which neither count nor hash again.
func (s *Service) guessVerifier(ctx context.Context, cmd *lobbyv1.LobbyCommand, now time.Time) domain.Verifier {
	var memo struct {
		done     bool
		hash, pw string
		ok       bool
	}
	return func(hash, pw string) (bool, error) {
		if memo.done && memo.hash == hash && memo.pw == pw {
			return memo.ok, nil
		}
		tableID, l := tableIDOf(cmd), s.opt.Limits
		refusal, err := s.take(ctx, now, cmd,
			window{rate: store.Rate{Key: store.GuessRateKey(tableID, cmd.GetPlayerId()), Limit: l.GuessesPerPlayer, Window: l.GuessWindow},
				err: domain.ErrTooManyGuesses, scope: "player", label: "guess_player"},
			window{rate: store.Rate{Key: store.GuessRateKey(tableID, ""), Limit: l.GuessesPerTable, Window: l.GuessWindow},
				err: domain.ErrTooManyGuesses, scope: "table", label: "guess_table"},
			// Counted already when the command was read (handle): the same
			// member is only moved. Here for a command applied directly.
			s.guesserWindow(cmd.GetPlayerId()))
		if err != nil {
			return false, err
		}
		if refusal != nil {
			return false, refusal
		}
		ok, err := passhash.Verify(hash, pw)
		if err != nil {
			return false, err
		}
		memo.done, memo.hash, memo.pw, memo.ok = true, hash, pw, ok
		return ok, nil
	}
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
func (s *Service) decide(ctx context.Context, cmd *lobbyv1.LobbyCommand, verify domain.Verifier) (store.Change, stakes, error) {
	player := domain.Player{ID: cmd.GetPlayerId(), Name: cmd.GetDisplayName(), Guest: lobbyclient.IsGuest(cmd.GetPlayerId())}
	var loaded *domain.Table
	refuse := func(err error, tableID string) (store.Change, stakes, error) {
		if domain.Reason(err) == lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNSPECIFIED {
			return store.Change{}, stakes{}, err
		}
		res := reject(cmd, domain.Reason(err), err.Error(), tableID)
		if d := domain.RetryAfter(err); d > 0 {
			res.RetryAfter = durationpb.New(d)
		}
		return store.Change{CommandID: cmd.GetCommandId(), Result: res}, stakes{table: loaded}, nil
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
			return store.Change{}, stakes{}, err
		}
		t, err := domain.NewTable(id, player, c.CreateTable, now, s.hasher.Hash)
		if err != nil {
			return refuse(err, "")
		}
		if t.Settings.Coins() && s.opt.Wallet == nil {
			return refuse(fmt.Errorf("%w: Domino Coin tables need the wallet and this lobby runs without it; create a free table", domain.ErrNotAllowed), "")
		}
		if t.Settings.Coins() && c.CreateTable.GetSitDown() {
			// The host's stake is held at this table before it exists: a
			// retry of the creation (redelivered, resent with the same id)
			// must create the same table, whose hold it then finds.
			if t.ID, err = s.store.ReserveTableID(ctx, cmd.GetCommandId(), id); err != nil {
				return store.Change{}, stakes{}, err
			}
		}
		ch, err := s.change(ctx, cmd, nil, 0, t, nil)
		return ch, planStakes(cmd, player, false, domain.Waiting, t, true), err
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
	wasSeated, wasStatus := t.SeatOf(player.ID) >= 0, t.Status
	loaded = t
	var forward *tablev1.Command
	switch c := cmd.GetCommand().(type) {
	case *lobbyv1.LobbyCommand_SitDown:
		err = t.SitDown(player, c.SitDown.GetSeat(), c.SitDown.GetPassword(), verify)
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
	ch, err := s.change(ctx, cmd, before, rev, t, forward)
	return ch, planStakes(cmd, player, wasSeated, wasStatus, t, false), err
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
		ch.Members, ch.WaitingLimit = t.Members(), s.opt.Limits.WaitingPerPlayer
		if t.Status == domain.Waiting {
			// Every change of a waiting table gives it another WaitingTTL.
			ch.IdleDeadline = s.opt.Now().Add(s.opt.Limits.WaitingTTL)
		}
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
