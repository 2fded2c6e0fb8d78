package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
)

// Wire enums are pkg/cards' numbers plus one (docs/protocol-contracts.md).
func domainCard(c commonv1.Card) cards.Card {
	if c < commonv1.Card_CARD_JOKER_1 || c > commonv1.Card_CARD_ACE_OF_CLUBS {
		return cards.NoCard
	}
	return cards.Card(c - 1)
}

func domainSuit(s commonv1.Suit) cards.Suit {
	if s < commonv1.Suit_SUIT_SPADES || s > commonv1.Suit_SUIT_NONE {
		return cards.NoSuit
	}
	return cards.Suit(s - 1)
}

func domainCards(cs []commonv1.Card) cards.Set {
	var s cards.Set
	for _, c := range cs {
		if d := domainCard(c); d != cards.NoCard {
			s = s.With(d)
		}
	}
	return s
}

// trickCard is a card on the table in the current trick, as a player sees it.
type trickCard struct {
	seat   int
	card   cards.Card
	action tablev1.JokerAction
	suit   cards.Suit
}

// seatModel is what one player knows of a table, built only from the event
// frames the player received: its own cards, the public cards, whose turn
// it is. It chooses a legal move from that knowledge alone — the test of
// "legal moves chosen from what each client sees": a rule the model gets
// wrong shows up as a MoveRejected, and a hidden card the model would need
// shows up as a card it does not have.
type seatModel struct {
	table, player string
	japanese      bool
	seat          int
	rng           cards.RNG

	hand    cards.Set
	faceUp  cards.Set // Japanese: my face-up column cards
	myFirst bool      // Japanese: I have not played a card this hand
	cardsN  int
	dealer  int
	bids    [classic.Seats]int
	trump   cards.Suit
	trick   []trickCard

	pending  bool // my turn, waiting for my move
	turnSeq  uint64
	phase    tablev1.Phase
	over     bool
	joined   bool
	answered map[uint64]bool
	moves    int
}

func newSeatModel(table, player string, seed uint64) *seatModel {
	return &seatModel{table: table, player: player, seat: -1, rng: cards.NewRNG(seed, 7),
		answered: map[uint64]bool{}}
}

// observe applies one event the player received.
func (m *seatModel) observe(ev *tablev1.Event) {
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted:
		m.japanese = e.GameStarted.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE
		for _, sp := range e.GameStarted.GetSeats() {
			if sp.GetPlayerId() == m.player {
				m.seat = int(sp.GetSeat())
			}
		}
	case *tablev1.Event_PlayerSeated:
		if e.PlayerSeated.GetSeat().GetPlayerId() == m.player {
			m.seat = int(e.PlayerSeated.GetSeat().GetSeat())
		}
	case *tablev1.Event_SeatTakenByBot:
		if int(e.SeatTakenByBot.GetSeat()) == m.seat {
			m.pending = false
		}
	case *tablev1.Event_HandStarted:
		h := e.HandStarted
		m.hand, m.faceUp, m.myFirst, m.trick = 0, 0, true, nil
		m.cardsN, m.dealer, m.trump = int(h.GetCardsPerSeat()), int(h.GetDealerSeat()), cards.NoSuit
		for i := range m.bids {
			m.bids[i] = -1
		}
	case *tablev1.Event_Dealt:
		if int(e.Dealt.GetSeat()) == m.seat {
			m.hand |= domainCards(e.Dealt.GetCards())
		}
	case *tablev1.Event_TrumpTurned:
		m.trump = domainSuit(e.TrumpTurned.GetTrump())
	case *tablev1.Event_TrumpChosen:
		m.trump = domainSuit(e.TrumpChosen.GetTrump())
		m.pending = false
	case *tablev1.Event_ColumnsDealt:
		if int(e.ColumnsDealt.GetSeat()) == m.seat {
			m.faceUp |= domainCards(e.ColumnsDealt.GetFaceUp())
		}
	case *tablev1.Event_ColumnCardRevealed:
		if int(e.ColumnCardRevealed.GetSeat()) == m.seat {
			m.hand = m.hand.With(domainCard(e.ColumnCardRevealed.GetCard()))
		}
	case *tablev1.Event_BidMade:
		m.bids[e.BidMade.GetSeat()] = int(e.BidMade.GetTricks())
		m.pending = false
	case *tablev1.Event_CardPlayed:
		p := e.CardPlayed
		c := domainCard(p.GetCard())
		m.trick = append(m.trick, trickCard{seat: int(p.GetSeat()), card: c,
			action: p.GetDeclaration().GetAction(), suit: domainSuit(p.GetDeclaration().GetSuit())})
		if int(p.GetSeat()) == m.seat {
			m.hand, m.faceUp, m.myFirst = m.hand.Without(c), m.faceUp.Without(c), false
		}
		m.pending = false
	case *tablev1.Event_TrickWon:
		m.trick = nil
	case *tablev1.Event_TimerStarted:
		m.pending = int(e.TimerStarted.GetSeat()) == m.seat
		m.turnSeq, m.phase = ev.GetSeq(), e.TimerStarted.GetPhase()
	case *tablev1.Event_GameEnded:
		m.over, m.pending = true, false
	}
}

