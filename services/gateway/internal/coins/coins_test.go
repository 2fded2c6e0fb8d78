package coins

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/pkg/wire"
)

// fakeWallet plays the wallet's side of the contract: it applies a command
// id once, writes the ledger stream in the contract's flat fields and rings
// its bell, as the wallet's script does. While down it answers nothing
// (walletclient.ErrTimeout) and applies nothing.
type fakeWallet struct {
	rdb *redis.Client

	mu      sync.Mutex
	down    bool
	sent    map[string]int // command id → times sent
	results map[string]*walletv1.WalletResult
	avail   map[string]int64
	seq     map[string]uint64
	bonus   map[string]bool
}

func newFakeWallet(rdb *redis.Client) *fakeWallet {
	return &fakeWallet{rdb: rdb, sent: map[string]int{}, results: map[string]*walletv1.WalletResult{},
		avail: map[string]int64{}, seq: map[string]uint64{}, bonus: map[string]bool{}}
}

func (f *fakeWallet) setDown(down bool) { f.mu.Lock(); f.down = down; f.mu.Unlock() }

func (f *fakeWallet) sends(id string) int { f.mu.Lock(); defer f.mu.Unlock(); return f.sent[id] }

func (f *fakeWallet) Do(ctx context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent[cmd.GetCommandId()]++
	if f.down {
		return nil, walletclient.ErrTimeout
	}
	if r, ok := f.results[cmd.GetCommandId()]; ok {
		return r, nil
	}
	var r *walletv1.WalletResult
	refuse := func(reason walletv1.WalletRejectReason) *walletv1.WalletResult {
		return &walletv1.WalletResult{CommandId: cmd.GetCommandId(), Reason: reason, Message: reason.String()}
	}
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_OpenAccount:
		a := c.OpenAccount.GetAccountId()
		if f.seq[a] > 0 {
			r = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_ACCOUNT_EXISTS)
		} else {
			r = f.credit(ctx, cmd.GetCommandId(), a, 1000, walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_SIGNUP_GRANT)
		}
	case *walletv1.WalletCommand_ClaimDailyBonus:
		a := c.ClaimDailyBonus.GetAccountId()
		switch {
		case f.seq[a] == 0:
			r = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT)
		case f.bonus[a]:
			r = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED)
		default:
			f.bonus[a] = true
			r = f.credit(ctx, cmd.GetCommandId(), a, 100, walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_DAILY_BONUS)
		}
	default:
		r = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNSUPPORTED)
	}
	f.results[cmd.GetCommandId()] = r
	return r, nil
}

// credit appends an entry (f.mu held).
func (f *fakeWallet) credit(ctx context.Context, op, account string, amount int64, kind walletv1.LedgerEntryKind) *walletv1.WalletResult {
	f.seq[account]++
	f.avail[account] += amount
	stream := walletclient.LedgerStream(account)
	f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{
		walletclient.FieldSeq, f.seq[account], walletclient.FieldKind, int32(kind), walletclient.FieldOp, op,
		walletclient.FieldAvailDelta, amount, walletclient.FieldHeldDelta, 0,
		walletclient.FieldAvailAfter, f.avail[account], walletclient.FieldHeldAfter, 0,
		walletclient.FieldCounterparty, walletclient.IssuerAccount, walletclient.FieldTable, "", walletclient.FieldGame, "",
		walletclient.FieldMemo, "", walletclient.FieldTime, time.Now().UnixMilli(),
	}})
	f.rdb.Publish(ctx, stream, "")
	b := &walletv1.Balance{AccountId: account, Available: f.avail[account], Version: f.seq[account]}
	e := &walletv1.LedgerEntry{AccountId: account, Kind: kind, AvailableDelta: amount, AvailableAfter: f.avail[account], Seq: f.seq[account]}
	return &walletv1.WalletResult{CommandId: op, Accepted: true, Balances: []*walletv1.Balance{b}, Entries: []*walletv1.LedgerEntry{e}}
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func setup(t *testing.T) (*redis.Client, *fakeWallet, *Wallet, *clock) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	fw := newFakeWallet(rdb)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	n := 0
	w := New(rdb, fw, Options{Now: clk.Now, NewID: func() string { n++; return strconv.Itoa(n) }})
	return rdb, fw, w, clk
}

