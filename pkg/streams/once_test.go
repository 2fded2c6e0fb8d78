package streams_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func TestOnce_AppliesEffectOncePerKeyUnderConcurrentDuplicates(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	var applied atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eff := (&streams.Effect{}).Do("HINCRBY", "w:{acct1}:bal", "coins", 50).Do("XADD", "w:{acct1}:ledger", "*", "op", "payout-9")
			res, err := streams.Once(ctx, rdb, "w:{acct1}:dedupe:payout-9", time.Minute, "payout-9", eff)
			if err != nil {
				t.Error(err)
				return
			}
			if res.Applied {
				applied.Add(1)
				if len(res.Replies) != 2 {
					t.Errorf("replies = %v", res.Replies)
				}
			} else if res.Mark != "payout-9" {
				t.Errorf("duplicate sees mark %q", res.Mark)
			}
		}()
	}
	wg.Wait()
	if applied.Load() != 1 {
		t.Fatalf("applied %d times", applied.Load())
	}
	if bal, _ := rdb.HGet(ctx, "w:{acct1}:bal", "coins").Int(); bal != 50 {
		t.Fatalf("balance = %d, want 50", bal)
	}
	if n, _ := rdb.XLen(ctx, "w:{acct1}:ledger").Result(); n != 1 {
		t.Fatalf("ledger has %d entries, want 1", n)
	}
	if ttl, _ := rdb.PTTL(ctx, "w:{acct1}:dedupe:payout-9").Result(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("dedupe TTL = %s", ttl)
	}
}

func TestOnce_FailedEffectDoesNotSetDedupeKey(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	if err := rdb.Set(ctx, "x:{k}:notahash", "s", 0).Err(); err != nil {
		t.Fatal(err)
	}
	bad := (&streams.Effect{}).Do("HINCRBY", "x:{k}:notahash", "f", 1)
	if _, err := streams.Once(ctx, rdb, "x:{k}:dedupe", time.Minute, "m", bad); err == nil {
		t.Fatalf("a failing effect reported success")
	}
	if n, _ := rdb.Exists(ctx, "x:{k}:dedupe").Result(); n != 0 {
		t.Fatalf("dedupe key set although the effect failed: a retry would be skipped")
	}
	good := (&streams.Effect{}).Do("INCR", "x:{k}:n")
	res, err := streams.Once(ctx, rdb, "x:{k}:dedupe", time.Minute, "m", good)
	if err != nil || !res.Applied {
		t.Fatalf("retry after failure: %+v %v", res, err)
	}
}

// A custom script decides: a debit that would make the balance negative is
// refused, and the refusal itself is recorded once.
func TestOnceScript_DecidedRefusalIsRecordedAndRaisedErrorIsRetryable(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	debit := streams.NewOnceScript(`
local bal = tonumber(redis.call('GET', KEYS[1]) or '0')
local amt = tonumber(ARGV[1])
if ARGV[2] == 'explode' then error('boom') end
if bal < amt then return 'insufficient' end
redis.call('DECRBY', KEYS[1], amt)
return 'ok'
`)
	bal := "w:{a}:bal"
	if err := rdb.Set(ctx, bal, 100, 0).Err(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, op, amount, mode string
		wantApplied            bool
		wantReply              string
		wantErr                bool
		wantBal                int
	}{
		{"debit applies", "op1", "60", "", true, "ok", false, 40},
		{"duplicate is skipped", "op1", "60", "", false, "", false, 40},
		{"refusal is decided", "op2", "60", "", true, "insufficient", false, 40},
		{"refusal duplicate is skipped", "op2", "10", "", false, "", false, 40},
		{"raised error is not recorded", "op3", "10", "explode", false, "", true, 40},
		{"so the retry runs", "op3", "10", "", true, "ok", false, 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := debit.Run(ctx, rdb, "w:{a}:dedupe:"+tc.op, time.Minute, tc.op, []string{bal}, tc.amount, tc.mode)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil {
				if res.Applied != tc.wantApplied {
					t.Fatalf("applied = %v, want %v", res.Applied, tc.wantApplied)
				}
				if tc.wantApplied && (len(res.Replies) != 1 || res.Replies[0] != tc.wantReply) {
					t.Fatalf("replies = %v, want %q", res.Replies, tc.wantReply)
				}
			}
			if got, _ := rdb.Get(ctx, bal).Int(); got != tc.wantBal {
				t.Fatalf("balance = %d, want %d", got, tc.wantBal)
			}
		})
	}
}
