package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/tools/record"
)

// jsonString matches the JSON strings of a frame (no escapes: ids, hex and
// base64 have none).
var jsonString = regexp.MustCompile(`"([A-Za-z0-9+/=_.:-]{8,})"`)

// checkFairDeals checks the commit–reveal of every hand of a finished game
// (docs/fair-play.md) as its clients saw it:
//
//   - every hand of the log was committed, then revealed, and its revealed
//     server seed is the one its commitment names (record.Replay, which
//     deals every hand from its seeds' key, has checked the rest);
//   - each client received the hand's commitment before any of its cards
//     (a watcher: before its HandStarted);
//   - no frame a client received before the hand's HandRevealed carries the
//     hand's server seed or key, raw, hex or base64; and no string in any
//     frame of the game up to that reveal (ids, commitments, earlier hands'
//     revealed seeds, anything hex or base64), nor any SHA-256/HMAC
//     derivation of an earlier revealed seed with the tags of
//     docs/fair-play.md, is the hand's server seed or key or, used as the
//     key or as the server seed, deals the hand.
func checkFairDeals(t *testing.T, rec *record.Record, log []logEntry, clients []*client) {
	t.Helper()
	type secret struct {
		commitment []byte
		server     fairdeal.ServerSeed
		key        fairdeal.Key
		forms      [][]byte // every encoding of the server seed and the key
		deck       cards.Deck
		clients    []fairdeal.ClientSeed
		hand       fairdeal.Hand
	}
	var hands []secret
	for i := range rec.Hands {
		k, err := rec.HandKey(i)
		if err != nil {
			t.Fatal(err)
		}
		hs := rec.Hands[i]
		s, _ := fairdeal.ParseSeed(hs.ServerSeed)
		c, _ := fairdeal.ParseSeed(hs.Commitment)
		h := fairdeal.Hand{TableID: rec.TableID, GameID: rec.GameID, Index: uint32(i)}
		if !fairdeal.Verify(h, s, c) {
			t.Fatalf("hand %d: the revealed server seed is not the committed one", i)
		}
		sec := secret{commitment: c[:], hand: h, server: s, key: k}
		for _, cs := range hs.ClientSeeds {
			b, _ := fairdeal.ParseSeed(cs)
			sec.clients = append(sec.clients, b)
		}
		sec.deck, _ = fairdeal.Shuffle(k)
		for _, v := range [][]byte{s[:], k[:]} {
			sec.forms = append(sec.forms, v, []byte(hex.EncodeToString(v)), []byte(base64.StdEncoding.EncodeToString(v)),
				[]byte(base64.RawStdEncoding.EncodeToString(v)), []byte(base64.URLEncoding.EncodeToString(v)),
				[]byte(base64.RawURLEncoding.EncodeToString(v)))
		}
		hands = append(hands, sec)
	}
	// Every hand dealt is in the record; every hand committed is revealed
	// once the game is over — a hand committed ahead of the game's end and
	// never dealt too (docs/fair-play.md), as its commitment says.
	commitments := map[uint32][]byte{}
	dealt, revealed, over := 0, 0, false
	for _, e := range log {
		switch {
		case e.Ev.GetHandCommitted() != nil:
			commitments[e.Ev.GetHandCommitted().GetHandIndex()] = e.Ev.GetHandCommitted().GetCommitment()
		case e.Ev.GetHandStarted() != nil:
			dealt++
		case e.Ev.GetHandRevealed() != nil:
			hr := e.Ev.GetHandRevealed()
			h := fairdeal.Hand{TableID: rec.TableID, GameID: rec.GameID, Index: hr.GetHandIndex()}
			c := commitments[hr.GetHandIndex()]
			if len(c) != fairdeal.SeedSize || !fairdeal.Verify(h, fairdeal.ServerSeed(hr.GetServerSeed()), fairdeal.Commitment(c)) {
				t.Fatalf("hand %d: revealed without its commitment, or not as committed", hr.GetHandIndex())
			}
			revealed++
		case e.Ev.GetGameEnded() != nil:
			over = true
		}
	}
	if dealt != len(hands) || len(hands) == 0 || (over && revealed != len(commitments)) {
		t.Fatalf("%d hands dealt, %d in the record; %d committed, %d revealed", dealt, len(hands), len(commitments), revealed)
	}
	tried := 0
	for _, c := range clients {
		// seen: every reading of every string of the client's frames of
		// the game so far, earlier reveals included; derived: what the
		// documented constructions give from the server seeds revealed so
		// far. At a hand's reveal, none of them may be its server seed or
		// key, or deal it as a key or as a server seed.
		seen := map[[fairdeal.SeedSize]byte]bool{}
		derived := map[[fairdeal.SeedSize]byte]bool{}
		revealed := map[uint32]bool{}
		seenCommit := map[uint32]bool{}
		for _, f := range c.snapshot() {
			if f.Table != "" && f.Table != rec.TableID {
				continue
			}
			if r := f.ev.GetHandRevealed(); r != nil && int(r.GetHandIndex()) < len(hands) && !revealed[r.GetHandIndex()] {
				h := r.GetHandIndex()
				sec := &hands[h]
				for _, set := range []map[[fairdeal.SeedSize]byte]bool{seen, derived} {
					for v := range set {
						tried++
						if v == sec.server || v == [fairdeal.SeedSize]byte(sec.key) {
							t.Errorf("%s: a value seen or derived before hand %d's reveal is its server seed or key", c.name, h)
						}
						if dealsDeck(fairdeal.Key(v), &sec.deck) {
							t.Errorf("%s: a value seen or derived before hand %d's reveal, used as the key, deals it", c.name, h)
						}
						if k, _ := fairdeal.ShuffleKey(sec.hand, fairdeal.ServerSeed(v), sec.clients); dealsDeck(k, &sec.deck) {
							t.Errorf("%s: a value seen or derived before hand %d's reveal, used as the server seed, deals it", c.name, h)
						}
					}
				}
				revealed[h] = true
				deriveFrom(derived, sec.server[:])
			}
			// No frame before a hand's reveal — before its commitment too —
			// carries its server seed or key in any encoding.
			for h := range hands {
				if revealed[uint32(h)] {
					continue
				}
				for _, form := range hands[h].forms {
					if bytes.Contains(f.Raw, form) {
						t.Errorf("%s frame #%d carries hand %d's server seed or key before its reveal: %s", c.name, f.N, h, f)
					}
				}
			}
			for _, m := range jsonString.FindAllSubmatch(f.Raw, -1) {
				for _, v := range readings(string(m[1])) {
					seen[v] = true
				}
			}
			if f.ev == nil {
				continue
			}
			switch x := f.ev.GetEvent().(type) {
			case *tablev1.Event_HandCommitted:
				h := x.HandCommitted.GetHandIndex()
				if int(h) >= len(hands) {
					// Committed ahead and not dealt (yet): no card came
					// from it; its reveal, if any, was checked above.
					continue
				}
				if !bytes.Equal(x.HandCommitted.GetCommitment(), hands[h].commitment) {
					t.Errorf("%s frame #%d: hand %d's commitment is not the one revealed", c.name, f.N, h)
					continue
				}
				seenCommit[h] = true
			case *tablev1.Event_HandStarted:
				if h := x.HandStarted.GetHandIndex(); !seenCommit[h] {
					t.Errorf("%s frame #%d: hand %d dealt before its commitment", c.name, f.N, h)
				}
			case *tablev1.Event_Dealt:
				if len(seenCommit) == len(revealed) {
					t.Errorf("%s frame #%d: cards with no hand committed", c.name, f.N)
				}
			}
		}
	}
	t.Logf("fair deals: %d hands verified; %d strings of the clients' frames tried as keys and seeds", len(hands), tried)
}

