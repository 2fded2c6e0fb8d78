package table

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// handWatch is what the fairness check knows of one hand from the events
// alone, as any client could.
type handWatch struct {
	commitment []byte
	dealt      bool
	ended      bool
	cards      [classic.Seats]cards.Set // every card given privately to each seat
	faceUp     [japanese.Seats][]commonCard
	dealer     int
	n          int
}

type commonCard = cards.Card

// fairCheck follows a game's events in order and checks the commit–reveal.
type fairCheck struct {
	tb    testing.TB
	t     *Table
	game  int
	hands map[uint32]*handWatch
	// open is the hand committed and not revealed (the hand in play or
	// waiting for its deal), ahead the one committed a hand ahead of it.
	open, ahead       *handWatch
	openIdx, aheadIdx uint32
	servers           map[fairdeal.ServerSeed]bool
	// candidates: every byte string, and every hex, base64 or decimal
	// reading of a string, that any event of the game carried so far —
	// earlier hands' reveals included; derived: values computed from the
	// revealed server seeds (see derive).
	candidates map[string]bool
	numbers    map[uint64]bool
	derived    map[[fairdeal.SeedSize]byte]bool
	// Counts, to show the property was exercised.
	revealed, withClientSeeds, tried int
}

func newFairCheck(tb testing.TB, t *Table, game int, servers map[fairdeal.ServerSeed]bool) *fairCheck {
	c := &fairCheck{tb: tb, t: t, game: game, hands: map[uint32]*handWatch{}, servers: servers,
		candidates: map[string]bool{}, numbers: map[uint64]bool{}, derived: map[[fairdeal.SeedSize]byte]bool{}}
	for _, id := range []string{t.ID(), t.GameID()} {
		c.addString(id)
	}
	return c
}

// documentedTags are every tag docs/fair-play.md names: a seed derived
// from a revealed one with any of them must not give a later hand.
var documentedTags = []string{entropyTag, "pulka/commit/v1", "pulka/deal/v1", "pulka/stream/v1", "pulka/local/v1"}

// derive adds what anyone can compute from a revealed server seed s with
// the documented constructions: SHA-256(s), SHA-256(tag || s) and
// HMAC-SHA256(s, tag || u32(n)) for the first hands n of a step (the
// server-seed tag) or n = 0, 1 (the others: no deal uses them so).
func (c *fairCheck) derive(s fairdeal.ServerSeed) {
	c.derived[sha256.Sum256(s[:])] = true
	for _, tag := range documentedTags {
		c.derived[sha256.Sum256(append([]byte(tag), s[:]...))] = true
		ns := uint32(2)
		if tag == entropyTag {
			ns = 8
		}
		for n := range ns {
			m := hmac.New(sha256.New, s[:])
			m.Write(binary.BigEndian.AppendUint32([]byte(tag), n))
			var x [fairdeal.SeedSize]byte
			m.Sum(x[:0])
			c.derived[x] = true
		}
	}
}

func (c *fairCheck) fail(e *tablev1.Event, format string, args ...any) {
	c.tb.Helper()
	c.tb.Fatalf("game %d, event %d (%s): "+format, append([]any{c.game, e.GetSeq(), kindOf(e)}, args...)...)
}

