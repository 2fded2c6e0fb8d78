package streams

import (
	"strconv"
	"strings"
)

// KeyPrefix starts every Redis key Pulka owns, so one Redis can be shared
// with other applications and `SCAN MATCH pulka:*` finds everything.
const KeyPrefix = "pulka"

// TableTag is the Redis Cluster hash tag of one table. Every key of a table
// contains it, so they all hash to the same slot and a Lua script or MULTI
// may touch several of them (lease check + append, dedupe + effect).
// Table ids must not contain '{' or '}'.
func TableTag(tableID string) string { return "{t:" + tableID + "}" }

func tableKey(tableID, suffix string) string {
	return KeyPrefix + ":" + TableTag(tableID) + ":" + suffix
}

// TableCommands is the stream of commands (moves, joins, …) sent to a table:
// gateways and the lobby append, the owning table-runner consumes.
func TableCommands(tableID string) string { return tableKey(tableID, "cmd") }

// TableEvents is the stream of events a table's owner appends (fenced by the
// lease) and gateways fan out to players.
func TableEvents(tableID string) string { return tableKey(tableID, "ev") }

// TableSnapshot is the key of the table's latest state snapshot.
func TableSnapshot(tableID string) string { return tableKey(tableID, "snap") }

// TableLease is the key of the table's ownership lease (a hash with fields
// owner and epoch, and a TTL). Its epoch counter lives at
// LeaseEpochKey(TableLease(id)).
func TableLease(tableID string) string { return tableKey(tableID, "lease") }

// TablePresence is the sorted set of a player's live connections to a table,
// across gateway instances (member: connection id, score: its expiry in Unix
// ms). Gateways keep it; the table's runner reads it to tell a stale "away"
// from a real one.
func TablePresence(tableID, playerID string) string { return tableKey(tableID, "presence:"+playerID) }

// TableDedupe is the dedupe key of one message handled with an effect on the
// table's keys (see Once): sharing the tag keeps key and effect in one slot.
func TableDedupe(tableID, messageKey string) string {
	return tableKey(tableID, "dedupe:"+messageKey)
}

// LeaseEpochKey is the never-expiring epoch counter beside a lease key. It
// must outlive the lease so that a new owner always gets a higher epoch.
func LeaseEpochKey(leaseKey string) string { return leaseKey + ":epoch" }

// DeadLetter is the default dead-letter stream of a consumer group.
func DeadLetter(group string) string { return KeyPrefix + ":dlq:" + group }

// wakeKey is the private stream a consumer shard blocks on besides its data
// streams, so Add/Remove and shutdown interrupt a blocking read at once.
func wakeKey(group, consumer string, shard int) string {
	return KeyPrefix + ":wake:" + group + ":" + consumer + ":" + strconv.Itoa(shard)
}

// StreamClass replaces the contents of a key's hash tag with '*'
// ("pulka:{t:42}:cmd" → "pulka:{*}:cmd"): metric attributes use it so that
// thousands of per-table streams do not become thousands of time series.
func StreamClass(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[:open+1] + "*" + key[open+1+end:]
}

// HashSlot is the Redis Cluster slot of key (CRC16 of the hash tag, or of the
// whole key when it has none, modulo 16384).
func HashSlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16 is CRC-16/XMODEM (poly 0x1021), the variant Redis Cluster uses.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Bell is the Pub/Sub channel that rings when stream has a new entry: the
// stream's own key (channels and keys are separate namespaces in Redis, and
// the same name keeps a bell in its stream's Cluster slot). Every writer in
// this package rings it; a Lua script that appends to a followed stream
// outside this package must PUBLISH to it too, or Tailers see the entry only
// at their next sweep.
func Bell(stream string) string { return stream }
