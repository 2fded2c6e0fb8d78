package domain

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/names"
)

// Limits are counted in characters: a Georgian letter is three bytes.
func TestLimits_NamesAndPasswordsCountCharactersNotBytes(t *testing.T) {
	for _, tc := range []struct {
		rule     string
		name, pw string
		ok       bool
	}{
		{"a name of the most characters, each three bytes", strings.Repeat("ჯ", MaxNameRunes), "", true},
		{"a name one character over", strings.Repeat("ჯ", MaxNameRunes+1), "", false},
		{"a password of the most characters, each three bytes", "", strings.Repeat("ჯ", MaxPasswordRunes), true},
		{"a password one character over", "", strings.Repeat("ჯ", MaxPasswordRunes+1), false},
		{"a one-character password", "", "x", true},
		{"a password with inner spaces", "", "open sesame", true},
		{"an emoji name", "♠ ♥ ♦ ♣", "", true},
		{"Georgian, Russian and Turkish letters", "ჯოკერი Джокер Şişli", "", true},
		{"a right-to-left mark hides nothing useful", "a\u200Fb", "", false},
		{"zero-width joiner", "a\u200Db", "", false},
		{"soft hyphen", "a\u00ADb", "", false},
		{"tag characters", "a\U000E0041b", "", false},
		{"braille blank", "\u2800", "", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, err := NewTable("t1", host, &lobbyv1.CreateTable{Name: tc.name, Settings: classicSettings(), Password: tc.pw}, now, fakeHash)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("err = %v, want ErrInvalidSettings", err)
			}
		})
	}
}

func TestSitDown_AGuessNoPasswordCouldBeIsRefusedWithoutHashing(t *testing.T) {
	tb := newTable(t, classicSettings(), "pw", true)
	noVerify := func(string, string) (bool, error) { panic("verify must not be called") }
	for _, pw := range []string{strings.Repeat("p", MaxPasswordRunes+1), "p\x00w", "\xff", "   "} {
		if err := tb.SitDown(nika, 1, pw, noVerify); !errors.Is(err, ErrWrongPassword) {
			t.Fatalf("guess %q: err = %v", pw, err)
		}
	}
}

func TestSitDown_AVerifierRefusalIsTheRefusal(t *testing.T) {
	tb := newTable(t, classicSettings(), "pw", true)
	limited := func(string, string) (bool, error) {
		return false, &LimitError{Err: ErrTooManyGuesses, Scope: "table", RetryAfter: 1500 * time.Millisecond}
	}
	err := tb.SitDown(nika, 1, "pw", limited)
	if !errors.Is(err, ErrTooManyGuesses) || Reason(err) != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES {
		t.Fatalf("err = %v, reason %v", err, Reason(err))
	}
	if RetryAfter(err) != 1500*time.Millisecond || !strings.Contains(err.Error(), "try again in 2 s") {
		t.Fatalf("retry after %v, message %q", RetryAfter(err), err)
	}
	if tb.SeatOf(nika.ID) >= 0 {
		t.Fatal("a throttled guess took the seat")
	}
}

func TestReason_Limits(t *testing.T) {
	for _, tc := range []struct {
		err   error
		want  lobbyv1.LobbyRejectReason
		retry time.Duration
	}{
		{ErrTooManyWaiting, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES, 0},
		{&LimitError{Err: ErrTooManyCreations, Scope: "player", RetryAfter: time.Minute}, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED, time.Minute},
		{&LimitError{Err: ErrTooManyGuesses, Scope: "table", RetryAfter: time.Second}, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES, time.Second},
		{&LimitError{Err: ErrTooManyCommands, Scope: "player", RetryAfter: 2 * time.Second}, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED, 2 * time.Second},
		{&LimitError{Err: ErrTooManyCoinSits, Scope: "player", RetryAfter: 3 * time.Second}, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED, 3 * time.Second},
		{errors.New("redis down"), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNSPECIFIED, 0},
	} {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if got := RetryAfter(tc.err); got != tc.retry {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.err, got, tc.retry)
		}
	}
}

