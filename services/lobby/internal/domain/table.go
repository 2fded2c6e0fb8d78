package domain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/names"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// Status is where a table is in its life.
type Status uint8

// The statuses.
const (
	Waiting Status = iota + 1
	Playing
	// Finished: the game ended, or the table was closed before it began
	// (everybody left). A finished table is never listed.
	Finished
)

// Limits on what players type, in characters (runes), never bytes: a
// Georgian letter is three bytes and counts as one.
const (
	MaxNameRunes        = 64
	MaxDisplayNameRunes = 32
	MaxPasswordRunes    = 64
)

// Player is the sender of a command, as the gateway authenticated it.
type Player struct {
	ID   string
	Name string
	// Guest is true for a guest session: guests play free tables only.
	Guest bool
}

// Seat is one seat: free, a player, or a bot.
type Seat struct {
	PlayerID string
	Name     string
	Bot      bool
}

// Free reports whether nobody sits there.
func (s Seat) Free() bool { return s.PlayerID == "" && !s.Bot }

// Table is one table as the lobby keeps it.
type Table struct {
	ID       string
	Name     string
	Settings Settings
	Seats    []Seat
	Status   Status
	// Host may fill the seats with bots. It passes to a seated player when
	// the host leaves a waiting table.
	Host      string
	CreatedAt time.Time
	// PasswordHash is the argon2id hash of the password ("" for none). It
	// is never part of a summary or a start message.
	PasswordHash string
	// SeatsEventSeq is the seq of the last table event the seats show
	// (SeatChanged), so that an older change read late is ignored.
	SeatsEventSeq uint64
}

// Hasher hashes a password for storage.
type Hasher func(password string) (string, error)

// Verifier reports whether password matches a stored hash.
type Verifier func(hash, password string) (bool, error)

// NewTable validates a CreateTable command from host and builds the table.
// Everything is validated before hash is called, so an invalid request
// costs no hashing.
func NewTable(id string, host Player, c *lobbyv1.CreateTable, now time.Time, hash Hasher) (*Table, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: create_table is empty", ErrInvalidCommand)
	}
	name, err := cleanName(c.GetName())
	if err != nil {
		return nil, err
	}
	pw := c.GetPassword()
	if err := checkPassword(pw); err != nil {
		return nil, err
	}
	s, err := ParseSettings(c.GetSettings(), pw != "")
	if err != nil {
		return nil, err
	}
	if s.Coins() && host.Guest {
		return nil, fmt.Errorf("%w: guests play free tables only; register to play for Domino Coin", ErrAccountRequired)
	}
	t := &Table{
		ID: id, Name: name, Settings: s, Seats: make([]Seat, s.Seats()),
		Status: Waiting, Host: host.ID, CreatedAt: now.UTC().Truncate(time.Millisecond),
	}
	if pw != "" {
		if t.PasswordHash, err = hash(pw); err != nil {
			return nil, fmt.Errorf("hash password: %w", err)
		}
	}
	if c.GetSitDown() {
		t.Seats[0] = Seat{PlayerID: host.ID, Name: displayName(host.Name)}
	}
	return t, nil
}

func cleanName(n string) (string, error) {
	n = strings.TrimSpace(n)
	if !utf8.ValidString(n) {
		return "", invalid("name", "not valid UTF-8")
	}
	if utf8.RuneCountInString(n) > MaxNameRunes {
		return "", invalid("name", fmt.Sprintf("longer than %d characters", MaxNameRunes))
	}
	if strings.IndexFunc(n, unicode.IsControl) >= 0 {
		return "", invalid("name", "contains control characters")
	}
	if names.Check(n) != nil {
		return "", invalid("name", "contains invisible formatting characters (bidi controls, zero-width characters)")
	}
	return n, nil
}

// checkPassword: a table password is at most MaxPasswordRunes characters of
// valid UTF-8 without control characters, and not only spaces (which nobody
// could tell from no password). Empty means none.
func checkPassword(pw string) error {
	switch {
	case pw == "":
		return nil
	case !utf8.ValidString(pw):
		return invalid("password", "not valid UTF-8")
	case utf8.RuneCountInString(pw) > MaxPasswordRunes:
		return invalid("password", fmt.Sprintf("longer than %d characters", MaxPasswordRunes))
	case strings.IndexFunc(pw, unicode.IsControl) >= 0:
		return invalid("password", "contains control characters")
	case strings.TrimSpace(pw) == "":
		return invalid("password", "only spaces")
	}
	return nil
}

