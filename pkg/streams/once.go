package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Effect is a list of Redis write commands that together are the result of
// handling one message: e.g. HINCRBY on a balance plus XADD to a ledger. Once
// runs them atomically together with the dedupe key, so the effect happens
// once per message key however often the message is delivered.
//
// The first argument after the command name must be the command's (only)
// key: it is passed in KEYS so Redis Cluster can route the script, and every
// key, the dedupe key included, must share one hash tag.
type Effect struct {
	keys []string
	args []interface{}
}

// Do adds one command, e.g. e.Do("HINCRBY", "pulka:{w:7}:balance", "coins", 50).
func (e *Effect) Do(command, key string, args ...interface{}) *Effect {
	e.keys = append(e.keys, key)
	e.args = append(e.args, len(args), command)
	e.args = append(e.args, args...)
	return e
}

// Len is the number of commands in the effect.
func (e *Effect) Len() int { return len(e.keys) }

// OnceResult tells whether this call applied the effect.
type OnceResult struct {
	// Applied is true when this call ran the effect; false when the dedupe
	// key showed an earlier run.
	Applied bool
	// Mark is the value stored with the dedupe key by the run that applied
	// the effect (the caller's mark, e.g. the message ID that did it).
	Mark string
	// Replies are the replies of the effect's commands (Applied only).
	Replies []interface{}
}

// onceScript: KEYS[1]=dedupe key, KEYS[2..]=key of each command;
// ARGV[1]=ttl ms, ARGV[2]=mark, then per command: extra-arg count n,
// command name, n args. The dedupe key is written last: a command that
// raises an error aborts the script before it, so a failed effect can be
// retried. (Redis does not roll back writes done before the error, so put
// checks before writes.)
var onceScript = redis.NewScript(`
local prev = redis.call('GET', KEYS[1])
if prev then return {0, prev} end
local out = {1, ARGV[2]}
local a = 3
for k = 2, #KEYS do
  local n = tonumber(ARGV[a])
  local cmd = {ARGV[a + 1], KEYS[k]}
  for j = 1, n do cmd[#cmd + 1] = ARGV[a + 1 + j] end
  a = a + 2 + n
  out[#out + 1] = redis.call(unpack(cmd))
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
return out
`)

// Once applies effect unless dedupeKey exists, and then sets dedupeKey to
// mark with the given TTL — all in one Lua script, so no crash, redelivery or
// concurrent duplicate can apply it twice while the key lives. The TTL must
// outlast every possible redelivery of the message (reclaim idle time ×
// delivery limit, plus the time a message can sit in the stream).
func Once(ctx context.Context, rdb redis.Scripter, dedupeKey string, ttl time.Duration, mark string, effect *Effect) (OnceResult, error) {
	if ttl <= 0 {
		return OnceResult{}, errors.New("streams: Once needs a positive dedupe TTL")
	}
	var e Effect
	if effect != nil {
		e = *effect
	}
	keys := make([]string, 0, 1+len(e.keys))
	keys = append(keys, dedupeKey)
	keys = append(keys, e.keys...)
	args := make([]interface{}, 0, 2+len(e.args))
	args = append(args, ttl.Milliseconds(), mark)
	args = append(args, e.args...)
	res, err := onceScript.Run(ctx, rdb, keys, args...).Slice()
	if err != nil {
		return OnceResult{}, fmt.Errorf("once %s: %w", dedupeKey, err)
	}
	return parseOnce(res)
}

func parseOnce(res []interface{}) (OnceResult, error) {
	if len(res) < 2 {
		return OnceResult{}, fmt.Errorf("once: unexpected reply %v", res)
	}
	applied, _ := res[0].(int64)
	mark, _ := res[1].(string)
	return OnceResult{Applied: applied == 1, Mark: mark, Replies: res[2:]}, nil
}

// OnceScript is a custom Lua effect guarded the same way as Once, for effects
// that need logic (e.g. refuse a debit that would make a balance negative).
// Inside the body KEYS and ARGV are the caller's own (the dedupe key and the
// guard's arguments are hidden). The body's return value is returned as the
// only reply. If the body raises an error (error() or a failing
// redis.call) the dedupe key is not set and the call can be retried; if it
// returns normally — including `return redis.error_reply(...)` as a decided
// refusal — the dedupe key is set and a duplicate will not run it again.
type OnceScript struct{ script *redis.Script }

// NewOnceScript wraps a Lua body (statements ending in `return ...`).
func NewOnceScript(body string) *OnceScript {
	return &OnceScript{script: redis.NewScript(`
local dedupe, ttl, mark = KEYS[1], ARGV[1], ARGV[2]
local prev = redis.call('GET', dedupe)
if prev then return {0, prev} end
local KEYS = {unpack(KEYS, 2)}
local ARGV = {unpack(ARGV, 3)}
local function body()
` + body + `
end
local r = body()
redis.call('SET', dedupe, mark, 'PX', ttl)
return {1, mark, r}
`)}
}

// Run executes the guarded body with the caller's keys and args.
func (s *OnceScript) Run(ctx context.Context, rdb redis.Scripter, dedupeKey string, ttl time.Duration, mark string, keys []string, args ...interface{}) (OnceResult, error) {
	if ttl <= 0 {
		return OnceResult{}, errors.New("streams: OnceScript needs a positive dedupe TTL")
	}
	allKeys := append([]string{dedupeKey}, keys...)
	allArgs := append([]interface{}{ttl.Milliseconds(), mark}, args...)
	res, err := s.script.Run(ctx, rdb, allKeys, allArgs...).Slice()
	if err != nil {
		return OnceResult{}, fmt.Errorf("once %s: %w", dedupeKey, err)
	}
	return parseOnce(res)
}
