package domain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
)

var (
	now   = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	host  = Player{ID: "p-host", Name: "Giorgi"}
	nika  = Player{ID: "p-nika", Name: "Nika"}
	tamar = Player{ID: "p-tamar", Name: "Tamar"}
	levan = Player{ID: "p-levan", Name: "Levan"}
)

// fakeHash is reversible so tests can see what was hashed; the real argon2id
// lives in package password.
func fakeHash(pw string) (string, error) { return "H(" + pw + ")", nil }

func fakeVerify(hash, pw string) (bool, error) { return hash == "H("+pw+")", nil }

func noHash(string) (string, error) { panic("hash must not be called") }

func newTable(t *testing.T, s *lobbyv1.TableSettings, password string, sit bool) *Table {
	t.Helper()
	tb, err := NewTable("t1", host, &lobbyv1.CreateTable{Name: "Friday game", Settings: s, Password: password, SitDown: sit}, now, fakeHash)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestNewTable_HostSitsAtSeatZeroWhenAsked(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	if tb.SeatOf(host.ID) != 0 || tb.Seats[0].Name != "Giorgi" || tb.Status != Waiting || tb.Host != host.ID {
		t.Fatalf("table = %+v", tb)
	}
	tb = newTable(t, classicSettings(), "", false)
	if tb.SeatOf(host.ID) != -1 || len(tb.Seats) != 4 {
		t.Fatalf("host watching only: %+v", tb.Seats)
	}
	if j := newTable(t, japaneseSettings(), "", true); len(j.Seats) != 2 {
		t.Fatalf("japanese seats = %d", len(j.Seats))
	}
}

func TestNewTable_PasswordIsStoredHashedAndFlagged(t *testing.T) {
	tb := newTable(t, classicSettings(), "open sesame", true)
	if tb.PasswordHash != "H(open sesame)" || !tb.Settings.HasPassword {
		t.Fatalf("hash %q, has_password %v", tb.PasswordHash, tb.Settings.HasPassword)
	}
	b, _ := proto.Marshal(tb.Summary())
	if strings.Contains(string(b), "open sesame") || strings.Contains(string(b), "H(") {
		t.Fatal("the summary carries the password or its hash")
	}
}

func TestNewTable_InvalidRequestsAreRefusedBeforeHashing(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *lobbyv1.CreateTable
		want error
	}{
		{"empty command", nil, ErrInvalidCommand},
		{"bad settings", &lobbyv1.CreateTable{Settings: japaneseSettings(func(s *lobbyv1.TableSettings) { s.JapaneseTarget = 12 }), Password: "x"}, ErrInvalidSettings},
		{"long name", &lobbyv1.CreateTable{Name: strings.Repeat("ჯ", MaxNameRunes+1), Settings: classicSettings(), Password: "x"}, ErrInvalidSettings},
		{"control in name", &lobbyv1.CreateTable{Name: "a\x07b", Settings: classicSettings(), Password: "x"}, ErrInvalidSettings},
		{"invalid utf-8 name", &lobbyv1.CreateTable{Name: "\xff", Settings: classicSettings(), Password: "x"}, ErrInvalidSettings},
		{"long password", &lobbyv1.CreateTable{Settings: classicSettings(), Password: strings.Repeat("p", MaxPasswordRunes+1)}, ErrInvalidSettings},
		{"long password in characters", &lobbyv1.CreateTable{Settings: classicSettings(), Password: strings.Repeat("ჯ", MaxPasswordRunes+1)}, ErrInvalidSettings},
		{"password of spaces", &lobbyv1.CreateTable{Settings: classicSettings(), Password: "   "}, ErrInvalidSettings},
		{"control in password", &lobbyv1.CreateTable{Settings: classicSettings(), Password: "pa\x00ss"}, ErrInvalidSettings},
		{"invalid utf-8 password", &lobbyv1.CreateTable{Settings: classicSettings(), Password: "pa\xffss"}, ErrInvalidSettings},
		{"bidi override in name", &lobbyv1.CreateTable{Name: "abc\u202Edcba", Settings: classicSettings()}, ErrInvalidSettings},
		{"bidi isolate in name", &lobbyv1.CreateTable{Name: "a\u2067b", Settings: classicSettings()}, ErrInvalidSettings},
		{"left-to-right mark in name", &lobbyv1.CreateTable{Name: "a\u200Eb", Settings: classicSettings()}, ErrInvalidSettings},
		{"zero-width space in name", &lobbyv1.CreateTable{Name: "a\u200Bb", Settings: classicSettings()}, ErrInvalidSettings},
		{"byte order mark in name", &lobbyv1.CreateTable{Name: "\uFEFFab", Settings: classicSettings()}, ErrInvalidSettings},
		{"hangul filler name", &lobbyv1.CreateTable{Name: "\u3164\u3164", Settings: classicSettings()}, ErrInvalidSettings},
		{"line separator in name", &lobbyv1.CreateTable{Name: "a\u2028b", Settings: classicSettings()}, ErrInvalidSettings},
		{"coin stake off the ladder", &lobbyv1.CreateTable{Settings: classicSettings(func(s *lobbyv1.TableSettings) {
			s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 20}}}
		}), Password: "x"}, ErrInvalidSettings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable("t1", host, tc.c, now, noHash)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v; want %v", err, tc.want)
			}
		})
	}
}

