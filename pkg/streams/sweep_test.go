package streams

import (
	"strconv"
	"testing"
)

// BenchmarkTailer_SweepPart is one sixteenth of a gateway's sweep (every
// WithSweepInterval/sweepParts): listing the part of 2,000 followed
// streams to ring, and taking them to read.
func BenchmarkTailer_SweepPart(b *testing.B) {
	t := NewTailer(nil, nil)
	for i := range 2000 {
		t.reg.add(TableEvents("t"+strconv.Itoa(i)), "0-0")
	}
	var swept, keys []string
	from := map[string]string{}
	var bells []richBell
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		swept = t.sweepPart(i%sweepParts, swept)
		t.ring(swept...)
		keys, bells = t.takeDirty(keys[:0], from, bells)
		if len(keys) != len(swept) {
			b.Fatalf("took %d streams to read, swept %d", len(keys), len(swept))
		}
	}
}
