package table

import (
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// The durable formats' hot paths, each in the hand-laid layout of before
// (the oracles of legacy_test.go, which are the old writers) and in
// protobuf, side by side in one binary so that runs interleave them
// (docs/benchmarks.md, "Durable formats"). Per move the runner encodes the
// step's input; at every hand's end it encodes a snapshot; on a migration it
// restores one and decodes the inputs logged after it.

// benchInputs are the inputs a runner logs: a move (with its command stream
// entry, as from the gateway), a move carrying a client seed for the hand
// ahead, a tick, and a tick whose step committed a hand (its entropy kept).
func benchInputs() []struct {
	name string
	in   Input
} {
	play := &tablev1.Command{CommandId: benchCommandID(7), PlayerId: "0b5e7c1a-93d2-4f60-8a7e-2c4d9b1f0e37", TableId: "t-5f1c2e",
		Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: 17}}}
	seeded := &tablev1.Command{CommandId: play.CommandId, PlayerId: play.PlayerId, TableId: play.TableId, Command: play.Command,
		AttachedSeed: &tablev1.ClientSeedCommand{HandIndex: 4, Seed: make([]byte, 32)}}
	at := t0.Add(17 * time.Minute)
	tick := Tick(at)
	tick.Entropy = entropyOf(3, 9)
	return []struct {
		name string
		in   Input
	}{
		{"move", CommandInput(play, "1740830400123-0", at)},
		{"move+seed", CommandInput(seeded, "1740830400123-0", at)},
		{"tick", Tick(at)},
		{"tick+entropy", tick},
	}
}

func BenchmarkInput_Marshal(b *testing.B) {
	for _, c := range benchInputs() {
		b.Run(c.name+"/format=layout", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = len(marshalInputLegacy(b, c.in))
			}
			b.ReportMetric(float64(n), "bytes")
		})
		b.Run(c.name+"/format=proto", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				raw, err := MarshalInput(c.in)
				if err != nil {
					b.Fatal(err)
				}
				n = len(raw)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

func BenchmarkInput_Unmarshal(b *testing.B) {
	for _, c := range benchInputs() {
		raw, err := MarshalInput(c.in)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range []struct {
			name string
			data []byte
		}{{"format=layout", marshalInputLegacy(b, c.in)}, {"format=proto", raw}} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := UnmarshalInput(v.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchTables are tables as a runner snapshots them: a classic game in its
// seventh hand (a hand committed ahead, a few dozen recent commands), a
// Japanese match in play, and a table whose ring of recent commands is full.
func benchTables(b *testing.B) []struct {
	name string
	t    *Table
} {
	cl := newHarness(b, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 11, humans(4))
	for cl.t.eng.handIndex() < 6 || cl.t.eng.phase() != tablev1.Phase_PHASE_PLAY {
		s := cl.t.eng.toMove()
		cl.now = cl.now.Add(time.Second)
		cl.mustCmd(player(s), legalCommands(cl.t, s)[0])
	}
	jp := newHarness(b, japaneseSet(21), 12, humans(2))
	for jp.t.eng.handIndex() < 2 || jp.t.eng.phase() != tablev1.Phase_PHASE_PLAY {
		s := jp.t.eng.toMove()
		jp.now = jp.now.Add(time.Second)
		jp.mustCmd(player(s), legalCommands(jp.t, s)[0])
	}
	full, _ := fullRingTable(b)
	return []struct {
		name string
		t    *Table
	}{{"classic", cl.t}, {"japanese", jp.t}, {"full-ring", full.t}}
}

func BenchmarkSnapshot_Marshal(b *testing.B) {
	for _, c := range benchTables(b) {
		b.Run(c.name+"/format=layout", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = len(marshalLegacy(b, c.t))
			}
			b.ReportMetric(float64(n), "bytes")
		})
		b.Run(c.name+"/format=proto", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				raw, err := c.t.MarshalBinary()
				if err != nil {
					b.Fatal(err)
				}
				n = len(raw)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

func BenchmarkSnapshot_Restore(b *testing.B) {
	for _, c := range benchTables(b) {
		for _, v := range []struct {
			name string
			data []byte
		}{{"format=layout", marshalLegacy(b, c.t)}, {"format=proto", state(b, c.t)}} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Restore(v.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStep_ApplyAndLog is the runner's per-move work without Redis: a
// whole classic game of four humans, every move a command that Apply plays
// and whose input is then encoded for the log (ForLog, MarshalInput), in
// either format. ns/move is the cost of one step.
func BenchmarkStep_ApplyAndLog(b *testing.B) {
	for _, enc := range []struct {
		name string
		f    func(Input) []byte
	}{
		{"format=layout", func(in Input) []byte { return marshalInputLegacy(b, in) }},
		{"format=proto", func(in Input) []byte {
			raw, err := MarshalInput(in)
			if err != nil {
				b.Fatal(err)
			}
			return raw
		}},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			moves := 0
			for i := 0; b.Loop(); i++ {
				t, _, err := New("t-5f1c2e", "g", classicSet(classic.Standard, tablesettings.DefaultBotDelay), humans(4), t0, entropyOf(uint64(i), 0))
				if err != nil {
					b.Fatal(err)
				}
				now, ms := t0, uint64(t0.UnixMilli())
				for k := 0; !t.Over(); k++ {
					now = now.Add(time.Second)
					ms++
					var in Input
					if s := t.eng.toMove(); s >= 0 {
						c := legalCommands(t, s)[0]
						c.CommandId, c.PlayerId, c.TableId = benchCommandID(k), player(s), t.ID()
						in = CommandInput(c, entryID{ms: ms}.String(), now)
					} else {
						in = Tick(now.Add(tablesettings.DefaultSeedTimeout)) // deal at the seed deadline
					}
					in.Entropy = entropyOf(uint64(i), k+1)
					evs, err := t.Apply(in)
					if err != nil {
						b.Fatal(err)
					}
					_ = enc.f(ForLog(in, evs))
					moves++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(moves), "ns/move")
		})
	}
}