func TestNewTable_NameIsTrimmedAndMayBeEmpty(t *testing.T) {
	tb, err := NewTable("t1", host, &lobbyv1.CreateTable{Name: "  ჯოკერი  ", Settings: classicSettings()}, now, noHash)
	if err != nil || tb.Name != "ჯოკერი" {
		t.Fatalf("%q, %v", tb.Name, err)
	}
	if _, err := NewTable("t1", host, &lobbyv1.CreateTable{Settings: classicSettings()}, now, noHash); err != nil {
		t.Fatalf("empty name: %v", err)
	}
}

func TestSitDown_WrongPasswordChangesNothing(t *testing.T) {
	tb := newTable(t, classicSettings(), "pw", true)
	before := tb.Summary()
	for _, pw := range []string{"", "PW", "pw "} {
		if err := tb.SitDown(nika, 1, pw, fakeVerify); !errors.Is(err, ErrWrongPassword) {
			t.Fatalf("password %q: err = %v", pw, err)
		}
	}
	if !proto.Equal(before, tb.Summary()) {
		t.Fatal("a refused sit-down changed the table")
	}
	if err := tb.SitDown(nika, 1, "pw", fakeVerify); err != nil || tb.SeatOf(nika.ID) != 1 {
		t.Fatalf("right password: %v, seat %d", err, tb.SeatOf(nika.ID))
	}
}

func TestSitDown_SeatedPlayerMovesWithoutPassword(t *testing.T) {
	tb := newTable(t, classicSettings(), "pw", false)
	if err := tb.SitDown(nika, 1, "pw", fakeVerify); err != nil {
		t.Fatal(err)
	}
	if err := tb.SitDown(nika, 3, "", fakeVerify); err != nil || tb.SeatOf(nika.ID) != 3 || !tb.Seats[1].Free() {
		t.Fatalf("move: %v, seats %+v", err, tb.Seats)
	}
	if err := tb.SitDown(nika, 3, "", fakeVerify); err != nil {
		t.Fatalf("sitting where one sits is a no-op: %v", err)
	}
}

func TestSitDown_TakenOrMissingSeatIsUnavailable(t *testing.T) {
	tb := newTable(t, japaneseSettings(), "", true)
	if err := tb.SitDown(nika, 0, "", fakeVerify); !errors.Is(err, ErrSeatUnavailable) {
		t.Fatalf("taken seat: %v", err)
	}
	if err := tb.SitDown(nika, 2, "", fakeVerify); !errors.Is(err, ErrSeatUnavailable) {
		t.Fatalf("seat 2 of a Japanese table: %v", err)
	}
}

func TestSitDown_StartedTableRefuses(t *testing.T) {
	tb := newTable(t, japaneseSettings(), "", true)
	must(t, tb.SitDown(nika, 1, "", fakeVerify))
	if _, err := tb.Start(now, "g7", nil); err != nil {
		t.Fatal(err)
	}
	if err := tb.SitDown(tamar, 1, "", fakeVerify); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("err = %v", err)
	}
	if err := tb.StandUp(nika.ID); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("stand up: %v", err)
	}
}