func (c *fairCheck) event(e *tablev1.Event) {
	// A reveal is checked against what came before it, then joins the
	// candidates of every later hand.
	defer c.collect(e.ProtoReflect())
	if a := e.GetSeedAccepted(); a != nil && (c.ahead == nil || a.GetHandIndex() != c.aheadIdx) {
		c.fail(e, "a seed riding on a move for hand %d, not the hand committed ahead", a.GetHandIndex())
	}
	switch x := e.GetEvent().(type) {
	case *tablev1.Event_HandCommitted:
		hc := x.HandCommitted
		if c.hands[hc.GetHandIndex()] != nil || len(hc.GetCommitment()) != fairdeal.SeedSize {
			c.fail(e, "hand %d committed twice, or a %d-byte commitment", hc.GetHandIndex(), len(hc.GetCommitment()))
		}
		w := &handWatch{commitment: hc.GetCommitment()}
		c.hands[hc.GetHandIndex()] = w
		switch {
		case c.open == nil:
			c.open, c.openIdx = w, hc.GetHandIndex()
		case c.ahead == nil && c.open.dealt && !c.open.ended && hc.GetHandIndex() == c.openIdx+1:
			// Committed a hand ahead, while the hand before it is in play.
			c.ahead, c.aheadIdx = w, hc.GetHandIndex()
			if hc.GetSeedDeadline() != nil {
				c.fail(e, "a hand committed ahead with a seed deadline")
			}
		default:
			c.fail(e, "hand %d committed while hand %d is not in play or another is ahead", hc.GetHandIndex(), c.openIdx)
		}
	case *tablev1.Event_ClientSeedAccepted:
		i := x.ClientSeedAccepted.GetHandIndex()
		if !(c.open != nil && i == c.openIdx && !c.open.dealt) && !(c.ahead != nil && i == c.aheadIdx) {
			c.fail(e, "a client seed outside its hand's seeding")
		}
	case *tablev1.Event_HandStarted:
		hs := x.HandStarted
		if c.open == nil && c.ahead != nil {
			// The hand before ended and was revealed: the one ahead is next.
			c.open, c.openIdx, c.ahead = c.ahead, c.aheadIdx, nil
		}
		if c.open == nil || hs.GetHandIndex() != c.openIdx || c.open.dealt {
			c.fail(e, "hand %d dealt without its commitment first", hs.GetHandIndex())
		}
		c.open.dealt, c.open.dealer, c.open.n = true, int(hs.GetDealerSeat()), int(hs.GetCardsPerSeat())
	case *tablev1.Event_Dealt:
		if c.open == nil || !c.open.dealt {
			c.fail(e, "cards dealt outside a dealt hand")
		}
		for _, w := range x.Dealt.GetCards() {
			cd := cardpb.FromCard(w)
			c.open.cards[x.Dealt.GetSeat()] = c.open.cards[x.Dealt.GetSeat()].With(cd)
		}
	case *tablev1.Event_ColumnsDealt:
		for _, w := range x.ColumnsDealt.GetFaceUp() {
			cd := cardpb.FromCard(w)
			c.open.faceUp[x.ColumnsDealt.GetSeat()] = append(c.open.faceUp[x.ColumnsDealt.GetSeat()], cd)
		}
	case *tablev1.Event_HandEnded:
		if c.open == nil || x.HandEnded.GetHandIndex() != c.openIdx {
			c.fail(e, "the end of a hand that is not the open one")
		}
		c.open.ended = true
	case *tablev1.Event_HandRevealed:
		c.reveal(e, x.HandRevealed)
	case *tablev1.Event_GameEnded:
		if c.open != nil || c.ahead != nil {
			c.fail(e, "the game ended before hand %d (or the one ahead, %d) was revealed", c.openIdx, c.aheadIdx)
		}
	}
}

// collect adds every byte string and string of m, however deep.
func (c *fairCheck) collect(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		add := func(v protoreflect.Value) {
			switch fd.Kind() {
			case protoreflect.BytesKind:
				c.candidates[string(v.Bytes())] = true
			case protoreflect.StringKind:
				c.addString(v.String())
			case protoreflect.MessageKind:
				c.collect(v.Message())
			}
		}
		switch {
		case fd.IsMap():
		case fd.IsList():
			for i := range v.List().Len() {
				add(v.List().Get(i))
			}
		default:
			add(v)
		}
		return true
	})
}

// addString adds s and every reading of it and of its parts (split at
// anything that is not a letter, digit, +, / or =) as hex, base64 or a
// decimal number.
func (c *fairCheck) addString(s string) {
	c.candidates[s] = true
	parts := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '+' || r == '/' || r == '=' || r == '-' || r == '_')
	})
	for _, p := range append(parts, s) {
		if b, err := hex.DecodeString(p); err == nil {
			c.candidates[string(b)] = true
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(p); err == nil {
				c.candidates[string(b)] = true
			}
		}
		if n, err := strconv.ParseUint(p, 10, 64); err == nil {
			c.numbers[n] = true
		}
		if n, err := strconv.ParseUint(p, 16, 64); err == nil {
			c.numbers[n] = true
		}
	}
}