func TestMembers_AWaitingTableHoldsItsHostAndSeatedPlayersOnce(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true) // host at seat 0
	if got := tb.Members(); !slices.Equal(got, []string{host.ID}) {
		t.Fatalf("host seated: %v", got)
	}
	must(t, tb.SitDown(nika, 2, "", fakeVerify))
	if got := tb.Members(); !slices.Equal(got, []string{host.ID, nika.ID}) {
		t.Fatalf("with nika: %v", got)
	}
	watching := newTable(t, classicSettings(), "", false)
	if got := watching.Members(); !slices.Equal(got, []string{host.ID}) {
		t.Fatalf("a host who only watches still holds the table: %v", got)
	}
	must(t, tb.SitDown(tamar, 1, "", fakeVerify))
	must(t, tb.FillWithBots(host.ID)) // bots hold nothing; the table starts
	if _, err := tb.Start(now, "g", nil); err != nil {
		t.Fatal(err)
	}
	if got := tb.Members(); got != nil {
		t.Fatalf("a playing table holds nobody: %v", got)
	}
}

func TestExpire_ClosesOnlyAWaitingTable(t *testing.T) {
	tb := newTable(t, classicSettings(), "", true)
	must(t, tb.Expire())
	if tb.Status != Finished || tb.Listed() || tb.Members() != nil {
		t.Fatalf("expired table: status %v listed %v members %v", tb.Status, tb.Listed(), tb.Members())
	}
	playing := newTable(t, japaneseSettings(), "", true)
	must(t, playing.SitDown(nika, 1, "", fakeVerify))
	if _, err := playing.Start(now, "g", nil); err != nil {
		t.Fatal(err)
	}
	if err := playing.Expire(); !errors.Is(err, ErrAlreadyStarted) || playing.Status != Playing {
		t.Fatalf("expiring a running game: %v, status %v", err, playing.Status)
	}
}

func TestDisplayName_InvisibleCharactersAreDropped(t *testing.T) {
	if got := displayName("Ni\u202Eka\u200B"); got != "Nika" {
		t.Fatalf("display name %q", got)
	}
	if got := displayName("\u2066\u2069"); got != "Player" {
		t.Fatalf("only invisible: %q", got)
	}
}

// FuzzNewTable_AcceptedNamesAndPasswordsKeepTheLimits: whatever a client
// sends, an accepted table's name is at most MaxNameRunes characters of
// valid UTF-8 with nothing invisible or controlling in it, and its password
// at most MaxPasswordRunes characters.
func FuzzNewTable_AcceptedNamesAndPasswordsKeepTheLimits(f *testing.F) {
	for _, seed := range []string{"", "ჯოკერი", "a\u202Eb", "\u200B", strings.Repeat("ჯ", 65), " x ", "\xff"} {
		f.Add(seed, seed)
	}
	f.Fuzz(func(t *testing.T, name, pw string) {
		var hashed string
		tb, err := NewTable("t1", host, &lobbyv1.CreateTable{Name: name, Settings: classicSettings(), Password: pw}, now,
			func(p string) (string, error) { hashed = p; return "h", nil })
		if err != nil {
			if !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("refused with %v", err)
			}
			if hashed != "" {
				t.Fatal("a refused table was hashed")
			}
			return
		}
		if !utf8.ValidString(tb.Name) || utf8.RuneCountInString(tb.Name) > MaxNameRunes ||
			strings.IndexFunc(tb.Name, func(r rune) bool { return unicode.IsControl(r) || names.Hidden(r) }) >= 0 {
			t.Fatalf("accepted name %q", tb.Name)
		}
		if utf8.RuneCountInString(pw) > MaxPasswordRunes || (pw != "") != tb.Settings.HasPassword {
			t.Fatalf("accepted password %q (has_password %v)", pw, tb.Settings.HasPassword)
		}
	})
}