func TestStart_OnlyAFullWaitingTableStarts(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	if _, err := tb.Start(now, "g1", nil); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("start with free seats: %v", err)
	}
	for i, p := range []Player{nika, tamar, levan} {
		must(t, tb.SitDown(p, uint32(i+1), "", fakeVerify))
	}
	if !tb.Full() {
		t.Fatal("four players and not full")
	}
	msg, err := tb.Start(now.Add(time.Minute), "g0xdeadbeef", nil)
	if err != nil {
		t.Fatal(err)
	}
	if msg.GetGameId() != "g0xdeadbeef" || msg.GetTableId() != "t1" || len(msg.GetSeats()) != 4 || tb.Status != Playing {
		t.Fatalf("start = %v", msg)
	}
	for i, s := range msg.GetSeats() {
		if s.GetIndex() != uint32(i) || s.GetPlayerId() == "" || s.GetBot() {
			t.Errorf("seat %d = %v", i, s)
		}
	}
	if _, err := tb.Start(now, "g2", nil); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second start: %v", err)
	}
}

func TestFillWithBots_ClassicHostOnly(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.SitDown(nika, 2, "", fakeVerify))
	if err := tb.FillWithBots(nika.ID); !errors.Is(err, ErrNotHost) {
		t.Fatalf("non-host: %v", err)
	}
	must(t, tb.FillWithBots(host.ID))
	if !tb.Full() || !tb.Seats[1].Bot || !tb.Seats[3].Bot || tb.Seats[2].PlayerID != nika.ID || tb.Seats[1].Name != "Bot 2" {
		t.Fatalf("seats = %+v", tb.Seats)
	}
	msg, err := tb.Start(now, "g9", nil)
	if err != nil || !msg.GetSeats()[1].GetBot() || msg.GetSeats()[1].GetPlayerId() != "" {
		t.Fatalf("start = %v, %v", msg, err)
	}
}

func TestFillWithBots_RefusedForJapanese(t *testing.T) {
	tb := newTable(t, japaneseSettings(), "", true)
	if err := tb.FillWithBots(host.ID); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("err = %v", err)
	}
	if !tb.Seats[1].Free() {
		t.Fatal("a bot sat at a Japanese table")
	}
}

func TestFillWithBots_NeedsSomebodySeated(t *testing.T) {
	tb := newTable(t, classicSettings(), "", false)
	if err := tb.FillWithBots(host.ID); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("err = %v", err)
	}
}

func TestStandUp_FreesTheSeat(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	if err := tb.StandUp(nika.ID); !errors.Is(err, ErrNotSeated) {
		t.Fatalf("not seated: %v", err)
	}
	must(t, tb.StandUp(host.ID))
	if !tb.Seats[0].Free() || tb.Host != host.ID || tb.Status != Waiting {
		t.Fatalf("after stand up: %+v", tb)
	}
}

func TestLeave_HostPassesToASeatedPlayer(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.SitDown(nika, 2, "", fakeVerify))
	out, err := tb.Leave(host.ID)
	if err != nil || out.Closed || tb.Host != nika.ID || !tb.Seats[0].Free() {
		t.Fatalf("%+v %v host=%s", out, err, tb.Host)
	}
}

func TestLeave_LastPlayerClosesAWaitingTable(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.SitDown(nika, 1, "", fakeVerify))
	if out, _ := tb.Leave(nika.ID); out.Closed {
		t.Fatal("a guest leaving closed the host's table")
	}
	out, err := tb.Leave(host.ID)
	if err != nil || !out.Closed || tb.Status != Finished || tb.Listed() {
		t.Fatalf("%+v %v status %v", out, err, tb.Status)
	}
}

func TestLeave_DuringClassicGameABotTakesTheSeat(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.SitDown(nika, 1, "", fakeVerify))
	must(t, tb.FillWithBots(host.ID))
	if _, err := tb.Start(now, "g1", nil); err != nil {
		t.Fatal(err)
	}
	out, err := tb.Leave(nika.ID)
	if err != nil || !out.TellRunner || !tb.Seats[1].Bot || tb.Seats[1].PlayerID != "" || tb.Status != Playing {
		t.Fatalf("%+v %v seats %+v", out, err, tb.Seats)
	}
	if out, _ := tb.Leave("p-watcher"); out.TellRunner {
		t.Fatal("a watcher leaving bothers the runner")
	}
}

