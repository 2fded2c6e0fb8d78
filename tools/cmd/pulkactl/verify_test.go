package main

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/tools/record"
)

// tableRecord is a whole classic game dealt as a table deals it, every hand
// by commit–reveal.
func tableRecord(t *testing.T) *record.Record {
	t.Helper()
	s := scoring.DefaultSettings()
	s.Variant = classic.Nines
	bot := classic.Bot{}
	rec, err := record.PlayClassicTable("Zq4pL0mN2xYb", "9f3a61c2d0b7e845a1b2c3d4e5f60718", rand.NewChaCha8([32]byte{7}), s,
		[classic.Seats]record.ClassicPlayer{bot, bot, bot, bot})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func recordJSON(t *testing.T, rec *record.Record) string {
	t.Helper()
	var b bytes.Buffer
	if err := rec.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestVerify_AGoodTableRecordVerifiesHandByHand(t *testing.T) {
	rec := tableRecord(t)
	out, errOut, code := runCmd(t, recordJSON(t, rec), "verify")
	if code != 0 {
		t.Fatalf("verify exited %d: %s\n%s", code, errOut, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != classic.Nines.Hands()+1 || !strings.HasPrefix(lines[len(lines)-1], "ok: 16 hands verified") {
		t.Fatalf("output:\n%s", out)
	}
	for i, l := range lines[:len(lines)-1] {
		h := fairdeal.Hand{TableID: rec.TableID, GameID: rec.GameID, Index: uint32(i)}
		s, _ := fairdeal.ParseSeed(rec.Hands[i].ServerSeed)
		var cs []fairdeal.ClientSeed
		for _, c := range rec.Hands[i].ClientSeeds {
			b, _ := fairdeal.ParseSeed(c)
			cs = append(cs, b)
		}
		k, _ := fairdeal.ShuffleKey(h, s, cs)
		if !strings.HasPrefix(l, "hand ") || !strings.Contains(l, "commitment ok, key "+fairdeal.Hex(k)) {
			t.Fatalf("line %d: %q, want hand %d with key %s", i, l, i+1, fairdeal.Hex(k))
		}
	}
}

// TestVerify_ALocalRecordIsNotFairDealt: a local game's record (a seed, no
// hands) is refused with exit 1 — a table's record stripped of its hands
// must not "verify" — and replays its deals with -local.
func TestVerify_ALocalRecordIsNotFairDealt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "game.json")
	if _, errOut, code := runCmd(t, "", "demo", "--seed", "3", "--record", path); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := runCmd(t, "", "verify", path)
	if code != 1 || !strings.Contains(errOut, "not a fair-dealt record (local seed)") || strings.Contains(out, "ok:") {
		t.Fatalf("verify of a local record exited %d: %s\n%s", code, errOut, out)
	}
	out, errOut, code = runCmd(t, "", "verify", "--local", path)
	if code != 0 || !strings.Contains(out, "hand 1: local deal of seed 3") || !strings.Contains(out, "ok: 24 hands verified") {
		t.Fatalf("verify exited %d: %s\n%s", code, errOut, out)
	}
}

// TestVerify_ATamperedRecordFails: a changed server seed does not match its
// commitment; a changed client seed, or a changed card, gives a deal the
// moves do not fit; a missing hand's seeds leave a hand undealt. Each exits
// 1, after the lines of the hands before it.
func TestVerify_ATamperedRecordFails(t *testing.T) {
	flip := func(hex string) string {
		b := []byte(hex)
		if b[10] == '0' {
			b[10] = '1'
		} else {
			b[10] = '0'
		}
		return string(b)
	}
	for name, c := range map[string]struct {
		tamper func(*record.Record)
		want   string
		before int // hands verified before the failure
	}{
		"server seed of hand 3": {func(r *record.Record) { r.Hands[2].ServerSeed = flip(r.Hands[2].ServerSeed) },
			"hand 3: the server seed is not the one committed to", 2},
		"commitment of hand 1": {func(r *record.Record) { r.Hands[0].Commitment = flip(r.Hands[0].Commitment) },
			"hand 1: the server seed is not the one committed to", 0},
		"client seed of hand 2": {func(r *record.Record) { r.Hands[1].ClientSeeds[0] = flip(r.Hands[1].ClientSeeds[0]) },
			"hand 2 does not replay from its seeds", 1},
		"a card": {func(r *record.Record) { tamperCard(t, r) }, "does not replay from its seeds", 0},
		"hand 5's seeds missing": {func(r *record.Record) { r.Hands = r.Hands[:4] },
			"hand 5 is played and its seeds are not in the record", 4},
		"a seed that is no seed": {func(r *record.Record) { r.Hands[0].ClientSeeds[1] = "xyz" }, "client seed 1", -1},
	} {
		t.Run(name, func(t *testing.T) {
			rec := tableRecord(t)
			c.tamper(rec)
			out, errOut, code := runCmd(t, recordJSON(t, rec), "verify")
			if code != 1 || !strings.Contains(errOut, c.want) || strings.Contains(out, "ok:") {
				t.Fatalf("exit %d, stderr %q, want 1 and %q\n%s", code, errOut, c.want, out)
			}
			if n := strings.Count(out, "commitment ok"); c.before >= 0 && n < c.before {
				t.Fatalf("%d hands verified before the failure, want at least %d:\n%s", n, c.before, out)
			}
		})
	}
}

// tamperCard changes the first card played in the record to another card of
// the same hand's deal that its seat does not hold.
func tamperCard(t *testing.T, r *record.Record) {
	t.Helper()
	for i, m := range r.Moves {
		var mv classic.Move
		if err := mv.UnmarshalText([]byte(m)); err != nil {
			t.Fatal(err)
		}
		if mv.Kind != classic.MovePlay || mv.Card.IsJoker() {
			continue
		}
		mv.Card = (mv.Card + 9) % 36 // another suit's card
		if mv.Card.IsJoker() {
			mv.Card++
		}
		text, _ := mv.MarshalText()
		r.Moves[i] = string(text)
		return
	}
	t.Fatal("no card played")
}
