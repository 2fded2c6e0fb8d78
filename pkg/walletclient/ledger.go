package walletclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/types/known/timestamppb"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
)

// Fields of a ledger entry (LedgerStream). The wallet's script writes them
// in the same atomic step as the change they record.
const (
	FieldSeq          = "seq"   // entry number, from 1
	FieldKind         = "kind"  // LedgerEntryKind number
	FieldOp           = "op"    // the operation (command) id
	FieldAvailDelta   = "da"    // change of the available balance
	FieldHeldDelta    = "dh"    // change of the held balance
	FieldAvailAfter   = "a"     // available balance after
	FieldHeldAfter    = "h"     // held balance after
	FieldCounterparty = "cp"    // the other account
	FieldTable        = "table" // the table, for game entries
	FieldGame         = "game"  // the game, when known
	FieldMemo         = "memo"  // e.g. the day of a daily bonus
	FieldTime         = "ts"    // Unix milliseconds
)

// ErrBadEntry means a ledger stream entry lacks a field or has one that does
// not parse.
var ErrBadEntry = errors.New("walletclient: malformed ledger entry")

// ParseLedgerEntry reads one entry of accountID's ledger stream.
func ParseLedgerEntry(accountID string, m redis.XMessage) (*walletv1.LedgerEntry, error) {
	str := func(k string) string { s, _ := m.Values[k].(string); return s }
	var errs []error
	num := func(k string) int64 {
		n, err := strconv.ParseInt(str(k), 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q", k, str(k)))
		}
		return n
	}
	e := &walletv1.LedgerEntry{
		AccountId: accountID, CommandId: str(FieldOp), Seq: uint64(num(FieldSeq)),
		Kind:           walletv1.LedgerEntryKind(num(FieldKind)),
		AvailableDelta: num(FieldAvailDelta), HeldDelta: num(FieldHeldDelta),
		AvailableAfter: num(FieldAvailAfter), HeldAfter: num(FieldHeldAfter),
		Counterparty: str(FieldCounterparty), TableId: str(FieldTable), GameId: str(FieldGame), Memo: str(FieldMemo),
		CreatedAt: timestamppb.New(time.UnixMilli(num(FieldTime))),
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s %s: %w", ErrBadEntry, accountID, m.ID, errors.Join(errs...))
	}
	e.EntryId = accountID + "/" + strconv.FormatUint(e.Seq, 10)
	return e, nil
}

// Ledger reads up to count entries of the account's ledger after the stream
// ID after ("0" or "" for the start), oldest first, and the stream ID to
// continue from.
func Ledger(ctx context.Context, rdb redis.Cmdable, accountID, after string, count int64) ([]*walletv1.LedgerEntry, string, error) {
	msgs, err := LedgerPage(ctx, rdb, accountID, after, count).Result()
	if err != nil {
		return nil, after, fmt.Errorf("walletclient: ledger of %s: %w", accountID, err)
	}
	return ParseLedgerPage(accountID, after, msgs)
}

// LedgerPage sends (or queues, on a pipeline) the read of Ledger's page;
// ParseLedgerPage reads its answer.
func LedgerPage(ctx context.Context, rdb redis.Cmdable, accountID, after string, count int64) *redis.XMessageSliceCmd {
	if after == "" {
		after = "0"
	}
	return rdb.XRangeN(ctx, LedgerStream(accountID), "("+after, "+", count)
}

// ParseLedgerPage reads the entries of a LedgerPage that started after
// after, and the stream ID to continue from.
func ParseLedgerPage(accountID, after string, msgs []redis.XMessage) ([]*walletv1.LedgerEntry, string, error) {
	if after == "" {
		after = "0"
	}
	out := make([]*walletv1.LedgerEntry, 0, len(msgs))
	for _, m := range msgs {
		e, err := ParseLedgerEntry(accountID, m)
		if err != nil {
			return out, after, err
		}
		out = append(out, e)
		after = m.ID
	}
	return out, after, nil
}

// ReadBalance is the account's balance: its ledger's last entry. An account
// without a ledger (none, or not opened yet) has a zero balance at version 0.
func ReadBalance(ctx context.Context, rdb redis.Cmdable, accountID string) (*walletv1.Balance, error) {
	msgs, err := rdb.XRevRangeN(ctx, LedgerStream(accountID), "+", "-", 1).Result()
	if err != nil {
		return nil, fmt.Errorf("walletclient: balance of %s: %w", accountID, err)
	}
	b := &walletv1.Balance{AccountId: accountID}
	if len(msgs) == 0 {
		return b, nil
	}
	e, err := ParseLedgerEntry(accountID, msgs[0])
	if err != nil {
		return nil, err
	}
	b.Available, b.Held, b.Version = e.GetAvailableAfter(), e.GetHeldAfter(), e.GetSeq()
	return b, nil
}