func TestLeave_DuringJapaneseMatchOnlyTellsTheRunner(t *testing.T) {
	tb := newTable(t, japaneseSettings(), "", true)
	must(t, tb.SitDown(nika, 1, "", fakeVerify))
	if _, err := tb.Start(now, "g1", nil); err != nil {
		t.Fatal(err)
	}
	out, err := tb.Leave(nika.ID)
	if err != nil || !out.TellRunner || tb.Seats[1].Bot || tb.Seats[1].PlayerID != nika.ID {
		t.Fatalf("%+v %v seats %+v", out, err, tb.Seats)
	}
}

func TestSummary_RoundTripsThroughFromSummary(t *testing.T) {
	tb := newTable(t, classicSettings(func(s *lobbyv1.TableSettings) {
		s.ClassicVariant = lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES
		s.Khishti = lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD
		s.Visibility = lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE
	}), "pw", true)
	must(t, tb.SitDown(nika, 2, "pw", fakeVerify))
	back, err := FromSummary(tb.Summary(), tb.PasswordHash)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(back.Summary(), tb.Summary()) || back.PasswordHash != tb.PasswordHash || !back.CreatedAt.Equal(tb.CreatedAt) {
		t.Fatalf("round trip:\n%v\n%v", back.Summary(), tb.Summary())
	}
	if _, err := FromSummary(tb.Summary(), ""); err == nil {
		t.Fatal("a password table without its hash was accepted")
	}
}

func TestListed_OnlyPublicUnfinishedTables(t *testing.T) {
	pub := newTable(t, classicSettings(), "", true)
	priv := newTable(t, classicSettings(func(s *lobbyv1.TableSettings) { s.Visibility = lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE }), "", true)
	if !pub.Listed() || priv.Listed() {
		t.Fatalf("public listed %v, private listed %v", pub.Listed(), priv.Listed())
	}
	pub.Finish()
	if pub.Listed() {
		t.Fatal("finished table listed")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSeatChanged_ABotTakesAClassicSeatAndItsPlayerTakesItBackInEventOrder(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.SitDown(nika, 1, "", fakeVerify))
	must(t, tb.FillWithBots(host.ID))
	if _, err := tb.Start(now, "g1", nil); err != nil {
		t.Fatal(err)
	}
	must(t, tb.SeatChanged(1, nika.ID, "", true, 40)) // the grace ran out
	if s := tb.Seats[1]; !s.Bot || s.PlayerID != nika.ID || s.Name != BotName(1) {
		t.Fatalf("after the bot took seat 1 for nika: %+v", s)
	}
	if tb.SeatOf(nika.ID) != 1 || tb.Seats[1].Free() {
		t.Fatal("nika no longer owns the seat a bot plays for her")
	}
	must(t, tb.SeatChanged(1, nika.ID, nika.Name, false, 55)) // back
	if s := tb.Seats[1]; s.Bot || s.PlayerID != nika.ID || s.Name != nika.Name {
		t.Fatalf("after nika took seat 1 back: %+v", s)
	}
	// Read late: the bot change of event 40 again, and an older one.
	must(t, tb.SeatChanged(1, "", "", true, 40))
	must(t, tb.SeatChanged(1, "", "", true, 12))
	if s := tb.Seats[1]; s.Bot || s.PlayerID != nika.ID {
		t.Fatalf("an older change overwrote a newer one: %+v", s)
	}
	if tb.SeatsEventSeq != 55 {
		t.Errorf("SeatsEventSeq = %d, want 55", tb.SeatsEventSeq)
	}
	back, err := FromSummary(tb.Summary(), tb.PasswordHash)
	if err != nil || back.SeatsEventSeq != 55 || back.Seats[1] != tb.Seats[1] {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if err := tb.SeatChanged(4, "", "", true, 60); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("seat 4 of a classic table: %v, want ErrInvalidCommand", err)
	}
}

func TestSeatChanged_ChangesNothingBeforeTheGameOrAtAJapaneseTable(t *testing.T) {
	waiting := newTable(t, classicSettings(), "", true)
	must(t, waiting.SeatChanged(0, "", "", true, 5))
	if waiting.Seats[0].Bot || waiting.Seats[0].PlayerID != host.ID {
		t.Fatalf("a waiting table's seat changed: %+v", waiting.Seats[0])
	}
	jp := newTable(t, japaneseSettings(), "", true)
	must(t, jp.SitDown(nika, 1, "", fakeVerify))
	if _, err := jp.Start(now, "g1", nil); err != nil {
		t.Fatal(err)
	}
	must(t, jp.SeatChanged(1, "", "", true, 5))
	if jp.Seats[1].Bot {
		t.Fatal("a bot took a Japanese seat")
	}
}

// A player whose seat a bot plays until they come back may still leave it:
// the leave reaches the runner, and the seat is the bot's for good.
func TestLeave_OfASeatABotPlaysForThePlayerGoesToTheRunner(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.SitDown(nika, 1, "", fakeVerify))
	must(t, tb.FillWithBots(host.ID))
	if _, err := tb.Start(now, "g1", nil); err != nil {
		t.Fatal(err)
	}
	must(t, tb.SeatChanged(1, nika.ID, "", true, 40))
	out, err := tb.Leave(nika.ID)
	if err != nil || !out.TellRunner {
		t.Fatalf("leave of a seat a bot plays for nika: %+v %v", out, err)
	}
	if s := tb.Seats[1]; !s.Bot || s.PlayerID != "" {
		t.Fatalf("after the leave: %+v", s)
	}
	if out, _ := tb.Leave(nika.ID); out.TellRunner {
		t.Fatal("a second leave still bothers the runner")
	}
}

