package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// walletBinary builds cmd/wallet once per test run.
func walletBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wallet-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "wallet")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/wallet").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is the wallet running as its own process.
type proc struct {
	t    *testing.T
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
}

func startProc(t *testing.T, addr string) *proc {
	p := &proc{t: t, addr: addr}
	p.start()
	t.Cleanup(func() { p.stop(syscall.SIGTERM) })
	return p
}

func (p *proc) start() {
	p.t.Helper()
	cmd := exec.Command(walletBinary(p.t), "-consumer", "wallet-1", "-time-zone", "UTC",
		"-reclaim-idle", "1s", "-repair-grace", "1s", "-audit-interval", "1s")
	cmd.Env = append(os.Environ(), "PULKA_REDIS_ADDR="+p.addr, "PULKA_ADMIN_ADDR=127.0.0.1:0", "LOG_LEVEL=warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
}

func (p *proc) stop(sig syscall.Signal) {
	p.mu.Lock()
	cmd := p.cmd
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	_ = cmd.Wait()
}

// playAll sends the opens, then the games (32 tables at a time, each
// command twice), checking that each was applied once.
func playAll(t *testing.T, send func([]*walletv1.WalletCommand) map[string][]*walletv1.WalletResult, wl *workload, games int) []*walletv1.WalletCommand {
	t.Helper()
	all := wl.open()
	for id, rs := range send(all) {
		checkOnce(t, id, rs)
	}
	var list [][][]*walletv1.WalletCommand
	for i := range games {
		list = append(list, wl.game(i))
	}
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, g := range list {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			for _, ph := range g {
				res := send(ph)
				mu.Lock()
				for id, rs := range res {
					checkOnce(t, id, rs)
				}
				mu.Unlock()
			}
		})
		for _, ph := range g {
			all = append(all, ph...)
		}
	}
	wg.Wait()
	return all
}

// Issue 19, faults: the wallet process is SIGKILLed while a settlement is
// between its steps (Redis is paused for writes, a pot is seen settling,
// the process is killed, Redis resumes), three times, and restarted each
// time. Every sender retries with the same ids. After recovery the audit
// is clean, every game is paid exactly once and the ledger is the model's.
func TestFault_WalletKilledMidSettlement(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the wallet process")
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	p := startProc(t, srv.Addr())
	send, wl := faultLoad(t, rdb, 3)

	ctx := context.Background()
	w := newTestWallet(t, rdb, &clock{t: time.Now()}, 0)
	kills := make(chan []string, 1)
	stop := make(chan struct{})
	go func() {
		var killed []string
		defer func() { kills <- killed }()
		for len(killed) < 3 {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := rdb.Do(ctx, "CLIENT", "PAUSE", 2000, "WRITE").Err(); err != nil {
				t.Error(err)
				return
			}
			mid := ""
			tables, _ := w.st.Pots(ctx)
			for _, tb := range tables {
				if pot, err := w.st.ReadPot(ctx, tb); err == nil && pot.State == "settling" && !pot.Done && !slices.Contains(killed, tb) {
					mid = tb
					break
				}
			}
			if mid != "" {
				p.stop(syscall.SIGKILL)
			}
			if err := rdb.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
				t.Error(err)
				return
			}
			if mid != "" {
				killed = append(killed, mid)
				time.Sleep(300 * time.Millisecond)
				p.start()
			}
		}
	}()
	all := playAll(t, send, wl, 600)
	close(stop)
	killed := <-kills
	if len(killed) == 0 {
		t.Fatal("never caught a settlement between its steps")
	}
	t.Logf("killed the wallet mid-settlement of %v", killed)
	for _, tb := range killed {
		pot, err := w.st.ReadPot(ctx, tb)
		if err != nil || pot.State != "settled" || !pot.Done {
			t.Errorf("%s: after recovery %+v, %v", tb, pot, err)
		}
	}
	checkAgainstModel(t, ctx, w, rdb, all)
	checkSettledOnce(t, ctx, w, all)
}

// faultLoad is the senders of a fault test (four clients, each command sent
// twice or three times) and its workload of 60 accounts.
func faultLoad(t *testing.T, rdb *redis.Client, seed uint64) (func([]*walletv1.WalletCommand) map[string][]*walletv1.WalletResult, *workload) {
	cs := clients(t, rdb, 4, 3*time.Second)
	r := rand.New(rand.NewPCG(seed, 19))
	var mu sync.Mutex
	send := func(cmds []*walletv1.WalletCommand) map[string][]*walletv1.WalletResult {
		mu.Lock()
		rr := rand.New(rand.NewPCG(r.Uint64(), 1))
		mu.Unlock()
		return sendAll(t, rr, cs, cmds)
	}
	wl := &workload{r: rand.New(rand.NewPCG(seed+1, 19))}
	for i := range 60 {
		wl.accounts = append(wl.accounts, fmt.Sprintf("acc-%d", i))
	}
	return send, wl
}

// checkSettledOnce: each resolved table's settled stream holds one
// GameSettled.
func checkSettledOnce(t *testing.T, ctx context.Context, w *Wallet, all []*walletv1.WalletCommand) {
	t.Helper()
	want := map[string]bool{}
	for _, c := range all {
		switch x := c.GetCommand().(type) {
		case *walletv1.WalletCommand_SettleGame:
			want[x.SettleGame.GetStandings().GetTableId()] = true
		case *walletv1.WalletCommand_ReleaseTable:
			want[x.ReleaseTable.GetTableId()] = true
		}
	}
	for tb := range want {
		msgs, err := w.st.Client().XRange(ctx, walletclient.SettledStream(tb), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 {
			t.Errorf("%s published %d times", tb, len(msgs))
			continue
		}
		gs := &walletv1.GameSettled{}
		data, _ := msgs[0].Values["data"].(string)
		if err := proto.Unmarshal([]byte(data), gs); err != nil || gs.GetTableId() != tb {
			t.Errorf("%s: settled %v, %v", tb, gs, err)
		}
	}
}

// Issue 19, faults: Redis (append-only file, fsync always) is SIGKILLed
// and restarted twice while the wallet process and the senders run. After
// recovery the audit is clean and the ledger is the model's: nothing Redis
// acknowledged was lost, nothing retried was applied twice.
func TestFault_RedisRestartedMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the wallet and kills Redis")
	}
	srv := redistest.Start(t, redistest.WithPersistence())
	rdb := srv.Client(t)
	startProc(t, srv.Addr())
	send, wl := faultLoad(t, rdb, 5)
	stop := make(chan struct{})
	restarted := make(chan int, 1)
	go func() {
		n := 0
		defer func() { restarted <- n }()
		for n < 2 {
			select {
			case <-stop:
				return
			case <-time.After(700 * time.Millisecond):
			}
			if err := srv.Restart(); err != nil {
				t.Error(err)
				return
			}
			n++
		}
	}()
	all := playAll(t, send, wl, 500)
	close(stop)
	if n := <-restarted; n < 2 {
		t.Fatalf("Redis was restarted %d times; the run ended first", n)
	}
	ctx := context.Background()
	w := newTestWallet(t, rdb, &clock{t: time.Now()}, 0)
	checkAgainstModel(t, ctx, w, rdb, all)
	checkSettledOnce(t, ctx, w, all)
}
