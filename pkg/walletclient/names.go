package walletclient

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// CommandShards is the number of command streams. Senders and the wallet
// must agree on it; changing it moves accounts between shards, which is
// safe only while the streams are drained.
const CommandShards = 64

const (
	cmdPrefix   = streams.KeyPrefix + ":wallet:cmd:"
	replyPrefix = streams.KeyPrefix + ":wallet:reply:"
	// SystemPrefix starts the ids of the wallet's own accounts; player
	// accounts may not start with it.
	SystemPrefix = "~"
	// IssuerAccount is the counterparty of the grants: its balance is
	// minus every coin ever issued (it is not stored, only summed).
	IssuerAccount = SystemPrefix + "issuer"
	// ForfeitAccount receives the pot of a game nobody was eligible to win.
	ForfeitAccount = SystemPrefix + "forfeit"
	potPrefix      = SystemPrefix + "pot:"
)

// CommandStream is command shard n.
func CommandStream(n int) string { return cmdPrefix + strconv.Itoa(n) }

// CommandStreams lists every command shard.
func CommandStreams() []string {
	out := make([]string, CommandShards)
	for i := range out {
		out[i] = CommandStream(i)
	}
	return out
}

// ShardOf is the shard of an account or table id.
func ShardOf(id string) int { return int(crc32.ChecksumIEEE([]byte(id)) % CommandShards) }

// CommandStreamForAccount is where commands about one account go (open,
// bonus, hold, release, forfeit).
func CommandStreamForAccount(accountID string) string { return CommandStream(ShardOf(accountID)) }

// CommandStreamForTable is where commands about a whole table go (release
// the table, settle its game).
func CommandStreamForTable(tableID string) string { return CommandStream(ShardOf("t:" + tableID)) }

// SettledStream carries the table's GameSettled, once, when its pot was
// paid out or released; it carries the table's hash tag (the wallet writes
// it in the same script that closes the pot) and expires with the pot.
func SettledStream(tableID string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(tableID) + ":wallet:settled"
}

// ReplyStream is the stream the wallet answers a sender instance on.
func ReplyStream(instance string) string { return replyPrefix + instance }

// AccountTag is the Redis Cluster hash tag of one account: every key of the
// account has it, so one script may change several of them.
func AccountTag(accountID string) string { return "{w:" + accountID + "}" }

// LedgerStream is the account's ledger (see ParseLedgerEntry).
func LedgerStream(accountID string) string {
	return streams.KeyPrefix + ":" + AccountTag(accountID) + ":ledger"
}

// PotAccount is the name of a table's pot as a ledger counterparty.
func PotAccount(tableID string) string { return potPrefix + tableID }

// ErrBadAccount means an id cannot be an account id.
var ErrBadAccount = errors.New("wallet: invalid account id")

// CheckAccountID reports whether id may name a player's account: what
// scoringclient.CheckID allows (it becomes part of keys), not starting with
// SystemPrefix.
func CheckAccountID(id string) error {
	if err := scoringclient.CheckID("account", id); err != nil {
		return fmt.Errorf("%w: %w", ErrBadAccount, err)
	}
	if strings.HasPrefix(id, SystemPrefix) {
		return fmt.Errorf("%w: %q starts with %q, which is the wallet's", ErrBadAccount, id, SystemPrefix)
	}
	return nil
}