func coinSettings(amount int64) *lobbyv1.TableSettings {
	return classicSettings(func(s *lobbyv1.TableSettings) {
		s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: amount}}}
	})
}

func TestNewTable_CoinTablesTakeTheLaddersStakesAndNoGuests(t *testing.T) {
	for _, stake := range []int64{10, 50, 100, 500, 1000} {
		tb, err := NewTable("t1", host, &lobbyv1.CreateTable{Settings: coinSettings(stake), SitDown: true}, now, noHash)
		if err != nil || !tb.Settings.Coins() || tb.Settings.Stake.Coins != stake {
			t.Fatalf("stake %d: %v %+v", stake, err, tb)
		}
		if got := tb.Summary().GetSettings().GetStake().GetCoins().GetAmount(); got != stake {
			t.Fatalf("summary stake %d, want %d", got, stake)
		}
	}
	for _, stake := range []int64{1, 20, 99, 5000} {
		_, err := NewTable("t1", host, &lobbyv1.CreateTable{Settings: coinSettings(stake)}, now, noHash)
		var se *SettingsError
		if !errors.As(err, &se) || se.Field != "stake" || !strings.Contains(se.Problem, "10, 50, 100, 500 or 1000") {
			t.Fatalf("stake %d: err = %v, want a stake refusal naming the ladder", stake, err)
		}
	}
	guest := Player{ID: "g-1", Name: "Guest-1", Guest: true}
	if _, err := NewTable("t1", guest, &lobbyv1.CreateTable{Settings: coinSettings(10)}, now, noHash); !errors.Is(err, ErrAccountRequired) {
		t.Fatalf("a guest's coin table: err = %v", err)
	}
	if _, err := NewTable("t1", guest, &lobbyv1.CreateTable{Settings: classicSettings(), SitDown: true}, now, noHash); err != nil {
		t.Fatalf("a guest's free table: %v", err)
	}
}

func TestSitDown_GuestsMayNotSitAtCoinTables(t *testing.T) {
	tb := newTable(t, coinSettings(50), "secret", true)
	guest := Player{ID: "g-1", Name: "Guest-1", Guest: true}
	// Refused before the password is checked: no hash for a guest's guess.
	err := tb.SitDown(guest, 1, "wrong", func(string, string) (bool, error) { panic("verified a guest's password") })
	if !errors.Is(err, ErrAccountRequired) || Reason(err) != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED {
		t.Fatalf("err = %v", err)
	}
	if !tb.Seats[1].Free() {
		t.Fatal("the guest took the seat")
	}
	if err := tb.SitDown(Player{ID: "u-2", Name: "Ana"}, 1, "secret", fakeVerify); err != nil {
		t.Fatalf("an account: %v", err)
	}
}

func TestReason_CoinRefusals(t *testing.T) {
	if Reason(ErrInsufficientFunds) != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INSUFFICIENT_FUNDS ||
		Reason(ErrAccountRequired) != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED {
		t.Fatal("coin refusals map to the wrong reasons")
	}
}
