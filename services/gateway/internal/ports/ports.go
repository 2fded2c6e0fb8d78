package ports

import (
	"context"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
)

// LobbyCommands sends a command to the lobby and waits for its result. A
// refusal is a result with accepted = false, not an error.
type LobbyCommands interface {
	Do(ctx context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, error)
}

// LobbyChange is one change of the public table list.
type LobbyChange struct {
	Version  uint64
	Upserted *lobbyv1.TableSummary // nil for a removal
	Removed  string
}

// LobbyView is this instance's cached copy of the public table list.
type LobbyView interface {
	// List returns the listed tables matching filter, newest first.
	List(filter *lobbyv1.TableFilter) []*lobbyv1.TableSummary
	// Page returns at most limit listed tables matching filter, newest
	// first, after skipping offset of them; more: further tables match.
	Page(filter *lobbyv1.TableFilter, offset, limit int) (tables []*lobbyv1.TableSummary, more bool)
	// Get returns a listed table.
	Get(tableID string) (*lobbyv1.TableSummary, bool)
	// Fetch reads any table, private ones included (their id is their link).
	Fetch(ctx context.Context, tableID string) (*lobbyv1.TableSummary, error)
	// Version is the version of the last change applied.
	Version() uint64
	// Changed is closed at the next change; take it before reading.
	Changed() <-chan struct{}
	// Since returns the changes after version `after`; complete is false
	// when the history does not reach back that far (send the whole list).
	Since(after uint64) (changes []LobbyChange, version uint64, complete bool)
}

// FinishedGame is a finished game with its final sheet.
type FinishedGame struct {
	GameID, TableID string
	EndedAt         time.Time
	Sheet           *scoringv1.Sheet
	Standings       *scoringv1.FinalStandings
}

// Sheets reads finished games.
type Sheets interface {
	// History returns playerID's finished games that ended before `before`
	// (zero: the newest), newest first, at most limit.
	History(ctx context.Context, playerID string, before time.Time, limit int) ([]FinishedGame, error)
	// Shared returns, paged the same way, only the games of playerID that
	// viewerID played in too; next is the `before` of the next page (zero:
	// none) and never the end time of a game the viewer did not play.
	Shared(ctx context.Context, playerID, viewerID string, before time.Time, limit int) (games []FinishedGame, next time.Time, err error)
}

// Wallet is an account's Domino Coin wallet, as the gateway sees it
// (services/gateway/internal/coins). Refusals are *coins.Rejection errors.
type Wallet interface {
	// Open opens the account's wallet (idempotent; an existing one is fine).
	Open(ctx context.Context, account string) error
	// Balance reads the balance, opening the wallet first if it has none.
	Balance(ctx context.Context, account string) (*walletv1.Balance, error)
	// Ledger reads a page of the ledger, newest first, older than the
	// stream id before ("" for the newest); next is the next page's before.
	Ledger(ctx context.Context, account, before string, limit int) (entries []*walletv1.LedgerEntry, next string, err error)
	// ClaimDailyBonus claims today's bonus.
	ClaimDailyBonus(ctx context.Context, account string) (*walletv1.WalletResult, error)
}