// decide returns the frame of this player's move when it is its turn and
// it has not answered this turn yet.
func (m *seatModel) decide() map[string]any {
	if !m.joined || !m.pending || m.answered[m.turnSeq] || m.over {
		return nil
	}
	m.answered[m.turnSeq] = true
	// The key names the turn: a client that resends after a reconnect
	// sends the same command, which the table applies once.
	msg := map[string]any{"table": m.table, "cmd": fmt.Sprintf("turn-%d", m.turnSeq)}
	switch m.phase {
	case tablev1.Phase_PHASE_CHOOSE_TRUMP:
		s := classic.ChooseTrumpFor(m.hand)
		if m.japanese {
			s = japanese.ChooseTrumpFor(m.hand)
		}
		msg["type"], msg["suit"] = "trump", suitWord(s)
	case tablev1.Phase_PHASE_BID:
		msg["type"], msg["tricks"] = "bid", m.chooseBid()
	case tablev1.Phase_PHASE_PLAY:
		m.choosePlay(msg)
	default:
		return nil
	}
	m.moves++
	return msg
}

func suitWord(s cards.Suit) string {
	if s == cards.NoSuit {
		return "none"
	}
	return s.String()
}

// chooseBid bids low (so that hands are made, missed and khishti'd alike),
// never the dealer's forbidden number.
func (m *seatModel) chooseBid() int {
	forbidden := -1
	if m.seat == m.dealer {
		rest := 0
		for s, b := range m.bids {
			if s != m.seat && b > 0 {
				rest += b
			}
		}
		forbidden = m.cardsN - rest
	}
	for {
		b := m.rng.IntN(min(m.cardsN, 3) + 1)
		if b != forbidden {
			return b
		}
	}
}

// legal is the set of cards the player may play now, by the follow rules
// of rules.md as the player can apply them to what it sees.
func (m *seatModel) legal() cards.Set {
	avail := m.hand
	if m.japanese && !m.myFirst {
		avail |= m.faceUp
	}
	if len(m.trick) == 0 {
		return avail
	}
	lead := m.trick[0]
	jokers := avail.Jokers()
	if m.japanese {
		if lead.card.IsJoker() {
			if s := avail.OfSuit(lead.suit); s != 0 {
				return s.Highest().Bit() | jokers
			}
			if lead.suit != m.trump {
				if t := avail.OfSuit(m.trump); t != 0 {
					return t | jokers
				}
			}
			return avail
		}
		if s := avail.OfSuit(lead.card.Suit()); s != 0 {
			return s | jokers
		}
		if t := avail.OfSuit(m.trump); t != 0 {
			return t | jokers
		}
		return avail
	}
	led, highest := lead.card.Suit(), false
	if lead.card.IsJoker() {
		led, highest = lead.suit, lead.action == tablev1.JokerAction_JOKER_ACTION_HIGHEST
	}
	if of := avail.OfSuit(led); of != 0 {
		if highest {
			return jokers | of.Highest().Bit()
		}
		return jokers | of
	}
	if tr := avail.OfSuit(m.trump); tr != 0 {
		return jokers | tr
	}
	return avail
}

