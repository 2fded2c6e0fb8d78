package store

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// accountPrelude is the start of every account script. KEYS: acct, holds,
// ops, ledger. ARGV[1..3]: operation id, digest, now (Unix ms); the
// operation's own arguments follow. Every script answers
// {status, reason, avail, held, seq, da, dh, x1, x2}: status 0 = applied or
// refused now (and remembered), 1 = a repeat of the id (the first answer),
// 2 = the id was used for other content (conflict, nothing remembered),
// 3 = no such account (nothing remembered).
//
// Numbers: Lua numbers are doubles, exact to 2^53; every amount and balance
// stays below 2^50 (payout.MaxPot, ledger.MaxAmount), and n() writes them
// without an exponent.
const accountPrelude = `
local acct, holds, ops, ledger = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local op, digest, now = ARGV[1], ARGV[2], ARGV[3]
local function n(x) return string.format('%.0f', x) end
local function load()
  local v = redis.call('HMGET', acct, 'avail', 'held', 'seq', 'issued', 'collected', 'paid', 'bday')
  if not v[3] then return nil end
  return {avail = tonumber(v[1]), held = tonumber(v[2]), seq = tonumber(v[3]), issued = tonumber(v[4]),
    collected = tonumber(v[5]), paid = tonumber(v[6]), bday = v[7] or ''}
end
local function fresh() return {avail = 0, held = 0, seq = 0, issued = 0, collected = 0, paid = 0, bday = ''} end
local function cached()
  local c = redis.call('HGET', ops, op)
  if not c then return nil end
  local f = {}
  for x in string.gmatch(c, '[^|]+') do f[#f + 1] = x end
  if f[1] ~= digest then return {2, REASON_CONFLICT, 0, 0, 0, 0, 0, 0, 0} end
  return {1, tonumber(f[2]), tonumber(f[3]), tonumber(f[4]), tonumber(f[5]), tonumber(f[6]), tonumber(f[7]),
    tonumber(f[8]), tonumber(f[9])}
end
local function remember(r)
  redis.call('HSET', ops, op, digest .. '|' .. r[2] .. '|' .. n(r[3]) .. '|' .. n(r[4]) .. '|' .. n(r[5]) .. '|' ..
    n(r[6]) .. '|' .. n(r[7]) .. '|' .. n(r[8]) .. '|' .. n(r[9]))
  return r
end
local function refuse(b, reason) return remember({0, reason, b.avail, b.held, b.seq, 0, 0, 0, 0}) end
local function unknown() return {3, REASON_UNKNOWN_ACCOUNT, 0, 0, 0, 0, 0, 0, 0} end
-- entry writes the balance and appends its ledger entry, in this script:
-- the balance is always the ledger's sum.
local function entry(b, kind, da, dh, cp, tbl, game, memo)
  b.seq = b.seq + 1
  redis.call('HSET', acct, 'avail', n(b.avail), 'held', n(b.held), 'seq', n(b.seq), 'issued', n(b.issued),
    'collected', n(b.collected), 'paid', n(b.paid), 'bday', b.bday)
  redis.call('XADD', ledger, '*', 'seq', n(b.seq), 'kind', kind, 'op', op, 'da', n(da), 'dh', n(dh),
    'a', n(b.avail), 'h', n(b.held), 'cp', cp, 'table', tbl, 'game', game, 'memo', memo, 'ts', now)
  redis.call('PUBLISH', ledger, '')
  return {0, 0, b.avail, b.held, b.seq, da, dh, 0, 0}
end
local function hold(t)
  local h = redis.call('HGET', holds, t)
  if not h then return nil end
  local amount, forfeited = string.match(h, '^(%d+)|(%d)$')
  return tonumber(amount), tonumber(forfeited)
end
`

// openScript: ARGV[4] = the sign-up grant.
const openScript = `
local c = cached() if c then return c end
local b = load()
if b then return refuse(b, REASON_ACCOUNT_EXISTS) end
b = fresh()
local g = tonumber(ARGV[4])
b.avail, b.issued = g, g
return remember(entry(b, KIND_SIGNUP_GRANT, g, 0, ISSUER, '', '', ''))
`

// bonusScript: ARGV[4] = day (YYYY-MM-DD), ARGV[5] = amount. Days compare
// as strings; a day not after the last claimed one is refused.
const bonusScript = `
local b = load() if not b then return unknown() end
local c = cached() if c then return c end
local day, g = ARGV[4], tonumber(ARGV[5])
if b.bday >= day then return refuse(b, REASON_BONUS_CLAIMED) end
b.bday = day
b.avail, b.issued = b.avail + g, b.issued + g
return remember(entry(b, KIND_DAILY_BONUS, g, 0, ISSUER, '', '', day))
`

