package streams_test

import (
	"testing"

	"github.com/pulka/pulka/pkg/streams"
)

func TestTableKeys_ShareOneHashSlot(t *testing.T) {
	for _, id := range []string{"1", "abc", "8f14e45f-ceea-467f-a0f1-2b2f0f4a1f3e"} {
		keys := []string{
			streams.TableCommands(id), streams.TableEvents(id), streams.TableSnapshot(id),
			streams.TableLease(id), streams.LeaseEpochKey(streams.TableLease(id)), streams.TableDedupe(id, "m-1"),
		}
		want := streams.HashSlot(keys[0])
		for _, k := range keys {
			if got := streams.HashSlot(k); got != want {
				t.Errorf("%s in slot %d, want %d", k, got, want)
			}
		}
	}
	if got := streams.TableCommands("42"); got != "pulka:{t:42}:cmd" {
		t.Errorf("TableCommands = %q", got)
	}
}

// Reference values from the Redis Cluster specification and CLUSTER KEYSLOT.
func TestHashSlot_MatchesRedisCluster(t *testing.T) {
	cases := []struct {
		key  string
		slot int
	}{
		{"123456789", 12739}, // CRC16/XMODEM check value 0x31C3
		{"foo", 12182},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"foo{}{bar}", 8363}, // empty first tag: the whole key is hashed
		{"{}", 15257},
	}
	for _, tc := range cases {
		if got := streams.HashSlot(tc.key); got != tc.slot {
			t.Errorf("HashSlot(%q) = %d, want %d", tc.key, got, tc.slot)
		}
	}
}

func TestStreamClass_HidesTheTableID(t *testing.T) {
	cases := map[string]string{
		"pulka:{t:42}:cmd":   "pulka:{*}:cmd",
		"pulka:hands":        "pulka:hands",
		"pulka:{}:odd":       "pulka:{}:odd",
		"pulka:{t:1:events":  "pulka:{t:1:events",
		"pulka:dlq:scoring":  "pulka:dlq:scoring",
		"pulka:{w:7}:ledger": "pulka:{*}:ledger",
	}
	for in, want := range cases {
		if got := streams.StreamClass(in); got != want {
			t.Errorf("StreamClass(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompareIDs_NumericOrder(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"9-0", "10-0", -1},
		{"10-2", "10-10", -1},
		{"10-1", "10-1", 0},
		{"11", "10-99", 1},
		{"0-0", "0-1", -1},
	}
	for _, tc := range cases {
		if got := streams.CompareIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareIDs(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