func TestOpen_WalletDownAtRegistration_OpenedOnALaterBalanceRead(t *testing.T) {
	ctx := context.Background()
	_, fw, w, clk := setup(t)
	fw.setDown(true)
	if err := w.Open(ctx, "u-1"); !errors.Is(err, walletclient.ErrTimeout) {
		t.Fatalf("open with the wallet down: %v", err)
	}
	// Asked again right away: no second command while the first is unanswered.
	if _, err := w.Balance(ctx, "u-1"); !errors.Is(err, ErrOpening) {
		t.Fatalf("balance while opening: %v, want ErrOpening", err)
	}
	if n := fw.sends(OpenCommandID("u-1")); n != 1 {
		t.Fatalf("OpenAccount sent %d times within the retry interval, want 1", n)
	}
	fw.setDown(false)
	clk.Advance(DefaultOpenRetry)
	b, err := w.Balance(ctx, "u-1")
	if err != nil {
		t.Fatal(err)
	}
	if b.GetAvailable() != 1000 || b.GetVersion() != 1 {
		t.Fatalf("balance after the late open: %v", b)
	}
	// The same command id every time: the wallet applies it once.
	if n := fw.sends(OpenCommandID("u-1")); n != 2 {
		t.Fatalf("OpenAccount sent %d times, want 2", n)
	}
	// Opening an open account is fine (registration retried, two gateways).
	if err := w.Open(ctx, "u-1"); err != nil {
		t.Fatal(err)
	}
	b, _ = w.Balance(ctx, "u-1")
	if b.GetAvailable() != 1000 {
		t.Fatalf("a second open changed the balance: %v", b)
	}
}

func TestClaimDailyBonus_OnceADay_RefusalIsARejection(t *testing.T) {
	ctx := context.Background()
	_, fw, w, _ := setup(t)
	if err := w.Open(ctx, "u-1"); err != nil {
		t.Fatal(err)
	}
	res, err := w.ClaimDailyBonus(ctx, "u-1")
	if err != nil || res.GetBalances()[0].GetAvailable() != 1100 {
		t.Fatalf("first claim: %v %v", res, err)
	}
	_, err = w.ClaimDailyBonus(ctx, "u-1")
	var rej *Rejection
	if !errors.As(err, &rej) || rej.Reason != walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED {
		t.Fatalf("second claim: %v, want BONUS_CLAIMED", err)
	}
	// An account whose registration never reached the wallet is opened,
	// then paid.
	res, err = w.ClaimDailyBonus(ctx, "u-2")
	if err != nil || res.GetBalances()[0].GetAvailable() != 1100 {
		t.Fatalf("claim of an unopened account: %v %v", res, err)
	}
	if fw.sends(OpenCommandID("u-2")) != 1 {
		t.Fatal("the unopened account was not opened")
	}
}

