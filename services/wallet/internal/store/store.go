package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// Store runs the wallet's scripts.
type Store struct {
	rdb  redis.UniversalClient
	s    *scripts
	now  func() time.Time
	pipe *pipeliner
	// batch and page: the audit's reads per pipeline, and ledger entries
	// per read (AuditBatch, LedgerPage).
	batch, page int
}

// DefaultFlushers is how many pipelines of script runs may be in flight.
const DefaultFlushers = 4

// New makes a store on rdb; now is the clock of the ledger's timestamps.
// Concurrent calls share pipelines, up to flushers in flight (0: every
// call is its own round trip).
func New(rdb redis.UniversalClient, now func() time.Time, flushers int) *Store {
	if now == nil {
		now = time.Now
	}
	st := &Store{rdb: rdb, s: newScripts(), now: now, batch: AuditBatch, page: LedgerPage}
	if flushers > 0 {
		st.pipe = &pipeliner{rdb: rdb, flushers: flushers}
	}
	return st
}

// script runs one script, through the pipeliner when there is one.
func (s *Store) script(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.pipe != nil {
		return s.pipe.run(ctx, sc, keys, args...)
	}
	return sc.Run(ctx, s.rdb, keys, args...)
}

// Client is the Redis client the store uses.
func (s *Store) Client() redis.UniversalClient { return s.rdb }

// Status says what an account script did.
type Status int

// Statuses of an account script.
const (
	Applied   Status = iota // applied or refused now, and remembered
	Duplicate               // a repeat of the operation id: the first outcome
	Conflict                // the id was used for other content: nothing done
	NoAccount               // the account does not exist: nothing done
)

// Outcome is an account script's answer.
type Outcome struct {
	Status Status
	// Reason is 0 when the operation was applied, else why it was refused.
	Reason walletv1.WalletRejectReason
	// The account's balance after the operation (its first run, for a
	// Duplicate) and the number of its last ledger entry.
	Available, Held int64
	Seq             uint64
	// The changes the operation made.
	AvailDelta, HeldDelta int64
	// Amount and Forfeited: what a collect or void step took.
	Amount    int64
	Forfeited bool
}

// Accepted reports whether the operation was applied (now or before).
func (o Outcome) Accepted() bool {
	return (o.Status == Applied || o.Status == Duplicate) && o.Reason == 0
}

// Balance is the outcome's balance of account a.
func (o Outcome) Balance(a string) *walletv1.Balance {
	return &walletv1.Balance{AccountId: a, Available: o.Available, Held: o.Held, Version: o.Seq}
}

// Op names one operation on one account.
type Op struct {
	ID      string // the idempotency key
	Digest  string // the content; the same ID with another digest is a conflict
	Account string
}

func (s *Store) run(ctx context.Context, sc *redis.Script, op Op, args ...any) (Outcome, error) {
	all := append([]any{op.ID, op.Digest, s.now().UnixMilli()}, args...)
	v, err := s.script(ctx, sc, accountKeys(op.Account), all...).Int64Slice()
	if err != nil {
		return Outcome{}, fmt.Errorf("store: %s on %s: %w", op.ID, op.Account, err)
	}
	if len(v) != 9 {
		return Outcome{}, fmt.Errorf("store: %s on %s: unexpected answer %v", op.ID, op.Account, v)
	}
	return Outcome{Status: Status(v[0]), Reason: walletv1.WalletRejectReason(v[1]), Available: v[2], Held: v[3],
		Seq: uint64(v[4]), AvailDelta: v[5], HeldDelta: v[6], Amount: v[7], Forfeited: v[8] == 1}, nil
}

// Open opens an account with the sign-up grant.
func (s *Store) Open(ctx context.Context, op Op, grant int64) (Outcome, error) {
	return s.run(ctx, s.s.open, op, grant)
}

// Bonus credits the daily bonus of day (YYYY-MM-DD) once.
func (s *Store) Bonus(ctx context.Context, op Op, day string, amount int64) (Outcome, error) {
	return s.run(ctx, s.s.bonus, op, day, amount)
}

// Hold registers the account at the table's pot, then holds the stake:
// two scripts, the pot's first (see potHoldScript and holdScript).
func (s *Store) Hold(ctx context.Context, op Op, table, gameID string, game lobbyv1.Game, amount int64) (Outcome, error) {
	reason, err := s.script(ctx, s.s.potHold, []string{potKey(table), holdersKey(table)},
		op.Account, int(game), s.now().UnixMilli()).Int64()
	if err != nil {
		return Outcome{}, fmt.Errorf("store: register %s at %s: %w", op.Account, table, err)
	}
	return s.run(ctx, s.s.hold, op, table, amount, gameID, reason)
}

// Release gives an open hold back.
func (s *Store) Release(ctx context.Context, op Op, table string) (Outcome, error) {
	return s.run(ctx, s.s.release, op, table)
}

// Forfeit marks an open hold forfeited.
func (s *Store) Forfeit(ctx context.Context, op Op, table string) (Outcome, error) {
	return s.run(ctx, s.s.forfeit, op, table)
}