// holdScript: ARGV[4] = table, ARGV[5] = amount, ARGV[6] = game id,
// ARGV[7] = the pot's answer (a refusal reason, 0 when it took the holder).
// A table whose settlement or release already passed this account (its
// collect or void step is remembered) takes no hold from it.
const holdScript = `
local b = load() if not b then return unknown() end
local c = cached() if c then return c end
local t, amount, game, pot = ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
if pot ~= 0 then return refuse(b, pot) end
if redis.call('HEXISTS', ops, COLLECT .. t) == 1 or redis.call('HEXISTS', ops, VOID .. t) == 1 then
  return refuse(b, REASON_TABLE_CLOSED)
end
if redis.call('HEXISTS', holds, t) == 1 then return refuse(b, REASON_HOLD_EXISTS) end
if b.avail < amount then return refuse(b, REASON_INSUFFICIENT_FUNDS) end
redis.call('HSET', holds, t, n(amount) .. '|0')
b.avail, b.held = b.avail - amount, b.held + amount
return remember(entry(b, KIND_HOLD, -amount, amount, POT .. t, t, game, ''))
`

// releaseScript: ARGV[4] = table.
const releaseScript = `
local b = load() if not b then return unknown() end
local c = cached() if c then return c end
local t = ARGV[4]
local amount, forfeited = hold(t)
if not amount then return refuse(b, REASON_HOLD_NOT_FOUND) end
if forfeited == 1 then return refuse(b, REASON_STAKE_FORFEITED) end
redis.call('HDEL', holds, t)
b.avail, b.held = b.avail + amount, b.held - amount
return remember(entry(b, KIND_RELEASE, amount, -amount, POT .. t, t, '', ''))
`

// forfeitScript: ARGV[4] = table.
const forfeitScript = `
local b = load() if not b then return unknown() end
local c = cached() if c then return c end
local t = ARGV[4]
local amount, forfeited = hold(t)
if not amount then return refuse(b, REASON_HOLD_NOT_FOUND) end
if forfeited == 1 then return refuse(b, REASON_STAKE_FORFEITED) end
redis.call('HSET', holds, t, n(amount) .. '|1')
return remember(entry(b, KIND_FORFEIT, 0, 0, POT .. t, t, '', ''))
`

// resolveScript is a settlement's collect step (ARGV[5] = "collect": the
// hold goes to the pot) or a release's void step ("void": back to the
// account) on one holder; ARGV[4] = table, ARGV[6] = game id. It answers
// x1 = the amount, x2 = 1 if the stake was forfeited. A holder without an
// open hold gives 0; either way the step is remembered, which also closes
// the table to later holds of this account.
const resolveScript = `
local b = load() if not b then return unknown() end
local c = cached() if c then return c end
local t, how, game = ARGV[4], ARGV[5], ARGV[6]
local amount, forfeited = hold(t)
if not amount then return remember({0, 0, b.avail, b.held, b.seq, 0, 0, 0, 0}) end
redis.call('HDEL', holds, t)
local r
if how == 'collect' then
  b.held, b.collected = b.held - amount, b.collected + amount
  r = entry(b, KIND_STAKE_SETTLED, 0, -amount, POT .. t, t, game, '')
else
  b.avail, b.held = b.avail + amount, b.held - amount
  r = entry(b, KIND_RELEASE, amount, -amount, POT .. t, t, game, '')
end
r[8], r[9] = amount, forfeited
return remember(r)
`

// payScript is a settlement's payment to one account: ARGV[4] = table,
// ARGV[5] = amount, ARGV[6] = game id, ARGV[7] = "1" to open the account if
// it has none (the forfeit account).
const payScript = `
local b = load()
if not b then
  if ARGV[7] ~= '1' then return unknown() end
  b = fresh()
end
local c = cached() if c then return c end
local t, amount, game = ARGV[4], tonumber(ARGV[5]), ARGV[6]
b.avail, b.paid = b.avail + amount, b.paid + amount
return remember(entry(b, KIND_PAYOUT, amount, 0, POT .. t, t, game, ''))
`

// potHoldScript registers a holder at an open pot (opening it with the
// game on the first hold). KEYS: pot, holders. ARGV: account, game number,
// now. Answers 0 or a refusal reason.
const potHoldScript = `
local st = redis.call('HMGET', KEYS[1], 'state', 'game')
if not st[1] then
  redis.call('HSET', KEYS[1], 'state', 'open', 'game', ARGV[2], 'created', ARGV[3])
elseif st[1] ~= 'open' then
  return REASON_TABLE_CLOSED
elseif st[2] ~= ARGV[2] then
  return REASON_GAME_MISMATCH
end
redis.call('SADD', KEYS[2], ARGV[1])
return 0
`

