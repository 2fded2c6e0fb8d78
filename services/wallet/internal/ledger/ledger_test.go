package ledger_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

func standings(table string, lines ...string) *scoringv1.FinalStandings {
	fs := &scoringv1.FinalStandings{TableId: table, GameId: "g1"}
	for i, l := range lines { // "player:place"
		p, place, _ := strings.Cut(l, ":")
		n, _ := strconv.Atoi(place)
		fs.Standings = append(fs.Standings, &scoringv1.Standing{Seat: uint32(i), Place: uint32(n), PlayerId: p})
	}
	return fs
}

func shares(gs *walletv1.GameSettled) string {
	var b strings.Builder
	for _, s := range gs.GetShares() {
		fmt.Fprintf(&b, "%s=%d ", s.GetAccountId(), s.GetAmount())
	}
	fmt.Fprintf(&b, "pot=%d unclaimed=%d", gs.GetPot(), gs.GetUnclaimed())
	return b.String()
}

func TestPlan_Rules(t *testing.T) {
	c := func(a string, n int64, forfeited bool) ledger.Collected {
		return ledger.Collected{Account: a, Amount: n, Forfeited: forfeited}
	}
	for _, tt := range []struct {
		rule      string
		game      tablesettings.Game
		fs        *scoringv1.FinalStandings
		collected []ledger.Collected
		want      string
	}{
		{"the pot is every stake collected, paid by the classic table", tablesettings.Classic,
			standings("t", "a:1", "b:2", "c:3", "d:4"),
			[]ledger.Collected{c("a", 100, false), c("b", 100, false), c("c", 100, false), c("d", 100, false)},
			"a=200 b=120 c=80 pot=400 unclaimed=0"},
		{"a forfeited stake stays in the pot for the players who stayed", tablesettings.Classic,
			standings("t", "a:1", "b:2", "c:3", "d:4"),
			[]ledger.Collected{c("a", 100, true), c("b", 100, false), c("c", 100, false), c("d", 100, false)},
			"b=200 c=120 d=80 pot=400 unclaimed=0"},
		{"a bot (no player id) wins nothing", tablesettings.Classic,
			standings("t", ":1", "b:2", ":3", "d:4"),
			[]ledger.Collected{c("b", 50, false), c("d", 50, false)},
			"b=63 d=37 pot=100 unclaimed=0"},
		{"a player without a stake wins nothing", tablesettings.Japanese,
			standings("t", "a:1", "b:2"), []ledger.Collected{c("b", 10, false)},
			"b=10 pot=10 unclaimed=0"},
		{"a holder missing from the standings pays into the pot", tablesettings.Japanese,
			standings("t", "a:1", "b:2"), []ledger.Collected{c("a", 10, false), c("b", 10, false), c("z", 10, false)},
			"a=30 pot=30 unclaimed=0"},
		{"nobody eligible: the pot is unclaimed", tablesettings.Japanese,
			standings("t", "a:1", "b:2"), []ledger.Collected{c("a", 10, true), c("b", 10, true)},
			"pot=20 unclaimed=20"},
		{"no stakes: nothing to pay (a free table)", tablesettings.Classic,
			standings("t", "a:1", "b:2", "c:3", "d:4"), nil, "pot=0 unclaimed=0"},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			gs, err := ledger.Plan(tt.game, tt.fs, tt.collected)
			if err != nil {
				t.Fatal(err)
			}
			if got := shares(gs); got != tt.want {
				t.Fatalf("plan %s, want %s", got, tt.want)
			}
		})
	}
	if _, err := ledger.Plan(tablesettings.Japanese, standings("t", "a:1", "b:2", "c:3"), nil); err == nil {
		t.Fatal("three standings for a Japanese pot were planned")
	}
}

func TestValidate_Refusals(t *testing.T) {
	hold := func(account, table string, amount int64, g lobbyv1.Game) *walletv1.WalletCommand {
		return &walletv1.WalletCommand{CommandId: "c1", Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{
			AccountId: account, TableId: table, Amount: amount, Game: g}}}
	}
	classic := lobbyv1.Game_GAME_CLASSIC
	for _, tt := range []struct {
		rule string
		cmd  *walletv1.WalletCommand
		want walletv1.WalletRejectReason
	}{
		{"a valid hold passes", hold("ana", "t1", 10, classic), 0},
		{"no command id", &walletv1.WalletCommand{Command: hold("a", "t", 1, classic).Command}, walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"a command id may not start with ~ (the wallet's own steps)", &walletv1.WalletCommand{CommandId: "~pay:t", Command: hold("a", "t", 1, classic).Command}, walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"an account id of the wallet's own", hold("~forfeit", "t1", 10, classic), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"an account id that would break the hash tag", hold("a}b", "t1", 10, classic), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"a table id with a colon", hold("ana", "t:1", 10, classic), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"a zero stake", hold("ana", "t1", 0, classic), walletv1.WalletRejectReason_WALLET_REJECT_REASON_INVALID_AMOUNT},
		{"a stake above MaxAmount", hold("ana", "t1", ledger.MaxAmount+1, classic), walletv1.WalletRejectReason_WALLET_REJECT_REASON_INVALID_AMOUNT},
		{"a hold without a game", hold("ana", "t1", 10, lobbyv1.Game_GAME_UNSPECIFIED), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"no command", &walletv1.WalletCommand{CommandId: "c"}, walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"PayOut is not carried out", &walletv1.WalletCommand{CommandId: "c", Command: &walletv1.WalletCommand_PayOut{PayOut: &walletv1.PayOut{}}}, walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNSUPPORTED}, //nolint:staticcheck // refusing the deprecated command is the rule tested
		{"standings with a seat twice", settle(&scoringv1.FinalStandings{TableId: "t", GameId: "g", Standings: []*scoringv1.Standing{{Seat: 0, Place: 1}, {Seat: 0, Place: 2}}}), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"standings with a player twice", settle(&scoringv1.FinalStandings{TableId: "t", GameId: "g", Standings: []*scoringv1.Standing{{Seat: 0, Place: 1, PlayerId: "a"}, {Seat: 1, Place: 2, PlayerId: "a"}}}), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"standings with place 0", settle(&scoringv1.FinalStandings{TableId: "t", GameId: "g", Standings: []*scoringv1.Standing{{Seat: 0, Place: 0}}}), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"five standings", settle(standings("t", "a:1", "b:2", "c:3", "d:4", "e:5")), walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED},
		{"valid standings pass", settle(standings("t", "a:1", ":2")), 0},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			r := ledger.Validate(tt.cmd)
			switch {
			case tt.want == 0 && r != nil:
				t.Fatalf("refused: %v", r)
			case tt.want != 0 && (r == nil || r.Reason != tt.want):
				t.Fatalf("got %v, want %s", r, tt.want)
			}
		})
	}
}

