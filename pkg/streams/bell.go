package streams

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A bell (see Bell) is the Pub/Sub message a writer publishes after it
// appended to a stream. The writers of this package ring it with the entry
// itself, so that a Tailer whose position is the entry's predecessor can
// deliver it at once instead of reading the stream again: one XREAD round
// trip less for every entry, on the runner (commands) and on every gateway
// (events). Publishers made WithEntryBells ring such bells; others ring a
// bare one (an empty payload), which is cheaper to append. The payload, built
// by appendLua inside the appending script from the writer's bellBody, is
//
//	"1 " <prev ID> " " <ID> " " then, for each field and value of the entry,
//	<byte length> ":" <bytes>
//
// where prev is the ID of the stream's last entry just before this one
// ("0-0" for none), read in the same script, so no other append can come
// between. A Tailer delivers the entry only if prev is exactly the last ID it
// delivered; otherwise (a gap: a writer that rang without the entry, a bell
// lost in a reconnect) the bell is only a hint and it reads the stream. An
// empty payload, or one it cannot parse (another version), is a hint too.
const bellVersion = "1 "

// noticeVersion starts a bell that carries a notice instead of an entry: a
// message for the readers of the stream right now that is not part of the
// stream — an answer meant for one client that must not grow a durable log
// (a table's refusal of a command). The rest of the payload is the notice's
// data. A Tailer hands it to its WithNotices handler and reads nothing; a
// Tailer of an older version takes the bell as a hint and reads the stream,
// finding nothing new.
const noticeVersion = "n "

// NoticeHandler receives a notice rung on the bell of a followed stream.
type NoticeHandler func(ctx context.Context, stream string, data []byte)

// NoticeBell is the payload of a bell that carries the notice data, to
// PUBLISH on Bell(stream) (a script can do it next to the writes it answers
// for).
func NoticeBell(data []byte) string { return noticeVersion + string(data) }

// Notify rings stream's bell with the notice data; the number of
// subscribers that heard it is returned.
func Notify(ctx context.Context, rdb redis.UniversalClient, stream string, data []byte) (int64, error) {
	n, err := rdb.Publish(ctx, Bell(stream), NoticeBell(data)).Result()
	if err != nil {
		return 0, fmt.Errorf("notify %s: %w", stream, err)
	}
	return n, nil
}

// appendLua defines append(k0, a, rich, isolate) for the appending
// scripts: it appends one entry to each of KEYS[k0], KEYS[k0+1], … — the
// fields of each come from ARGV starting at a as: maxlen ("0" = none), field
// count n, n field/value strings, and when rich the body of its bell — rings
// each entry's bell, with the entry when rich, and returns the IDs. With
// isolate an entry whose XADD fails (a key of another type) is an error
// reply in its place and the others still go in; without, the error ends
// the script. The fields go to XADD straight from ARGV (unpack of a range):
// building a command table per entry was a third of the fenced script's time
// in Redis. The bell's body, the fields as a bell lists them, comes built
// by the writer (bellBody): built here it cost a Lua table and a number
// formatted by printf for every field, in the one thread of Redis that
// every move waits for.
const appendLua = `
local function append(k0, a, rich, isolate)
  local call = isolate and redis.pcall or redis.call
  local ids, last = {}, {}
  for k = k0, #KEYS do
    local key = KEYS[k]
    local maxlen, first, final = ARGV[a], a + 2, a + 1 + tonumber(ARGV[a + 1])
    local prev = last[key]
    if rich and not prev then
      local e = call('XREVRANGE', key, '+', '-', 'COUNT', 1)
      prev = e[1] and e[1][1] or '0-0'
    end
    local id
    if maxlen ~= '0' then
      id = call('XADD', key, 'MAXLEN', '~', maxlen, '*', unpack(ARGV, first, final))
    else
      id = call('XADD', key, '*', unpack(ARGV, first, final))
    end
    if type(id) ~= 'table' then -- a table is pcall's error
      local bell = ''
      if rich then
        bell = '1 ' .. prev .. ' ' .. id .. ' ' .. ARGV[final + 1]
        last[key] = id
      end
      redis.call('PUBLISH', key, bell)
    end
    ids[#ids + 1] = id
    a = final + 1
    if rich then
      a = a + 1
    end
  end
  return ids
end
`

// bellBody is the part of a rich bell after the IDs (see bellVersion):
// each of fields (strings and byte slices, as appendFields lists an entry's
// fields and values) as <byte length> ":" <bytes>.
func bellBody(fields []any) []byte {
	n := 0
	for _, f := range fields {
		l := fieldLen(f)
		n += l + 1 + decimalDigits(l)
	}
	b := make([]byte, 0, n)
	for _, f := range fields {
		b = strconv.AppendInt(b, int64(fieldLen(f)), 10)
		b = append(b, ':')
		switch v := f.(type) {
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

// fieldLen is the length of a field or value appendFields listed.
func fieldLen(f any) int {
	switch v := f.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	return 0
}

func decimalDigits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// richBell is a bell that carried its entry.
type richBell struct {
	prev string
	msg  Message
}

// parseBell decodes a bell's payload (see bellVersion); ok is false for a
// bare hint or a payload it does not understand.
func parseBell(stream, payload string) (b richBell, ok bool) {
	rest, ok := strings.CutPrefix(payload, bellVersion)
	if !ok {
		return richBell{}, false
	}
	prev, rest, ok1 := strings.Cut(rest, " ")
	id, rest, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !validID(prev) || !validID(id) {
		return richBell{}, false
	}
	m := Message{Stream: stream, ID: id}
	for rest != "" {
		k, r, ok := lengthPrefixed(rest)
		if !ok {
			return richBell{}, false
		}
		v, r, ok := lengthPrefixed(r)
		if !ok {
			return richBell{}, false
		}
		m.setField(k, v)
		rest = r
	}
	return richBell{prev: prev, msg: m}, true
}

// lengthPrefixed cuts `<n>:<n bytes>` off the front of s.
func lengthPrefixed(s string) (v, rest string, ok bool) {
	digits, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", false
	}
	n, err := strconv.ParseUint(digits, 10, 31) // digits only: no sign, no "0x"
	if err != nil || int(n) > len(rest) {
		return "", "", false
	}
	return rest[:n], rest[n:], true
}

// validID reports whether s is a complete stream ID, <ms>-<seq>.
func validID(s string) bool {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return err1 == nil && err2 == nil
}