// displayName makes a gateway-supplied name safe to show: trimmed, without
// control characters, bounded; "Player" when nothing is left.
func displayName(n string) string {
	n = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || names.Hidden(r) { // the shared name rule (pkg/names)
			return -1
		}
		return r
	}, strings.TrimSpace(n))
	if r := []rune(n); len(r) > MaxDisplayNameRunes {
		n = string(r[:MaxDisplayNameRunes])
	}
	if n == "" {
		return "Player"
	}
	return n
}

// BotName is the name shown for a bot in seat i.
func BotName(seat int) string { return "Bot " + strconv.Itoa(seat+1) }

// SeatOf returns the seat playerID holds (or owns while a bot plays it for
// them), or -1.
func (t *Table) SeatOf(playerID string) int {
	for i, s := range t.Seats {
		// A bot's seat has a player only while it plays for them (SeatChanged).
		if playerID != "" && s.PlayerID == playerID {
			return i
		}
	}
	return -1
}

// Full reports whether every seat is taken (by players or bots).
func (t *Table) Full() bool {
	for _, s := range t.Seats {
		if s.Free() {
			return false
		}
	}
	return true
}

// Listed reports whether the table belongs in the public lobby list.
func (t *Table) Listed() bool {
	return t.Settings.Visibility == Public && t.Status != Finished
}

// SitDown seats p at seat. A player already seated here moves to the new
// seat without giving the password again.
func (t *Table) SitDown(p Player, seat uint32, password string, verify Verifier) error {
	if t.Status != Waiting {
		return fmt.Errorf("%w: take a seat through the table once the game runs", ErrAlreadyStarted)
	}
	if seat >= uint32(len(t.Seats)) {
		return fmt.Errorf("%w: seat %d does not exist (this table has %d)", ErrSeatUnavailable, seat, len(t.Seats))
	}
	if t.Settings.Coins() && p.Guest {
		// Before the password: a guest's guess at a coin table costs no hash.
		return fmt.Errorf("%w: guests play free tables only; register to sit at a Domino Coin table", ErrAccountRequired)
	}
	current := t.SeatOf(p.ID)
	if t.PasswordHash != "" && current < 0 {
		if password == "" {
			return fmt.Errorf("%w: this table needs a password", ErrWrongPassword)
		}
		if checkPassword(password) != nil {
			// No password the table could have: refused without hashing.
			return ErrWrongPassword
		}
		ok, err := verify(t.PasswordHash, password)
		if err != nil {
			return fmt.Errorf("check password: %w", err)
		}
		if !ok {
			return ErrWrongPassword
		}
	}
	if int(seat) == current {
		return nil
	}
	if !t.Seats[seat].Free() {
		return fmt.Errorf("%w: seat %d is taken", ErrSeatUnavailable, seat)
	}
	if current >= 0 {
		t.Seats[current] = Seat{}
	}
	t.Seats[seat] = Seat{PlayerID: p.ID, Name: displayName(p.Name)}
	return nil
}

// StandUp frees playerID's seat at a waiting table.
func (t *Table) StandUp(playerID string) error {
	if t.Status != Waiting {
		return fmt.Errorf("%w: leave through the table once the game runs", ErrAlreadyStarted)
	}
	i := t.SeatOf(playerID)
	if i < 0 {
		return ErrNotSeated
	}
	t.Seats[i] = Seat{}
	return nil
}

// LeaveOutcome says what leaving did besides the seat.
type LeaveOutcome struct {
	// Closed: the table was waiting and nobody is left to play: it is
	// finished and leaves the list.
	Closed bool
	// TellRunner: the game runs and the player held a seat; the table's
	// runner must hear of it (a bot takes a classic seat, a Japanese match
	// is lost).
	TellRunner bool
}