func settle(fs *scoringv1.FinalStandings) *walletv1.WalletCommand {
	return &walletv1.WalletCommand{CommandId: "s", Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}}
}

func TestDigest_IgnoresIdReplyAndTraceButNotContent(t *testing.T) {
	a := &walletv1.WalletCommand{CommandId: "1", ReplyTo: "x", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: "ana"}}}
	b := &walletv1.WalletCommand{CommandId: "2", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: "ana"}}}
	c := &walletv1.WalletCommand{CommandId: "1", Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: "beso"}}}
	if ledger.Digest(a) != ledger.Digest(b) || ledger.Digest(a) == ledger.Digest(c) {
		t.Fatal("digest depends on the wrong things")
	}
}

// The model's own rules, named: what the store must match.
func TestModel_Rules(t *testing.T) {
	m := ledger.NewModel(1000, 100)
	n := 0
	do := func(c *walletv1.WalletCommand, day string) *walletv1.WalletResult {
		if c.CommandId == "" {
			n++
			c.CommandId = fmt.Sprint("c", n)
		}
		return m.Apply(c, day)
	}
	open := func(a string) *walletv1.WalletCommand {
		return &walletv1.WalletCommand{Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: a}}}
	}
	bonus := func(a string) *walletv1.WalletCommand {
		return &walletv1.WalletCommand{Command: &walletv1.WalletCommand_ClaimDailyBonus{ClaimDailyBonus: &walletv1.ClaimDailyBonus{AccountId: a}}}
	}
	hold := func(a, t string, x int64) *walletv1.WalletCommand {
		return &walletv1.WalletCommand{Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: a, TableId: t, Amount: x, Game: lobbyv1.Game_GAME_JAPANESE}}}
	}
	avail := func(a string) int64 { b, _ := m.Balance(a); return b.GetAvailable() }
	day := "2026-12-05"
	if r := do(open("ana"), day); !r.GetAccepted() || avail("ana") != 1000 {
		t.Fatalf("sign-up grant: %v", r)
	}
	if r := do(open("ana"), day); r.GetReason() != walletv1.WalletRejectReason_WALLET_REJECT_REASON_ACCOUNT_EXISTS {
		t.Fatalf("second sign-up: %v", r)
	}
	do(bonus("ana"), day)
	if r := do(bonus("ana"), day); r.GetReason() != walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED || avail("ana") != 1100 {
		t.Fatalf("daily bonus twice a day: %v", r)
	}
	if r := do(bonus("ana"), "2026-12-06"); !r.GetAccepted() || avail("ana") != 1200 {
		t.Fatalf("daily bonus the next day: %v", r)
	}
	if r := do(hold("ana", "t", 5000), day); r.GetReason() != walletv1.WalletRejectReason_WALLET_REJECT_REASON_INSUFFICIENT_FUNDS || avail("ana") != 1200 {
		t.Fatalf("hold beyond the balance: %v", r)
	}
	h := hold("ana", "t", 200)
	do(h, day)
	if r := do(h, day); !r.GetDuplicate() || avail("ana") != 1000 {
		t.Fatalf("a repeated hold changes nothing: %v", r)
	}
	conflict := hold("ana", "t", 300)
	conflict.CommandId = h.GetCommandId()
	if r := do(conflict, day); r.GetReason() != walletv1.WalletRejectReason_WALLET_REJECT_REASON_CONFLICT {
		t.Fatalf("same id, other content: %v", r)
	}
	do(open("beso"), day)
	do(hold("beso", "t", 200), day)
	r := do(settle(standings("t", "beso:1", "ana:2")), day)
	if !r.GetAccepted() || avail("beso") != 1200 || avail("ana") != 1000 || m.Issued() != 2200 {
		t.Fatalf("settlement: %v", r)
	}
	if r := do(hold("ana", "t", 10), day); r.GetReason() != walletv1.WalletRejectReason_WALLET_REJECT_REASON_TABLE_CLOSED {
		t.Fatalf("a hold at a settled table: %v", r)
	}
}