// choosePlay fills msg with a random legal card (and a joker declaration).
func (m *seatModel) choosePlay(msg map[string]any) {
	set := m.legal()
	cs := set.Cards()
	if len(cs) == 0 {
		// Nothing the player knows of is playable: send a card anyway so
		// that the table's answer (a MoveRejected) shows the gap.
		msg["type"], msg["card"] = "play", "AS"
		return
	}
	c := cs[m.rng.IntN(len(cs))]
	msg["type"], msg["card"] = "play", c.String()
	if !c.IsJoker() {
		return
	}
	suit := cards.Suits[m.rng.IntN(len(cards.Suits))].String()
	switch {
	case len(m.trick) > 0:
		action := "take"
		if !m.japanese && m.rng.IntN(3) == 0 {
			action = "discard"
		}
		msg["joker"] = map[string]string{"action": action}
	case m.japanese || m.rng.IntN(2) == 0:
		msg["joker"] = map[string]string{"action": "highest", "suit": suit}
	default:
		msg["joker"] = map[string]string{"action": "give", "suit": suit}
	}
}

// observe feeds an event frame to the table's model; c.mu is held. A move
// the model decides on is written by the caller after the lock is released.
func (c *client) observe(wc *wsConn, f *frame) map[string]any {
	m := c.models[f.Table]
	if m == nil {
		m = newSeatModel(f.Table, c.ses.Player.ID, uint64(len(c.name))*7919+uint64(c.name[len(c.name)-1]))
		c.models[f.Table] = m
	}
	m.observe(f.ev)
	if !c.auto[f.Table] || c.cur != wc {
		return nil
	}
	return m.decide()
}

// wake marks table joined on the connection and returns a pending move.
func (c *client) wake(wc *wsConn, table string) map[string]any {
	m := c.models[table]
	if m == nil {
		m = newSeatModel(table, c.ses.Player.ID, uint64(len(c.name))*7919+uint64(c.name[len(c.name)-1]))
		c.models[table] = m
	}
	m.joined = c.cur == wc
	if !c.auto[table] || !m.joined {
		return nil
	}
	return m.decide()
}

// autoPlay turns auto-play on or off for table; turning it on answers a
// turn that is already pending.
func (c *client) autoPlay(table string, on bool) {
	c.mu.Lock()
	c.auto[table] = on
	var msg map[string]any
	wc := c.cur
	if on && wc != nil {
		if m := c.models[table]; m != nil && m.joined {
			msg = m.decide()
		}
	}
	c.mu.Unlock()
	c.write(wc, msg)
}

// write sends a move decided by the model (from the reader goroutine, so
// failures are reported with Errorf: Fatal may only stop the test's own
// goroutine).
func (c *client) write(wc *wsConn, msg map[string]any) {
	if msg == nil || wc == nil {
		return
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Errorf("%s: %v", c.name, err)
		return
	}
	c.mu.Lock()
	c.sent = append(c.sent, sentCommand{Table: fmt.Sprint(msg["table"]), Key: fmt.Sprint(msg["cmd"]), Move: string(b)})
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wc.ws.Write(ctx, websocket.MessageText, b); err != nil {
		// The connection may be closing under a test's disconnect: the
		// move is then simply not sent, as with a real client.
		c.mu.Lock()
		gone := c.cur != wc
		c.mu.Unlock()
		if !gone {
			c.t.Errorf("%s: write a move: %v", c.name, err)
		}
	}
}

// commandsSent returns the full command ids (player/key) of the moves the
// client sent to table.
func (c *client) commandsSent(table string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.sent {
		if s.Table == table {
			out = append(out, c.ses.Player.ID+"/"+s.Key)
		}
	}
	return out
}

// model returns a copy of the player's model of table.
func (c *client) model(table string) seatModel {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.models[table]; m != nil {
		return *m
	}
	return seatModel{seat: -1}
}