// readings is every 32-byte value a frame's string could stand for: its
// bytes, and its hex or base64 decoding, cut or zero-padded to 32 bytes.
func readings(s string) [][fairdeal.SeedSize]byte {
	var out [][fairdeal.SeedSize]byte
	add := func(b []byte) {
		var v [fairdeal.SeedSize]byte
		copy(v[:], b)
		out = append(out, v)
	}
	add([]byte(s))
	if b, err := hex.DecodeString(s); err == nil {
		add(b)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			add(b)
		}
	}
	return out
}

// fairTags are the tags docs/fair-play.md names.
var fairTags = []string{"pulka/server-seed/v1", "pulka/commit/v1", "pulka/deal/v1", "pulka/stream/v1", "pulka/local/v1"}

// deriveFrom adds to set what anyone computes from a revealed server seed s
// with the documented constructions: SHA-256(s), SHA-256(tag || s) and
// HMAC-SHA256(s, tag || u32(n)) for the first n.
func deriveFrom(set map[[fairdeal.SeedSize]byte]bool, s []byte) {
	set[sha256.Sum256(s)] = true
	for _, tag := range fairTags {
		set[sha256.Sum256(append([]byte(tag), s...))] = true
		for n := range uint32(8) {
			m := hmac.New(sha256.New, s)
			m.Write(binary.BigEndian.AppendUint32([]byte(tag), n))
			set[[fairdeal.SeedSize]byte(m.Sum(nil))] = true
		}
	}
}

// dealsDeck reports whether key k shuffles to deck; Fisher–Yates fixes the
// last position with its first draw, so most keys are told apart at once.
func dealsDeck(k fairdeal.Key, deck *cards.Deck) bool {
	if cards.Card(fairdeal.NewStream(k).IntN(cards.DeckSize)) != deck[cards.DeckSize-1] {
		return false
	}
	d, _ := fairdeal.Shuffle(k)
	return d == *deck
}