func TestLedger_PagesNewestFirstWithABoundedCount(t *testing.T) {
	ctx := context.Background()
	_, fw, w, _ := setup(t)
	if err := w.Open(ctx, "u-1"); err != nil {
		t.Fatal(err)
	}
	fw.mu.Lock()
	for i := range 4 {
		fw.credit(ctx, "x"+strconv.Itoa(i), "u-1", 10, walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT)
	}
	fw.mu.Unlock()
	var seqs []uint64
	before := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		es, next, err := w.Ledger(ctx, "u-1", before, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) > 2 {
			t.Fatalf("page of %d entries, limit 2", len(es))
		}
		for _, e := range es {
			seqs = append(seqs, e.GetSeq())
		}
		if next == "" {
			break
		}
		before = next
	}
	if want := []uint64{5, 4, 3, 2, 1}; !equal(seqs, want) {
		t.Fatalf("entries %v, want %v", seqs, want)
	}
	if es, _, _ := w.Ledger(ctx, "u-1", "", 10_000); len(es) != 5 {
		t.Fatal("whole ledger")
	}
	fw.mu.Lock()
	for i := range MaxLedgerPage + 5 {
		fw.credit(ctx, "y"+strconv.Itoa(i), "u-1", 1, walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT)
	}
	fw.mu.Unlock()
	if es, next, _ := w.Ledger(ctx, "u-1", "", 10_000); len(es) != MaxLedgerPage || next == "" {
		t.Fatalf("a page asked for 10000 has %d entries (next %q), want at most %d", len(es), next, MaxLedgerPage)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sink records the balance frames it gets.
type sink struct {
	mu       sync.Mutex
	versions []uint64
	avail    []int64
	got      chan struct{}
}

func newSink() *sink { return &sink{got: make(chan struct{}, 100)} }

func (s *sink) Send(f *wire.Frame) bool {
	b := f.Message().GetBalance().GetBalance()
	s.mu.Lock()
	s.versions = append(s.versions, b.GetVersion())
	s.avail = append(s.avail, b.GetAvailable())
	s.mu.Unlock()
	s.got <- struct{}{}
	return true
}

func (s *sink) last() (uint64, int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.versions) == 0 {
		return 0, 0, 0
	}
	return s.versions[len(s.versions)-1], s.avail[len(s.avail)-1], len(s.versions)
}

func (s *sink) waitVersion(t *testing.T, v uint64) int64 {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if got, avail, _ := s.last(); got == v {
			return avail
		}
		select {
		case <-s.got:
		case <-deadline:
			got, _, _ := s.last()
			t.Fatalf("balance version %d never came (last %d)", v, got)
		}
	}
}

func TestFollower_SendsTheBalanceAtOnceAndOnEveryChange_OneReaderForAll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rdb, fw, w, _ := setup(t)
	if err := w.Open(ctx, "u-1"); err != nil {
		t.Fatal(err)
	}
	f := NewFollower(rdb, nil, nil)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	a1, a2, b := newSink(), newSink(), newSink()
	stopA1, err := f.Watch(ctx, "u-1", a1)
	if err != nil {
		t.Fatal(err)
	}
	stopA2, err := f.Watch(ctx, "u-1", a2)
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := f.Watch(ctx, "u-2", b) // not opened yet: version 0
	if err != nil {
		t.Fatal(err)
	}
	if avail := a1.waitVersion(t, 1); avail != 1000 {
		t.Fatalf("first frame: %d coins", avail)
	}
	a2.waitVersion(t, 1)
	if v, _, n := b.last(); v != 0 || n != 1 {
		t.Fatalf("an unopened account's first frame: version %d, %d frames", v, n)
	}
	if f.Accounts() != 2 {
		t.Fatalf("following %d accounts, want 2", f.Accounts())
	}

	if _, err := w.ClaimDailyBonus(ctx, "u-1"); err != nil {
		t.Fatal(err)
	}
	if avail := a1.waitVersion(t, 2); avail != 1100 {
		t.Fatalf("after the bonus: %d", avail)
	}
	a2.waitVersion(t, 2)
	if err := w.Open(ctx, "u-2"); err != nil {
		t.Fatal(err)
	}
	b.waitVersion(t, 1)

	stopA1()
	fw.mu.Lock()
	fw.credit(ctx, "p1", "u-1", 50, walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT)
	fw.mu.Unlock()
	a2.waitVersion(t, 3)
	if v, _, _ := a1.last(); v != 2 {
		t.Fatalf("a stopped watch still got version %d", v)
	}
	stopA2()
	stopB()
	stopB() // twice is harmless
	if f.Accounts() != 0 {
		t.Fatalf("following %d accounts after every watch stopped", f.Accounts())
	}
	// No socket ever got an older version after a newer one, nor one twice.
	for _, s := range []*sink{a1, a2, b} {
		s.mu.Lock()
		for i := 1; i < len(s.versions); i++ {
			if s.versions[i] <= s.versions[i-1] {
				t.Errorf("versions %v go back or repeat", s.versions)
			}
		}
		s.mu.Unlock()
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