// Leave takes playerID away from the table. Before the game it frees their
// seat and, when the host leaves, passes the host to the first seated
// player, or closes the table when nobody is seated. During a classic game a
// bot takes their seat. Leaving a table one does not sit at is allowed and
// changes nothing (a watcher going away).
func (t *Table) Leave(playerID string) (LeaveOutcome, error) {
	i := t.SeatOf(playerID)
	switch t.Status {
	case Waiting:
		if i >= 0 {
			t.Seats[i] = Seat{}
		}
		if playerID != t.Host {
			return LeaveOutcome{}, nil
		}
		for _, s := range t.Seats {
			if !s.Free() && !s.Bot {
				t.Host = s.PlayerID
				return LeaveOutcome{}, nil
			}
		}
		t.Status = Finished
		return LeaveOutcome{Closed: true}, nil
	case Playing:
		if i < 0 {
			return LeaveOutcome{}, nil
		}
		if t.Settings.Game == tablesettings.Classic {
			t.Seats[i] = Seat{Bot: true, Name: BotName(i)}
		}
		return LeaveOutcome{TellRunner: true}, nil
	default:
		return LeaveOutcome{}, nil
	}
}

// FillWithBots seats bots in every free seat of a waiting classic table.
// Only the host may, and only once somebody sits there: a table of bots
// alone is nobody's game.
func (t *Table) FillWithBots(playerID string) error {
	if t.Settings.Game != tablesettings.Classic {
		return fmt.Errorf("%w: Japanese tables have no bots", ErrNotAllowed)
	}
	if t.Status != Waiting {
		return ErrAlreadyStarted
	}
	if playerID != t.Host {
		return ErrNotHost
	}
	seated := false
	for _, s := range t.Seats {
		seated = seated || (!s.Free() && !s.Bot)
	}
	if !seated {
		return fmt.Errorf("%w: sit down before filling the table with bots", ErrNotAllowed)
	}
	for i, s := range t.Seats {
		if s.Free() {
			t.Seats[i] = Seat{Bot: true, Name: BotName(i)}
		}
	}
	return nil
}

// SeatChanged shows who plays seat i of a running classic game since the
// table's event eventSeq: its player (taking the seat back), or a bot, for
// good (playerID empty: the player left) or for playerID until they come
// back (their grace ran out; they still own the seat, and may leave it). A
// change no newer than one shown already, or about a table not playing,
// changes nothing.
func (t *Table) SeatChanged(i uint32, playerID, name string, bot bool, eventSeq uint64) error {
	if int(i) >= len(t.Seats) {
		return fmt.Errorf("%w: seat %d of %d", ErrInvalidCommand, i, len(t.Seats))
	}
	if t.Status != Playing || t.Settings.Game != tablesettings.Classic || eventSeq <= t.SeatsEventSeq {
		return nil
	}
	t.SeatsEventSeq = eventSeq
	if bot {
		t.Seats[i] = Seat{PlayerID: playerID, Bot: true, Name: BotName(int(i))}
		return nil
	}
	t.Seats[i] = Seat{PlayerID: playerID, Name: displayName(name)}
	return nil
}

// Seated lists the players (not bots) who sit at the table, each once.
func (t *Table) Seated() []string {
	var out []string
	for _, s := range t.Seats {
		if s.PlayerID != "" && !s.Bot && !slices.Contains(out, s.PlayerID) {
			out = append(out, s.PlayerID)
		}
	}
	return out
}

// Members are the players a waiting table holds: its host and the players
// seated there, each once. They count against each one's waiting tables
// (Limits.WaitingPerPlayer). A table that is not waiting holds nobody.
func (t *Table) Members() []string {
	if t.Status != Waiting {
		return nil
	}
	out := make([]string, 0, len(t.Seats)+1)
	if t.Host != "" {
		out = append(out, t.Host)
	}
	for _, s := range t.Seats {
		if s.PlayerID != "" && !s.Bot && !slices.Contains(out, s.PlayerID) {
			out = append(out, s.PlayerID)
		}
	}
	return out
}

// Expire closes a waiting table nobody changed for the waiting TTL: it is
// finished and leaves the list, like a table whose last player left.
func (t *Table) Expire() error {
	if t.Status != Waiting {
		return ErrAlreadyStarted
	}
	t.Status = Finished
	return nil
}

// Finish marks the game over; finishing twice is harmless.
func (t *Table) Finish() { t.Status = Finished }