// potBeginScript starts a pot's resolution. KEYS: pot, holders. ARGV:
// "settle" or "release", digest, game id, standings, now, the number of
// standings, then the seats of each game (by its number): standings for more
// seats than the pot's game has are refused MALFORMED. The state changes
// in the same step that reads the holders, so a holder registered later was
// refused (potHoldScript) and every holder that was not is in the answer.
// Answers {what, reason, game, holders...}: what = "none" (no pot: nothing
// to settle), "refused" (reason), "new" or "again" (a resolution under way
// or done, with the same input).
const potBeginScript = `
local pot, kind = KEYS[1], ARGV[1]
local st = redis.call('HMGET', pot, 'state', 'digest', 'game')
local game = tonumber(st[3]) or 0
local function holders(what)
  local out = {what, 0, game}
  for _, a in ipairs(redis.call('SMEMBERS', KEYS[2])) do out[#out + 1] = a end
  return out
end
if kind == 'settle' then
  if not st[1] then return {'none', 0, 0} end
  if st[1] == 'released' then return {'refused', REASON_ALREADY_SETTLED, game} end
  if st[1] ~= 'open' then
    if st[2] ~= ARGV[2] then return {'refused', REASON_CONFLICT, game} end
    return holders('again')
  end
  local seats = tonumber(ARGV[7 + game - 1] or '0') or 0
  if tonumber(ARGV[6]) > seats then return {'refused', REASON_MALFORMED, game} end
  redis.call('HSET', pot, 'state', 'settling', 'digest', ARGV[2], 'game_id', ARGV[3], 'standings', ARGV[4], 'started', ARGV[5])
  return holders('new')
end
if not st[1] then
  redis.call('HSET', pot, 'state', 'released', 'created', ARGV[5], 'started', ARGV[5])
  return {'new', 0, 0}
end
if st[1] == 'settling' or st[1] == 'settled' then return {'refused', REASON_ALREADY_SETTLED, game} end
if st[1] == 'released' then return holders('again') end
redis.call('HSET', pot, 'state', 'released', 'started', ARGV[5])
return holders('new')
`

// potPlanScript stores a settlement's plan once. KEYS: pot. ARGV: plan.
// Answers the stored plan (the first one written).
const potPlanScript = `
local p = redis.call('HGET', KEYS[1], 'plan')
if p then return p end
redis.call('HSET', KEYS[1], 'plan', ARGV[1])
return ARGV[1]
`

// potDoneScript marks a resolution finished, publishes its GameSettled
// (the first time only: so once per table, by construction) and lets the
// pot expire. KEYS: pot, holders, settled stream. ARGV: now, ttl ms (0:
// keep), the GameSettled.
const potDoneScript = `
local st = redis.call('HGET', KEYS[1], 'state')
if st == 'settling' then redis.call('HSET', KEYS[1], 'state', 'settled') end
if not redis.call('HGET', KEYS[1], 'done') then
  redis.call('HSET', KEYS[1], 'done', ARGV[1])
  redis.call('XADD', KEYS[3], '*', 'data', ARGV[3])
  redis.call('PUBLISH', KEYS[3], '')
end
if tonumber(ARGV[2]) > 0 then
  for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, ARGV[2]) end
end
return 0
`

// constants are substituted into the scripts, so that the numbers and
// names they write are the contract's and not repeated by hand.
func constants() *strings.Replacer {
	var pairs []string
	for name, v := range walletv1.WalletRejectReason_value {
		pairs = append(pairs, "REASON_"+strings.TrimPrefix(name, "WALLET_REJECT_REASON_"), fmt.Sprint(v))
	}
	for name, v := range walletv1.LedgerEntryKind_value {
		pairs = append(pairs, "KIND_"+strings.TrimPrefix(name, "LEDGER_ENTRY_KIND_"), fmt.Sprint(v))
	}
	pairs = append(pairs,
		"ISSUER", quote(walletclient.IssuerAccount), "POT", quote(walletclient.PotAccount("")),
		"COLLECT", quote(ledger.CollectID("")), "VOID", quote(ledger.VoidID("")))
	// Longest names first, so that no name is replaced inside a longer one.
	sortPairs(pairs)
	return strings.NewReplacer(pairs...)
}

func quote(s string) string { return "'" + s + "'" }

func sortPairs(p []string) {
	for i := 0; i < len(p); i += 2 {
		for j := i + 2; j < len(p); j += 2 {
			if len(p[j]) > len(p[i]) {
				p[i], p[i+1], p[j], p[j+1] = p[j], p[j+1], p[i], p[i+1]
			}
		}
	}
}

type scripts struct {
	open, bonus, hold, release, forfeit, resolve, pay *redis.Script
	potHold, potBegin, potPlan, potDone               *redis.Script
}

func newScripts() *scripts {
	r := constants()
	acct := func(body string) *redis.Script { return redis.NewScript(r.Replace(accountPrelude + body)) }
	pot := func(body string) *redis.Script { return redis.NewScript(r.Replace(body)) }
	return &scripts{
		open: acct(openScript), bonus: acct(bonusScript), hold: acct(holdScript), release: acct(releaseScript),
		forfeit: acct(forfeitScript), resolve: acct(resolveScript), pay: acct(payScript),
		potHold: pot(potHoldScript), potBegin: pot(potBeginScript), potPlan: pot(potPlanScript), potDone: pot(potDoneScript),
	}
}