// Collect is a settlement's step on one holder: its open hold at the table
// goes to the pot.
func (s *Store) Collect(ctx context.Context, account, table, gameID string) (Outcome, error) {
	return s.run(ctx, s.s.resolve, Op{ID: ledger.CollectID(table), Digest: "c", Account: account}, table, "collect", gameID)
}

// Void is a release's step on one holder: its open hold goes back.
func (s *Store) Void(ctx context.Context, account, table string) (Outcome, error) {
	return s.run(ctx, s.s.resolve, Op{ID: ledger.VoidID(table), Digest: "v", Account: account}, table, "void", "")
}

// Pay is a settlement's payment of amount to account (the forfeit account
// is opened by its first payment).
func (s *Store) Pay(ctx context.Context, account, table, gameID string, amount int64) (Outcome, error) {
	create := "0"
	if account == walletclient.ForfeitAccount {
		create = "1"
	}
	return s.run(ctx, s.s.pay, Op{ID: ledger.PayID(table), Digest: "p" + strconv.FormatInt(amount, 10), Account: account},
		table, amount, gameID, create)
}

// Pot is a table's pot as stored.
type Pot struct {
	Exists    bool
	State     string // open, settling, settled, released
	Game      lobbyv1.Game
	Digest    string
	GameID    string
	Standings []byte
	Plan      []byte
	Created   time.Time
	Started   time.Time
	Done      bool
}

// ReadPot reads a table's pot.
func (s *Store) ReadPot(ctx context.Context, table string) (Pot, error) {
	v, err := readPot(ctx, s.rdb, table).Result()
	if err != nil {
		return Pot{}, fmt.Errorf("store: pot of %s: %w", table, err)
	}
	return parsePot(v), nil
}

// readPot sends (or queues, on a pipeline) the read parsePot parses.
func readPot(ctx context.Context, c redis.Cmdable, table string) *redis.SliceCmd {
	return c.HMGet(ctx, potKey(table), "state", "game", "digest", "game_id", "standings", "plan", "created", "started", "done")
}

func parsePot(v []any) Pot {
	str := func(i int) string { s, _ := v[i].(string); return s }
	ms := func(i int) time.Time {
		n, _ := strconv.ParseInt(str(i), 10, 64)
		return time.UnixMilli(n)
	}
	game, _ := strconv.Atoi(str(1))
	p := Pot{Exists: v[0] != nil, State: str(0), Game: lobbyv1.Game(game), Digest: str(2), GameID: str(3),
		Created: ms(6), Started: ms(7), Done: v[8] != nil}
	if v[4] != nil {
		p.Standings = []byte(str(4))
	}
	if v[5] != nil {
		p.Plan = []byte(str(5))
	}
	return p
}

// Begin is potBeginScript's answer.
type Begin struct {
	What    string // none, refused, new, again
	Reason  walletv1.WalletRejectReason
	Game    lobbyv1.Game // the pot's
	Holders []string
}

// BeginSettle starts (or joins) a settlement of the table's pot with n
// standings.
func (s *Store) BeginSettle(ctx context.Context, table, digest, gameID string, standings []byte, n int) (Begin, error) {
	return s.begin(ctx, table, "settle", digest, gameID, standings, n)
}

// BeginRelease starts (or joins) a release of the table's pot.
func (s *Store) BeginRelease(ctx context.Context, table string) (Begin, error) {
	return s.begin(ctx, table, "release", "", "", nil, 0)
}

func (s *Store) begin(ctx context.Context, table, kind, digest, gameID string, standings []byte, n int) (Begin, error) {
	v, err := s.script(ctx, s.s.potBegin, []string{potKey(table), holdersKey(table)},
		kind, digest, gameID, standings, s.now().UnixMilli(), n,
		tablesettings.Classic.Seats(), tablesettings.Japanese.Seats()).Slice()
	if err != nil || len(v) < 3 {
		return Begin{}, errors.Join(fmt.Errorf("store: begin %s of %s: answer %v", kind, table, v), err)
	}
	b := Begin{}
	b.What, _ = v[0].(string)
	r, _ := v[1].(int64)
	b.Reason = walletv1.WalletRejectReason(r)
	g, _ := v[2].(int64)
	b.Game = lobbyv1.Game(g)
	for _, x := range v[3:] {
		a, _ := x.(string)
		b.Holders = append(b.Holders, a)
	}
	return b, nil
}

// SavePlan stores a settlement's plan unless one is stored, and returns the
// stored one.
func (s *Store) SavePlan(ctx context.Context, table string, plan []byte) ([]byte, error) {
	v, err := s.script(ctx, s.s.potPlan, []string{potKey(table)}, plan).Text()
	if err != nil {
		return nil, fmt.Errorf("store: plan of %s: %w", table, err)
	}
	return []byte(v), nil
}

// Done marks the pot's resolution finished and publishes settled (a
// GameSettled) on the table's SettledStream, the first time only; the pot
// and the stream expire after ttl (0: never).
func (s *Store) Done(ctx context.Context, table string, ttl time.Duration, settled []byte) error {
	if err := s.script(ctx, s.s.potDone, []string{potKey(table), holdersKey(table), walletclient.SettledStream(table)},
		s.now().UnixMilli(), ttl.Milliseconds(), settled).Err(); err != nil {
		return fmt.Errorf("store: done %s: %w", table, err)
	}
	return nil
}
