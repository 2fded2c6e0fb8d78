package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pulka/pulka/pkg/cards"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/wsclient"
)

const playHelp = `usage: pulkactl play [--server URL] (--table ID | --create classic|japanese [--bots]) [--auto]

Plays a game at a running Pulka (the gateway's HTTP API and WebSocket) from the
terminal, as a guest (or with --token). --create makes a table and sits you at
it; --bots fills the other classic seats with bots so the game starts at once;
a Japanese table waits for an opponent (pulkactl play --table ID). --table sits
you at the first free seat of a table (or follows it as a watcher when none is
free).

Type your moves when it is your turn:
  bid 2            trump H | trump none
  play AS          play 10H
  play JK1 take    play JK1 discard          (a joker following a trick)
  play JK1 highest H    play JK1 give H      (a joker leading; Japanese: highest)
  legal            view            quit

--auto plays legal moves by itself (the baseline on what your seat sees) and
prints the result at the end. --record FILE writes the game's record
(docs/game-record.md), built from the events received, when it ends; check
it with pulkactl verify FILE.

flags:
`

// playFlags are play's settings.
type playFlags struct {
	server, table, create, variant, token string
	record                                string
	target                                uint
	bots, auto, quiet                     bool
	timeout                               time.Duration
}

func runPlay(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var f playFlags
	fs := flag.NewFlagSet("play", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.server, "server", "http://localhost:8080", "the gateway's address")
	fs.StringVar(&f.table, "table", "", "play at this table")
	fs.StringVar(&f.create, "create", "", "create a table: classic or japanese")
	fs.StringVar(&f.variant, "variant", "standard", "classic variant of a created table: standard or nines")
	fs.UintVar(&f.target, "target", 11, "Japanese target of a created table: 11, 15, 21 or 31")
	fs.BoolVar(&f.bots, "bots", false, "fill the other seats of a created classic table with bots")
	fs.BoolVar(&f.auto, "auto", false, "play legal moves automatically")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the table id and the result")
	fs.StringVar(&f.token, "token", "", "a session token to play as (default: a new guest)")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.StringVar(&f.record, "record", "", "write the game's record to this file when it ends")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), playHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("play: unexpected arguments %q", fs.Args()))
	}
	if (f.table == "") == (f.create == "") {
		return usageError(errors.New("play: give exactly one of --table and --create"))
	}
	if f.create != "" && f.create != "classic" && f.create != "japanese" {
		return usageError(fmt.Errorf("play: --create %q: classic or japanese", f.create))
	}
	if f.bots && f.create != "classic" {
		return usageError(errors.New("play: --bots needs --create classic (Japanese has no bots)"))
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	api := &wsclient.API{Server: f.server, Token: f.token}
	if api.Token == "" {
		s, err := api.Guest(ctx)
		if err != nil {
			return fmt.Errorf("play: guest session: %w", err)
		}
		api.Token = s.Token
	}
	table, err := takeSeat(ctx, api, f)
	if err != nil {
		return fmt.Errorf("play: %w", err)
	}
	out := stdout
	if f.quiet {
		out = io.Discard
	}
	fmt.Fprintf(stdout, "table %s\n", table)
	conn, err := wsclient.Dial(ctx, f.server, wsclient.Options{Token: api.Token, Reconnect: true})
	if err != nil {
		return fmt.Errorf("play: %w", err)
	}
	defer func() { _ = conn.Close() }()
	m := wsclient.NewModel(table, conn.Player().ID)
	rec := &gameRecorder{path: f.record, table: table}
	if f.auto {
		p := &wsclient.Player{Conn: conn, Table: table, Model: m, OnFrame: func(fr wsclient.Frame) {
			rec.add(fr)
			if fr.Type == wire.TypeEvent && fr.Table == table {
				if line := describe(m, fr.Event); line != "" && !seedRefusal(conn, fr) {
					fmt.Fprintln(out, line)
				}
				if r := fr.Event.GetHandRevealed(); r != nil {
					fmt.Fprintln(out, verified(conn, table, r.GetHandIndex()))
				}
			}
		}}
		if err := p.Run(ctx); err != nil {
			return fmt.Errorf("play: %w", err)
		}
		fmt.Fprint(stdout, result(m))
		return rec.write(stdout)
	}
	if err := playInteractive(ctx, conn, m, rec, stdin, stdout); err != nil {
		return err
	}
	return rec.write(stdout)
}