func (c *fairCheck) reveal(e *tablev1.Event, r *tablev1.HandRevealed) {
	if c.open == nil && c.ahead != nil {
		// A hand committed ahead and never dealt: the game ended first.
		c.open, c.openIdx, c.ahead = c.ahead, c.aheadIdx, nil
	}
	w := c.open
	if w == nil || r.GetHandIndex() != c.openIdx {
		c.fail(e, "hand %d revealed, not the open one", r.GetHandIndex())
	}
	c.open = nil
	c.revealed++
	hand := fairdeal.Hand{TableID: c.t.ID(), GameID: c.t.GameID(), Index: r.GetHandIndex()}
	if len(r.GetServerSeed()) != fairdeal.SeedSize || len(r.GetClientSeeds()) != len(c.t.seats) || !bytes.Equal(r.GetCommitment(), w.commitment) {
		c.fail(e, "a malformed reveal")
	}
	server := fairdeal.ServerSeed(r.GetServerSeed())
	if !fairdeal.Verify(hand, server, fairdeal.Commitment(w.commitment)) {
		c.fail(e, "the server seed does not verify against the commitment")
	}
	if c.servers[server] {
		c.fail(e, "a server seed used twice")
	}
	c.servers[server] = true
	clients := clientSeeds(r)
	for _, cs := range clients {
		if cs != fairdeal.NoClientSeed {
			c.withClientSeeds++
			break
		}
	}
	key, err := fairdeal.ShuffleKey(hand, server, clients)
	if err != nil {
		c.fail(e, "%v", err)
	}
	deck, _ := fairdeal.Shuffle(key)
	if w.dealt {
		c.redeal(e, w, &deck)
	}
	// Nothing any client saw before the reveal holds the seed or the key,
	// in bytes, hex or base64; and nothing it saw deals the hand.
	secrets := [][]byte{server[:], key[:]}
	for cand := range c.candidates {
		for _, s := range secrets {
			for _, form := range [][]byte{s, []byte(hex.EncodeToString(s)), []byte(base64.StdEncoding.EncodeToString(s)),
				[]byte(base64.RawURLEncoding.EncodeToString(s))} {
				if bytes.Contains([]byte(cand), form) {
					c.fail(e, "hand %d: an event before the reveal carried its server seed or key", r.GetHandIndex())
				}
			}
		}
		var x [fairdeal.SeedSize]byte
		copy(x[:], cand)
		c.tryDeal(e, w, &deck, hand, fairdeal.Key(x), fairdeal.ServerSeed(x), clients)
	}
	for n := range c.numbers {
		c.tryDeal(e, w, &deck, hand, fairdeal.LocalKey(n, hand.Index), fairdeal.ServerSeed(fairdeal.LocalKey(n, hand.Index)), clients)
	}
	for x := range c.derived {
		if x == server || x == [fairdeal.SeedSize]byte(key) {
			c.fail(e, "hand %d: its server seed or key is derived from an earlier hand's revealed seed", r.GetHandIndex())
		}
		c.tryDeal(e, w, &deck, hand, fairdeal.Key(x), fairdeal.ServerSeed(x), clients)
	}
	c.derive(server)
}

// tryDeal fails when k, as a key, or s, as a server seed, deals deck.
func (c *fairCheck) tryDeal(e *tablev1.Event, w *handWatch, deck *cards.Deck, hand fairdeal.Hand, k fairdeal.Key, s fairdeal.ServerSeed, clients []fairdeal.ClientSeed) {
	c.tried++
	if deals(k, deck) {
		c.fail(e, "a value seen before the reveal, used as the key, deals hand %d", hand.Index)
	}
	k2, _ := fairdeal.ShuffleKey(hand, s, clients)
	if deals(k2, deck) {
		c.fail(e, "a value seen before the reveal, used as the server seed, deals hand %d", hand.Index)
	}
}

// deals reports whether key k shuffles to deck. Fisher–Yates fixes the last
// position with its first draw, so a key whose first draw misses deck's last
// card (35 keys of 36) is told apart without the whole shuffle.
func deals(k fairdeal.Key, deck *cards.Deck) bool {
	if cards.Card(fairdeal.NewStream(k).IntN(cards.DeckSize)) != deck[cards.DeckSize-1] {
		return false
	}
	d, _ := fairdeal.Shuffle(k)
	return d == *deck
}

