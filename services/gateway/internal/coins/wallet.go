package coins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
)

// Commands sends a wallet command and waits for its result (a
// *walletclient.Client). A refusal is a result with accepted = false.
type Commands interface {
	Do(ctx context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error)
}

// Rejection is a wallet command the wallet refused.
type Rejection struct {
	Reason  walletv1.WalletRejectReason
	Message string
}

func (e *Rejection) Error() string { return "wallet refused: " + e.Message }

// ErrOpening means the account's wallet is not open yet and the gateway
// asked the wallet to open it a moment ago without an answer (the wallet is
// down or slow): the command waits in the wallet's stream, and a retry
// shortly after may find the account open.
var ErrOpening = errors.New("coins: the account's wallet is being opened")

// ErrGuest means a guest asked for a wallet: guests play free tables only
// and have none.
var ErrGuest = errors.New("coins: guests have no wallet")

// Defaults of Options.
const (
	DefaultOpenRetry = 30 * time.Second
	// MaxLedgerPage bounds the entries of one ledger page.
	MaxLedgerPage = 100
	// maxOpening bounds the accounts remembered as being opened.
	maxOpening = 10_000
)

// Options tune a Wallet.
type Options struct {
	// OpenRetry is how long after an unanswered OpenAccount the gateway
	// waits before sending it again (it is idempotent, but every send is an
	// entry in the wallet's stream: a client asking for its balance in a
	// loop while the wallet is down must not fill it).
	OpenRetry time.Duration
	// NewID makes the unique part of a daily bonus claim's command id.
	NewID  func() string
	Logger *slog.Logger
	Now    func() time.Time
}

// Wallet is what the HTTP API and the sockets need of the wallet.
type Wallet struct {
	rdb redis.UniversalClient
	cmd Commands
	opt Options

	mu      sync.Mutex
	opening map[string]time.Time // account → when Open was last sent without an answer
}

// New makes a Wallet.
func New(rdb redis.UniversalClient, cmd Commands, opt Options) *Wallet {
	if opt.OpenRetry <= 0 {
		opt.OpenRetry = DefaultOpenRetry
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.NewID == nil {
		opt.NewID = func() string { return strconv.FormatInt(time.Now().UnixNano(), 36) }
	}
	return &Wallet{rdb: rdb, cmd: cmd, opt: opt, opening: map[string]time.Time{}}
}

// OpenCommandID is the id of the account's OpenAccount: derived from the
// account alone, so every send of it (registration, a later retry, another
// gateway) is one command, applied once.
func OpenCommandID(account string) string { return "gw-open/" + account }

// Open asks the wallet to open the account (with its sign-up grant) and
// waits for the answer. An account that exists already is fine. On an error
// (the wallet did not answer in time) the command stays in the wallet's
// stream and is applied when the wallet reads it.
func (w *Wallet) Open(ctx context.Context, account string) error {
	res, err := w.cmd.Do(ctx, &walletv1.WalletCommand{CommandId: OpenCommandID(account),
		Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: account}}})
	if err != nil {
		w.mu.Lock()
		if len(w.opening) >= maxOpening {
			w.opening = map[string]time.Time{} // forgetting only costs a repeated (idempotent) send
		}
		w.opening[account] = w.opt.Now()
		w.mu.Unlock()
		return fmt.Errorf("coins: open %s: %w", account, err)
	}
	w.mu.Lock()
	delete(w.opening, account)
	w.mu.Unlock()
	if !res.GetAccepted() && res.GetReason() != walletv1.WalletRejectReason_WALLET_REJECT_REASON_ACCOUNT_EXISTS {
		return &Rejection{Reason: res.GetReason(), Message: res.GetMessage()}
	}
	return nil
}

// recentlyAsked reports whether an Open of account went unanswered less
// than OpenRetry ago.
func (w *Wallet) recentlyAsked(account string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.opening[account]
	if ok && w.opt.Now().Sub(at) >= w.opt.OpenRetry {
		delete(w.opening, account)
		return false
	}
	return ok
}

// Balance is the account's balance, opening its wallet first when it has
// none yet (its registration found the wallet down). ErrOpening: an open
// was asked for recently and is still unanswered.
func (w *Wallet) Balance(ctx context.Context, account string) (*walletv1.Balance, error) {
	b, err := walletclient.ReadBalance(ctx, w.rdb, account)
	if err != nil || b.GetVersion() > 0 {
		return b, err
	}
	if w.recentlyAsked(account) {
		return nil, ErrOpening
	}
	if err := w.Open(ctx, account); err != nil {
		return nil, errors.Join(ErrOpening, err)
	}
	return walletclient.ReadBalance(ctx, w.rdb, account)
}

// Ledger reads a page of the account's ledger, newest first: at most limit
// (1..MaxLedgerPage) entries older than the stream id before ("" for the
// newest), and the before of the next page ("" when this is the last).
func (w *Wallet) Ledger(ctx context.Context, account, before string, limit int) ([]*walletv1.LedgerEntry, string, error) {
	limit = min(max(limit, 1), MaxLedgerPage)
	end := "+"
	if before != "" {
		end = "(" + before
	}
	msgs, err := w.rdb.XRevRangeN(ctx, walletclient.LedgerStream(account), end, "-", int64(limit)+1).Result()
	if err != nil {
		return nil, "", fmt.Errorf("coins: ledger of %s: %w", account, err)
	}
	next := ""
	if len(msgs) > limit {
		msgs = msgs[:limit]
		next = msgs[limit-1].ID
	}
	out := make([]*walletv1.LedgerEntry, 0, len(msgs))
	for _, m := range msgs {
		e, err := walletclient.ParseLedgerEntry(account, m)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
	}
	return out, next, nil
}

// ClaimDailyBonus claims today's bonus. A refusal (BONUS_CLAIMED: claimed
// today already) is a *Rejection. An account the wallet does not know yet
// (its registration found the wallet down) is opened, and the claim sent
// again under a new id (the first id's refusal is remembered for ever).
func (w *Wallet) ClaimDailyBonus(ctx context.Context, account string) (*walletv1.WalletResult, error) {
	claim := func() (*walletv1.WalletResult, error) {
		return w.cmd.Do(ctx, &walletv1.WalletCommand{CommandId: "gw-bonus/" + account + "/" + w.opt.NewID(),
			Command: &walletv1.WalletCommand_ClaimDailyBonus{ClaimDailyBonus: &walletv1.ClaimDailyBonus{AccountId: account}}})
	}
	res, err := claim()
	if err == nil && !res.GetAccepted() && res.GetReason() == walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT {
		if err := w.Open(ctx, account); err != nil {
			return nil, errors.Join(ErrOpening, err)
		}
		res, err = claim()
	}
	if err != nil {
		return nil, fmt.Errorf("coins: daily bonus of %s: %w", account, err)
	}
	if !res.GetAccepted() {
		return res, &Rejection{Reason: res.GetReason(), Message: res.GetMessage()}
	}
	return res, nil
}