// takeSeat creates the table or sits at the given one; it returns its id.
func takeSeat(ctx context.Context, api *wsclient.API, f playFlags) (string, error) {
	if f.create != "" {
		settings := wsclient.ClassicSettings()
		switch {
		case f.create == "japanese":
			settings = wsclient.JapaneseSettings(uint32(f.target))
		case f.variant == "nines":
			settings.ClassicVariant = lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES
		case f.variant != "standard":
			return "", fmt.Errorf("--variant %q: standard or nines", f.variant)
		}
		id, err := api.CreateTable(ctx, wsclient.CreateTable{Name: "pulkactl " + f.create, Settings: settings, SitDown: true}, wsclient.NewKey())
		if err != nil {
			return "", fmt.Errorf("create table: %w", err)
		}
		if f.bots {
			if err := api.FillBots(ctx, id, wsclient.NewKey()); err != nil {
				return "", fmt.Errorf("fill with bots: %w", err)
			}
		}
		return id, nil
	}
	ts, err := api.Table(ctx, f.table)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", f.table, err)
	}
	seats := 4
	if ts.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE {
		seats = 2
	}
	taken := map[uint32]bool{}
	for _, s := range ts.GetSeats() {
		if s.GetPlayerId() != "" || s.GetBot() {
			taken[s.GetIndex()] = true
		}
	}
	for s := range seats {
		if taken[uint32(s)] {
			continue
		}
		err := api.Sit(ctx, f.table, s, "", wsclient.NewKey())
		if err == nil || !wsclient.IsCode(err, "seat_unavailable") {
			if err != nil && !wsclient.IsCode(err, "already_started") {
				return "", fmt.Errorf("sit at %s: %w", f.table, err)
			}
			return f.table, nil
		}
	}
	return f.table, nil // no free seat: watch
}

// playInteractive shows the table and reads the player's moves.
func playInteractive(ctx context.Context, conn *wsclient.Conn, m *wsclient.Model, rec *gameRecorder, stdin io.Reader, stdout io.Writer) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	if _, err := conn.Join(ctx, m.TableID, ""); err != nil {
		return fmt.Errorf("play: %w", err)
	}
	joined, prompted, again := false, uint64(0), false
	for {
		if joined && m.MyTurn() && (prompted != m.LastSeq || again) {
			if prompted != m.LastSeq {
				fmt.Fprint(stdout, view(m))
			}
			prompted, again = m.LastSeq, false
			fmt.Fprintf(stdout, "your move (%s)> ", hint(m))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case fr, ok := <-conn.Frames():
			if !ok {
				return fmt.Errorf("play: connection ended: %w", conn.Err())
			}
			switch fr.Type {
			case wire.TypeEvent:
				if fr.Table != m.TableID {
					continue
				}
				rec.add(fr)
				m.Apply(fr.Event)
				if line := describe(m, fr.Event); line != "" && joined && !seedRefusal(conn, fr) {
					fmt.Fprintln(stdout, line)
				}
				if r := fr.Event.GetHandRevealed(); r != nil && joined {
					fmt.Fprintln(stdout, verified(conn, m.TableID, r.GetHandIndex()))
				}
				if m.Over {
					fmt.Fprint(stdout, result(m))
					return nil
				}
			case wire.TypeJoined:
				joined = true
				fmt.Fprint(stdout, view(m))
			case wire.TypeError:
				fmt.Fprintf(stdout, "gateway: %v\n", fr.Err)
			case wsclient.TypeReconnected:
				fmt.Fprintf(stdout, "(reconnected after: %v)\n", fr.Err)
			}
		case line, ok := <-lines:
			if !ok {
				return errors.New("play: input ended before the game")
			}
			sent, err := typed(ctx, conn, m, strings.TrimSpace(line), stdout)
			if err != nil {
				return err
			}
			again = !sent // ask again until a move is sent

		}
	}
}

// errQuit ends an interactive game at the player's request.
var errQuit = &ExitError{Code: exitOK}

// typed handles one line the player typed; sent says a move went out.
func typed(ctx context.Context, conn *wsclient.Conn, m *wsclient.Model, line string, stdout io.Writer) (sent bool, err error) {
	switch strings.ToLower(line) {
	case "":
		return false, nil
	case "quit", "exit":
		return false, errQuit
	case "view":
		fmt.Fprint(stdout, view(m))
		return false, nil
	case "legal":
		fmt.Fprintln(stdout, legalText(m))
		return false, nil
	}
	mv, err := wsclient.ParseMove(line)
	if err != nil {
		fmt.Fprintf(stdout, "%v\n", err)
		return false, nil
	}
	if !m.MyTurn() {
		fmt.Fprintln(stdout, "it is not your turn")
		return false, nil
	}
	// A table from before legal moves sends none: the table alone decides.
	if legal := m.Legal(); len(legal) > 0 && !slices.ContainsFunc(legal, func(l wsclient.Move) bool { return l.String() == mv.String() }) {
		fmt.Fprintf(stdout, "%s is not legal now; legal: %s\n", mv, legalText(m))
		return false, nil
	}
	if _, err := conn.Move(ctx, m.TableID, mv, fmt.Sprintf("s%d", m.LastSeq)); err != nil {
		fmt.Fprintf(stdout, "not sent: %v\n", err)
		return false, nil
	}
	return true, nil
}