// Start marks a full waiting table as playing and returns the start message
// for the assigner. gameID names the game; it must be random (it is public).
func (t *Table) Start(now time.Time, gameID string, trace *commonv1.TraceContext) (*lobbyv1.TableStarted, error) {
	if t.Status != Waiting {
		return nil, ErrAlreadyStarted
	}
	if !t.Full() {
		return nil, fmt.Errorf("%w: the table has free seats", ErrNotAllowed)
	}
	t.Status = Playing
	return &lobbyv1.TableStarted{
		TableId:      t.ID,
		Name:         t.Name,
		Settings:     t.Settings.Proto(),
		Seats:        t.seatsProto(),
		GameId:       gameID,
		HostPlayerId: t.Host,
		CreatedAt:    timestamppb.New(t.CreatedAt),
		StartedAt:    timestamppb.New(now.UTC()),
		Trace:        trace,
	}, nil
}

func (t *Table) seatsProto() []*lobbyv1.Seat {
	out := make([]*lobbyv1.Seat, len(t.Seats))
	for i, s := range t.Seats {
		out[i] = &lobbyv1.Seat{Index: uint32(i), PlayerId: s.PlayerID, DisplayName: s.Name, Bot: s.Bot}
	}
	return out
}

// Summary is the table as listed and as returned to players; never the
// password hash.
func (t *Table) Summary() *lobbyv1.TableSummary {
	st := lobbyv1.TableStatus_TABLE_STATUS_UNSPECIFIED
	switch t.Status {
	case Waiting:
		st = lobbyv1.TableStatus_TABLE_STATUS_WAITING
	case Playing:
		st = lobbyv1.TableStatus_TABLE_STATUS_PLAYING
	case Finished:
		st = lobbyv1.TableStatus_TABLE_STATUS_FINISHED
	}
	return &lobbyv1.TableSummary{
		TableId:       t.ID,
		Name:          t.Name,
		Settings:      t.Settings.Proto(),
		Seats:         t.seatsProto(),
		Status:        st,
		HostPlayerId:  t.Host,
		CreatedAt:     timestamppb.New(t.CreatedAt),
		SeatsEventSeq: t.SeatsEventSeq,
	}
}

// FromSummary rebuilds a stored table from its summary and password hash.
func FromSummary(s *lobbyv1.TableSummary, passwordHash string) (*Table, error) {
	settings, err := ParseSettings(s.GetSettings(), s.GetSettings().GetHasPassword())
	if err != nil {
		return nil, fmt.Errorf("stored table %s: %w", s.GetTableId(), err)
	}
	t := &Table{
		ID: s.GetTableId(), Name: s.GetName(), Settings: settings,
		Seats: make([]Seat, settings.Seats()), Host: s.GetHostPlayerId(),
		CreatedAt: s.GetCreatedAt().AsTime(), PasswordHash: passwordHash,
		SeatsEventSeq: s.GetSeatsEventSeq(),
	}
	switch s.GetStatus() {
	case lobbyv1.TableStatus_TABLE_STATUS_WAITING:
		t.Status = Waiting
	case lobbyv1.TableStatus_TABLE_STATUS_PLAYING:
		t.Status = Playing
	case lobbyv1.TableStatus_TABLE_STATUS_FINISHED:
		t.Status = Finished
	default:
		return nil, fmt.Errorf("stored table %s: unknown status %v", t.ID, s.GetStatus())
	}
	if len(s.GetSeats()) != len(t.Seats) {
		return nil, fmt.Errorf("stored table %s: %d seats, want %d", t.ID, len(s.GetSeats()), len(t.Seats))
	}
	for i, seat := range s.GetSeats() {
		if seat.GetIndex() != uint32(i) {
			return nil, fmt.Errorf("stored table %s: seat %d has index %d", t.ID, i, seat.GetIndex())
		}
		t.Seats[i] = Seat{PlayerID: seat.GetPlayerId(), Name: seat.GetDisplayName(), Bot: seat.GetBot()}
	}
	if settings.HasPassword != (passwordHash != "") {
		return nil, fmt.Errorf("stored table %s: has_password %v but hash present %v", t.ID, settings.HasPassword, passwordHash != "")
	}
	return t, nil
}