// redeal checks that the revealed deck, laid out as docs/fair-play.md
// says, gives exactly the cards the seats were dealt.
func (c *fairCheck) redeal(e *tablev1.Event, w *handWatch, deck *cards.Deck) {
	inHand, up, _, _ := dealLayout(c.t.set.Game, deck, w.n, w.dealer)
	for s := range c.t.seats {
		// A hand the game ended early (resign, forfeit) may not have given
		// every card yet; one played to its end gave them all.
		if w.cards[s]&^inHand[s] != 0 || (w.ended && w.cards[s] != inHand[s]) {
			c.fail(e, "seat %d was dealt %v, the revealed deck gives %v", s, w.cards[s], inHand[s])
		}
	}
	if c.t.set.Game == tablesettings.Japanese {
		for s := range japanese.Seats {
			for i, cd := range w.faceUp[s] {
				if cd != up[s][i] {
					c.fail(e, "seat %d column %d shows %v, the revealed deck %v", s, i, cd, up[s][i])
				}
			}
		}
	}
}

// dealLayout lays a deck out as docs/fair-play.md specifies: the cards each
// seat gets in hand, the Japanese columns' face-up and face-down cards and
// classic's turned card.
func dealLayout(g tablesettings.Game, d *cards.Deck, n, dealer int) (inHand [classic.Seats]cards.Set, up, down [japanese.Seats][japanese.Columns]cards.Card, stock cards.Set) {
	if g == tablesettings.Japanese {
		for k, s := range [2]int{dealer, 1 - dealer} {
			inHand[s] = cards.SetOf(d[3*k:3*k+3]...) | cards.SetOf(d[6+5*k:11+5*k]...)
			for i := range japanese.Columns {
				down[s][i], up[s][i] = d[16+10*k+i], d[21+10*k+i]
			}
		}
		return inHand, up, down, 0
	}
	for i := range classic.Seats {
		s := (dealer + 1 + i) % classic.Seats
		if n == classic.MaxCards {
			inHand[s] = cards.SetOf(d[3*i:3*i+3]...) | cards.SetOf(d[12+6*i:18+6*i]...)
		} else {
			inHand[s] = cards.SetOf(d[n*i : n*i+n]...)
		}
	}
	if n < classic.MaxCards {
		stock = d[classic.Seats*n].Bit()
	}
	return inHand, up, down, stock
}

// TestFairness_NoEventBeforeTheRevealGivesTheDeal: over hundreds of random
// games — bots and humans, client seeds sent, refused and missing, seed
// deadlines, timeouts, leaves and resignations — every hand is committed
// before it is dealt and revealed after its last event; no event any seat
// or watcher receives before the reveal carries the hand's server seed or
// shuffle key (raw, hex or base64), and no byte string, hex, base64 or
// number in any event from the game's start to the reveal (ids and
// earlier hands' reveals included), nor any SHA-256/HMAC derivation of an
// earlier revealed seed with the documented tags, used as the server seed,
// as the key or as a local game's seed, deals the hand; every reveal verifies
// against its commitment and re-deals exactly the cards dealt; no server
// seed is used twice.
func TestFairness_NoEventBeforeTheRevealGivesTheDeal(t *testing.T) {
	// Every hand is checked against every value of the game so far, so the
	// cost grows with the square of a game's length: 300 games (a few
	// thousand hands) keep it under a minute with -race.
	games := 300
	if testing.Short() {
		games = 40
	}
	servers := map[fairdeal.ServerSeed]bool{}
	var revealed, withClient, tried int
	for g := range games {
		d := newDriver(t, uint64(90000+g))
		c := newFairCheck(t, d.h.t, g, servers)
		for _, e := range d.h.start {
			c.event(e)
		}
		seen := 0
		for i := 0; i < 3000 && !d.h.t.Over(); i++ {
			d.step()
			for _, l := range d.all[seen:] {
				for _, e := range l.evs {
					c.event(e)
				}
			}
			seen = len(d.all)
		}
		if d.h.t.Over() && (c.open != nil || c.ahead != nil) {
			t.Fatalf("game %d ended with hand %d unrevealed", g, c.openIdx)
		}
		revealed += c.revealed
		withClient += c.withClientSeeds
		tried += c.tried
	}
	if revealed < games || withClient == 0 || withClient == revealed {
		t.Fatalf("%d hands revealed, %d with client seeds: the games did not exercise both", revealed, withClient)
	}
	t.Logf("%d games, %d hands revealed (%d with client seeds), %d candidate deals tried", games, revealed, withClient, tried)
}
