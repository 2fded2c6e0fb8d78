package service

import (
	"fmt"
	"testing"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/services/lobby/internal/domain"
)

// planStakes by the rule that makes each wallet command (pure).
func TestPlanStakes_Rules(t *testing.T) {
	table := func(s *lobbyv1.TableSettings, status domain.Status, seated ...string) *domain.Table {
		set, err := domain.ParseSettings(s, false)
		if err != nil {
			t.Fatal(err)
		}
		tb := &domain.Table{ID: "t1", Settings: set, Seats: make([]domain.Seat, set.Seats()), Status: status, CreatedAt: time.Now()}
		for i, p := range seated {
			tb.Seats[i] = domain.Seat{PlayerID: p}
		}
		return tb
	}
	cmd := &lobbyv1.LobbyCommand{CommandId: "c1"}
	ana := domain.Player{ID: "u-ana"}
	describe := func(st stakes) string {
		out := ""
		if h := st.hold.GetHoldStake(); h != nil {
			out += fmt.Sprintf("hold %s %d %v created=%v;", h.GetAccountId(), h.GetAmount(), h.GetGame(), st.created)
		}
		for _, c := range st.after {
			switch x := c.GetCommand().(type) {
			case *walletv1.WalletCommand_ReleaseHold:
				out += "release " + x.ReleaseHold.GetAccountId() + ";"
			case *walletv1.WalletCommand_ReleaseTable:
				out += "release table " + c.GetCommandId() + ";"
			}
		}
		return out
	}
	for _, tc := range []struct {
		rule      string
		player    domain.Player
		wasSeated bool
		was       domain.Status
		t         *domain.Table
		created   bool
		want      string
	}{
		{"sitting at a coin table holds the stake", ana, false, domain.Waiting, table(coins(50), domain.Waiting, "u-host", "u-ana"), false, "hold u-ana 50 GAME_CLASSIC created=false;"},
		{"the seat that starts the table holds too", ana, false, domain.Waiting, table(coins(50), domain.Playing, "u-1", "u-2", "u-3", "u-ana"), false, "hold u-ana 50 GAME_CLASSIC created=false;"},
		{"a creation with the host seated holds at the new table", ana, false, domain.Waiting, table(coins(10), domain.Waiting, "u-ana"), true, "hold u-ana 10 GAME_CLASSIC created=true;"},
		{"a Japanese table's hold names its game", ana, false, domain.Waiting, table(japanese(21, func(s *lobbyv1.TableSettings) {
			s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 500}}}
		}), domain.Waiting, "u-ana"), false, "hold u-ana 500 GAME_JAPANESE created=false;"},
		{"moving seats holds nothing more", ana, true, domain.Waiting, table(coins(50), domain.Waiting, "", "u-ana"), false, ""},
		{"standing up releases the hold", ana, true, domain.Waiting, table(coins(50), domain.Waiting, "u-host"), false, "release u-ana;"},
		{"the last player leaving closes the table: every hold goes back", ana, true, domain.Waiting, table(coins(50), domain.Finished), false, "release table lobby:close:t1;"},
		{"a waiting table finished without a game releases the table", domain.Player{}, false, domain.Waiting, table(coins(50), domain.Finished), false, "release table lobby:close:t1;"},
		{"leaving a running game is the runner's forfeit, not the lobby's", ana, true, domain.Playing, table(coins(50), domain.Playing, "u-1", "u-2", "u-3"), false, ""},
		{"a finished game is settled by its standings", domain.Player{}, false, domain.Playing, table(coins(50), domain.Finished), false, ""},
		{"a free table sends the wallet nothing", ana, false, domain.Waiting, table(classic(), domain.Waiting, "u-host", "u-ana"), false, ""},
		{"a free table closing sends the wallet nothing", ana, true, domain.Waiting, table(classic(), domain.Finished), false, ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := describe(planStakes(cmd, tc.player, tc.wasSeated, tc.was, tc.t, tc.created)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// walletID: the same cause gives the same id, another cause another, and
// every id fits the wallet's 128 bytes without its reserved prefix.
func TestWalletID_DerivedFromTheCause(t *testing.T) {
	long := string(make([]byte, 300))
	a, b := walletID("hold", "t1", "cmd-1", "0"), walletID("hold", "t1", "cmd-1", "0")
	if a != b || a == walletID("hold", "t1", "cmd-1", "1") || a == walletID("hold", "t1", "cmd-2", "0") || a == walletID("hold", "t2", "cmd-1", "0") {
		t.Fatalf("ids %q %q are not a function of their cause", a, b)
	}
	if id := walletID("orphan", "abcdefghijklmnopqrstuvwxyz", long); len(id) > 128 || id[0] == '~' {
		t.Fatalf("id %q", id)
	}
}