func legalText(m *wsclient.Model) string {
	var b []string
	for _, mv := range m.Legal() {
		b = append(b, mv.String())
	}
	if len(b) == 0 {
		return "(not your turn)"
	}
	return strings.Join(b, ", ")
}

// hint is the short form of what may be typed now: the moves the table
// sent, shortened.
func hint(m *wsclient.Model) string {
	var words []string
	for _, mv := range m.Legal() {
		switch mv.Kind {
		case wsclient.MoveTrump:
			words = append(words, strings.TrimPrefix(mv.String(), "trump "))
		case wsclient.MoveBid:
			words = append(words, strings.TrimPrefix(mv.String(), "bid "))
		case wsclient.MovePlay:
			if w := mv.Card.String(); !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	switch m.Phase {
	case tablev1.Phase_PHASE_CHOOSE_TRUMP:
		return "trump " + strings.Join(words, "|")
	case tablev1.Phase_PHASE_BID:
		return "bid " + strings.Join(words, "|")
	}
	return "play " + strings.Join(words, "|")
}

// name is how seat s is shown to the model's player.
func name(m *wsclient.Model, s int) string {
	if s == m.MySeat {
		return "you"
	}
	if s >= 0 && s < len(m.Seats) && m.Seats[s].Name != "" {
		return m.Seats[s].Name
	}
	return fmt.Sprintf("seat %d", s)
}

func suitText(s cards.Suit, known bool) string {
	switch {
	case !known:
		return "?"
	case !s.Valid():
		return "none"
	}
	return s.String()
}

// view draws the table as the player sees it.
func view(m *wsclient.Model) string {
	var b strings.Builder
	game := "classic"
	if m.Japanese() {
		game = "japanese"
	}
	fmt.Fprintf(&b, "── %s · %s · hand %d (%d cards) · dealer %s · trump %s", m.TableID, game, m.HandIndex+1,
		m.CardsPerSeat, name(m, m.Dealer), suitText(m.Trump, m.TrumpKnown))
	if m.TurnedCard.Valid() {
		fmt.Fprintf(&b, " (turned %s)", m.TurnedCard)
	}
	b.WriteString("\n")
	for s := range m.Seats {
		bid := "-"
		if m.Bids[s] >= 0 {
			bid = fmt.Sprint(m.Bids[s])
		}
		marker := " "
		if s == m.Turn {
			marker = ">"
		}
		fmt.Fprintf(&b, " %s %-16s bid %-2s tricks %-2d points %d", marker, name(m, s), bid, m.Tricks[s], m.Points[s])
		if len(m.Columns[s]) > 0 {
			var cs []string
			for i, c := range m.Columns[s] {
				switch {
				case c.Valid():
					cs = append(cs, c.String())
				case m.FaceDown[s][i]:
					cs = append(cs, "##")
				default:
					cs = append(cs, "··")
				}
			}
			fmt.Fprintf(&b, "  columns %s", strings.Join(cs, " "))
		}
		b.WriteString("\n")
	}
	if len(m.Trick) > 0 {
		var t []string
		for _, p := range m.Trick {
			t = append(t, name(m, p.Seat)+" "+playedText(p.Card, p.Joker))
		}
		fmt.Fprintf(&b, "   trick: %s\n", strings.Join(t, ", "))
	}
	if m.MySeat >= 0 {
		fmt.Fprintf(&b, "   your hand: %s\n", m.Hand)
	}
	return b.String()
}

func playedText(c cards.Card, d *tablev1.JokerDeclaration) string {
	s := c.String()
	if c.IsJoker() && d != nil {
		s += " " + strings.ToLower(strings.TrimPrefix(d.GetAction().String(), "JOKER_ACTION_"))
		if su, ok := d.GetSuit(), d.GetSuit() != 0; ok {
			s += " " + strings.TrimPrefix(su.String(), "SUIT_")
		}
	}
	return s
}

// describe is one line about an event for the player, "" for events not
// worth a line (deals, timers).
func describe(m *wsclient.Model, ev *tablev1.Event) string {
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted:
		var ns []string
		for s := range m.Seats {
			ns = append(ns, name(m, s))
		}
		return "game started: " + strings.Join(ns, ", ")
	case *tablev1.Event_HandStarted:
		return fmt.Sprintf("hand %d: %d cards, %s deals", e.HandStarted.GetHandIndex()+1, e.HandStarted.GetCardsPerSeat(), name(m, int(e.HandStarted.GetDealerSeat())))
	case *tablev1.Event_TrumpTurned:
		return fmt.Sprintf("trump card %s", m.TurnedCard)
	case *tablev1.Event_TrumpChosen:
		return fmt.Sprintf("%s chose trump %s", name(m, int(e.TrumpChosen.GetSeat())), suitText(m.Trump, m.TrumpKnown))
	case *tablev1.Event_BidMade:
		return fmt.Sprintf("%s bid %d", name(m, int(e.BidMade.GetSeat())), e.BidMade.GetTricks())
	case *tablev1.Event_CardPlayed:
		c := e.CardPlayed
		return fmt.Sprintf("%s played %s", name(m, int(c.GetSeat())), playedText(m.Trick[len(m.Trick)-1].Card, c.GetDeclaration()))
	case *tablev1.Event_TrickWon:
		return fmt.Sprintf("%s took the trick", name(m, int(e.TrickWon.GetSeat())))
	case *tablev1.Event_HandEnded:
		var rs []string
		for _, r := range e.HandEnded.GetResults() {
			rs = append(rs, fmt.Sprintf("%s %d", name(m, int(r.GetSeat())), r.GetPoints()+r.GetPenalty()))
		}
		return "hand ended: " + strings.Join(rs, ", ")
	case *tablev1.Event_SeatTakenByBot:
		return fmt.Sprintf("a bot plays for %s", name(m, int(e.SeatTakenByBot.GetSeat())))
	case *tablev1.Event_PlayerSeated:
		return fmt.Sprintf("%s sat down", name(m, int(e.PlayerSeated.GetSeat().GetSeat())))
	case *tablev1.Event_MoveRejected:
		return "refused: " + e.MoveRejected.GetMessage()
	}
	return ""
}

// seedRefusal reports whether fr refuses a client seed the connection sent
// (another device of the player seeded the hand first, or it came late):
// not a move of the player's, and the hand's verify line says what it means.
func seedRefusal(conn *wsclient.Conn, fr wsclient.Frame) bool {
	return fr.Event.GetMoveRejected() != nil && conn.SeedCommand(fr.Table, fr.Event.GetCausedBy())
}

// verified is one line on whether a revealed hand checks out: its
// commitment, this client's seed when the table took it from this client,
// and the cards this client saw dealt against the revealed deck (the
// connection kept what it needs, wsclient.HandSeeds). "verified" is
// printed only when all of that passed.
func verified(conn *wsclient.Conn, table string, hand uint32) string {
	h, ok := conn.Hand(table, hand)
	if !ok {
		return fmt.Sprintf("hand %d revealed", hand+1)
	}
	v, err := h.Verify()
	if err != nil {
		return fmt.Sprintf("hand %d: DEAL NOT VERIFIED: %v", hand+1, err)
	}
	if !h.Deal.Started {
		// Committed a hand ahead and never dealt: the game ended first
		// (docs/fair-play.md). No card came from it.
		return fmt.Sprintf("hand %d: never dealt (the game ended first); its commitment verified", hand+1)
	}
	checked := []string{"commitment"}
	if v.OwnSeed {
		checked = append(checked, "your seed")
	}
	if v.Cards > 0 {
		checked = append(checked, fmt.Sprintf("your %d cards", v.Cards))
	}
	line := fmt.Sprintf("hand %d: deal verified (%s)", hand+1, strings.Join(checked, ", "))
	if h.Own == wsclient.OwnSeedElsewhere || h.Own == wsclient.OwnSeedLate {
		line += "; your seed: " + h.Own.String()
	}
	return line
}

// result is the final standings.
func result(m *wsclient.Model) string {
	var b strings.Builder
	end := m.End
	fmt.Fprintf(&b, "game over (%s) after %d hands\n", strings.ToLower(strings.TrimPrefix(end.GetReason().String(), "GAME_END_REASON_")), end.GetHandsPlayed())
	for _, p := range end.GetPlacings() {
		fmt.Fprintf(&b, "  %d. %-16s %d\n", p.GetPlace(), name(m, int(p.GetSeat())), p.GetScore())
	}
	return b.String()
}
