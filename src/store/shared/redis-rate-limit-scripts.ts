/**
 * Lua scripts for atomic rate limiting on Redis. Admission validates every counter and the slot first
 * and increments only when all pass, so a rejected request changes nothing and no scope keeps a
 * partial charge. Time is the Redis server's (TIME) unless the caller supplies one (tests). An admission
 * that reaches Redis after its deadline (the gateway gave up on it) changes nothing and answers 5.
 *
 * Minute counters are hashes {n = count, e = expiry ms} judged against that time (Redis expiry only
 * cleans up); hour and day counters are plain integers whose keys carry the window start.
 *
 * Budget counters are integers (micro-USD) at `<key>:<durationMs>:<window index>` (expiring at the
 * window's end) or `<key>:life`; admission only reads them, settlement adds to them. Reservations in
 * flight on a budget live beside it: `<key>:rz`, a sorted set of `<member>|<amount>` scored by lease
 * expiry, and `<key>:rs`, their sum; expired members are swept (and taken off the sum) before each
 * check, so an unsettled reservation frees itself when its lease ends.
 *
 * Output-token counters (output-counters.ts) are read after every other check, per UTC minute of `now`:
 * a counter at or above its limit answers 2, an unknown-usage marker 3; and the store epoch marker (a
 * hash {id, until} without expiry) must be there: when it is missing the writes it vouched for may be
 * lost, so it is re-created paused (`until` = next minute, answer 4) and replaced by `epochId` once
 * that minute starts. Every recording advances the marker's `seq`; a marker whose `seq` is below what
 * this process saw acknowledged in the same epoch (`seenId`, `seenSeq`) was restored from an older
 * state (a restore, a failover to a lagging replica), and pauses the same way.
 *
 * ADMIT  KEYS: counter keys…, [slot key], read keys…, budget keys…, [output keys…, epoch key]
 *        ARGV: now|'', deadline|'', checkCount, (window, limit, amount)…, slotLimit|'', slotMember,
 *              slotLeaseMs, readCount, budgetCount, (durationMs, limit|'')…, reserveMember|'',
 *              reserveAmount, reserveLeaseMs, outputCount, epochId, seenId, seenSeq, outputLimit…
 *        →  {1, now, count…, reset…, read…, spent…, output…}
 *           or {0, now, failedIndex(1-based), count, reset, reserved, read…}
 *           (a budget's failedIndex is checkCount + 1 + its 1-based index; reserved: its reservations)
 *           or {2 exceeded | 3 unknown, now, outputIndex(1-based), recorded, 0, 0, read…}
 *           or {4 unavailable, now, 0, pausedUntilMinute, 0, 0, read…}
 *           or {5 late, now}
 * SETTLE KEYS: adjusted keys…, budget keys…, released slot keys…, released reservation budget keys…,
 *              renewed slot keys…, renewed reservation budget keys…
 *        ARGV: now|'', adjustmentCount, (window, delta, createMinute)…, budgetCount,
 *              (durationMs, amount, raiseInWindow|'')…, releasedSlots, releasedReservations,
 *              renewedSlots, renewedReservations, renewLeaseMs, then per lease in KEYS order its
 *              member (slots) or member, amount (reservations)
 */
import { STORE_CLOCK_LUA } from './redis-script-clock.ts';

const CLOCK = `${STORE_CLOCK_LUA}
local function minuteCounter(key)
  local fields = redis.call('HMGET', key, 'n', 'e')
  local expires = tonumber(fields[2])
  if expires == nil or expires <= now then return 0, nil end
  return tonumber(fields[1]) or 0, expires
end
local function saveMinute(key, count, expires)
  redis.call('HSET', key, 'n', count, 'e', expires)
  redis.call('PEXPIRE', key, math.max(1, expires - now) + 1000)
end
local function budgetKey(base, durationText)
  local duration = tonumber(durationText)
  if duration <= 0 then return base .. ':life', 0, 0 end
  local index = math.floor(now / duration)
  return base .. ':' .. durationText .. ':' .. string.format('%d', index), (index + 1) * duration, index
end
local function expireBudget(key, reset)
  if reset > 0 and redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, math.max(1, reset - now)) end
end
local function extendTtl(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
-- Sets a reservation sum to what is left, dropping it with its last member.
local function keepSum(base, left)
  if redis.call('ZCARD', base .. ':rz') == 0 then
    redis.call('DEL', base .. ':rs')
    return 0
  end
  if left < 0 then redis.call('SET', base .. ':rs', 0, 'KEEPTTL') return 0 end
  return left
end`;

export const ADMIT_SCRIPT = `${CLOCK}
if ARGV[2] ~= '' and now > tonumber(ARGV[2]) then return {5, now} end
local checkCount = tonumber(ARGV[3])
local slotAt = 4 + checkCount * 3
local slotLimit = ARGV[slotAt]
local hasSlot = slotLimit ~= ''
local readCount = tonumber(ARGV[slotAt + 3])
local readFrom = checkCount + (hasSlot and 1 or 0)

local reads = {}
for i = 1, readCount do
  local count = minuteCounter(KEYS[readFrom + i])
  reads[i] = count
end

local function rejected(index, count, reset, code, reserved)
  local result = {code or 0, now, index, count, reset, reserved or 0}
  for r = 1, readCount do result[6 + r] = reads[r] end
  return result
end

-- The reservations still in flight on a budget, after sweeping those whose lease ended.
local function reservedOn(base)
  local zkey = base .. ':rz'
  local expired = redis.call('ZRANGEBYSCORE', zkey, '-inf', now)
  if #expired == 0 then return tonumber(redis.call('GET', base .. ':rs') or '0') end
  local gone = 0
  for _, member in ipairs(expired) do gone = gone + (tonumber(string.match(member, '|(%d+)$')) or 0) end
  redis.call('ZREMRANGEBYSCORE', zkey, '-inf', now)
  return keepSum(base, tonumber(redis.call('DECRBY', base .. ':rs', gone)))
end

local budgetCount = tonumber(ARGV[slotAt + 4])
local budgetFrom = readFrom + readCount
local reserveAt = slotAt + 5 + budgetCount * 2
local reserveMember, reserveAmount = ARGV[reserveAt], tonumber(ARGV[reserveAt + 1])
local spent = {}
for b = 1, budgetCount do
  local at = slotAt + 5 + (b - 1) * 2
  local base = KEYS[budgetFrom + b]
  local key, reset = budgetKey(base, ARGV[at])
  local value = tonumber(redis.call('GET', key) or '0')
  local limit = ARGV[at + 1]
  if limit ~= '' then
    local held = value + reservedOn(base)
    if held >= tonumber(limit) or held + reserveAmount > tonumber(limit) then
      return rejected(checkCount + 1 + b, value, reset, 0, held - value)
    end
  end
  spent[b] = value
end

local keys, windows, counts, resets = {}, {}, {}, {}
for i = 1, checkCount do
  local at = 4 + (i - 1) * 3
  local window, limit, amount = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  local key, current, reset
  if window == 'minute' then
    key = KEYS[i]
    local expires
    current, expires = minuteCounter(key)
    reset = expires or (now + 60000)
  else
    local size = window == 'hour' and 3600000 or 86400000
    local start = now - (now % size)
    key = KEYS[i] .. ':' .. start
    current = tonumber(redis.call('GET', key) or '0')
    reset = start + size
  end
  if current + amount > limit then return rejected(i, current, reset) end
  keys[i], windows[i], counts[i], resets[i] = key, window, current + amount, reset
end

if hasSlot then
  local slotKey = KEYS[checkCount + 1]
  redis.call('ZREMRANGEBYSCORE', slotKey, '-inf', now)
  local inFlight = redis.call('ZCARD', slotKey)
  if inFlight >= tonumber(slotLimit) then
    local first = redis.call('ZRANGE', slotKey, 0, 0, 'WITHSCORES')
    return rejected(checkCount + 1, inFlight, tonumber(first[2] or now))
  end
end

local outputAt = reserveAt + 3
local outputCount = tonumber(ARGV[outputAt] or '0')
local outputFrom = budgetFrom + budgetCount
local recorded = {}
if outputCount > 0 then
  local minute = string.format('%d', math.floor(now / 60000))
  local epochKey = KEYS[outputFrom + outputCount + 1]
  local epoch = redis.call('HMGET', epochKey, 'id', 'until', 'seq')
  local pausedUntil = 0
  if epoch[2] then pausedUntil = tonumber(epoch[2]) end
  local lost = epoch[1] and epoch[1] ~= '' and epoch[1] == ARGV[outputAt + 2]
    and (tonumber(epoch[3]) or 0) < tonumber(ARGV[outputAt + 3])
  if not epoch[1] or lost then
    pausedUntil = tonumber(minute) + 1
    redis.call('HSET', epochKey, 'id', '', 'until', pausedUntil, 'seq', 0)
  end
  if tonumber(minute) < pausedUntil then return rejected(0, pausedUntil, 0, 4) end
  if epoch[1] == '' then redis.call('HSET', epochKey, 'id', ARGV[outputAt + 1], 'until', 0, 'seq', 0) end
  for o = 1, outputCount do
    local base = KEYS[outputFrom + o]
    if redis.call('EXISTS', base .. ':u:' .. minute) == 1 then return rejected(o, 0, 0, 3) end
    local value = tonumber(redis.call('GET', base .. ':' .. minute) or '0')
    if value >= tonumber(ARGV[outputAt + 3 + o]) then return rejected(o, value, 0, 2) end
    recorded[o] = value
  end
end

for i = 1, checkCount do
  if windows[i] == 'minute' then
    saveMinute(keys[i], counts[i], resets[i])
  else
    redis.call('INCRBY', keys[i], ARGV[4 + (i - 1) * 3 + 2])
    if redis.call('PTTL', keys[i]) < 0 then redis.call('PEXPIRE', keys[i], resets[i] - now) end
  end
end
if hasSlot then
  local slotKey = KEYS[checkCount + 1]
  local lease = tonumber(ARGV[slotAt + 2])
  redis.call('ZADD', slotKey, now + lease, ARGV[slotAt + 1])
  extendTtl(slotKey, lease)
end
if reserveMember ~= '' and reserveAmount > 0 then
  local lease = tonumber(ARGV[reserveAt + 2])
  for b = 1, budgetCount do
    if ARGV[slotAt + 5 + (b - 1) * 2 + 1] ~= '' then
      local base = KEYS[budgetFrom + b]
      redis.call('ZADD', base .. ':rz', now + lease, reserveMember .. '|' .. reserveAmount)
      redis.call('INCRBY', base .. ':rs', reserveAmount)
      extendTtl(base .. ':rz', lease)
      extendTtl(base .. ':rs', lease)
    end
  end
end

local result = {1, now}
for i = 1, checkCount do result[2 + i] = counts[i] end
for i = 1, checkCount do result[2 + checkCount + i] = resets[i] end
for r = 1, readCount do result[2 + checkCount * 2 + r] = reads[r] end
for b = 1, budgetCount do result[2 + checkCount * 2 + readCount + b] = spent[b] end
for o = 1, outputCount do result[2 + checkCount * 2 + readCount + budgetCount + o] = recorded[o] end
return result`;

export const SETTLE_SCRIPT = `${CLOCK}
local count = tonumber(ARGV[2])
for i = 1, count do
  local at = 3 + (i - 1) * 3
  local window, delta, create = ARGV[at], tonumber(ARGV[at + 1]), ARGV[at + 2]
  local key = KEYS[i]
  if window == 'minute' then
    local current, expires = minuteCounter(key)
    if expires ~= nil then
      saveMinute(key, math.max(0, current + delta), expires)
    elseif create == '1' and delta > 0 then
      saveMinute(key, delta, now + 60000)
    end
  elseif redis.call('EXISTS', key) == 1 then
    if redis.call('INCRBY', key, delta) < 0 then redis.call('SET', key, 0, 'KEEPTTL') end
  end
end
local budgetAt = 3 + count * 3
local budgetCount = tonumber(ARGV[budgetAt])
for b = 1, budgetCount do
  local at = budgetAt + 1 + (b - 1) * 3
  local key, reset, index = budgetKey(KEYS[count + b], ARGV[at])
  local raise = ARGV[at + 2]
  if raise == '' then
    redis.call('INCRBY', key, ARGV[at + 1])
    expireBudget(key, reset)
  elseif tonumber(raise) == index and tonumber(redis.call('GET', key) or '0') < tonumber(ARGV[at + 1]) then
    redis.call('SET', key, ARGV[at + 1], 'KEEPTTL')
    expireBudget(key, reset)
  end
end

-- A lease is renewed only while it has not expired (an expired one stays ended even before a sweep).
local function live(key, member)
  local expires = redis.call('ZSCORE', key, member)
  return expires and tonumber(expires) > now
end
local leaseAt = budgetAt + 1 + budgetCount * 3
local lease = tonumber(ARGV[leaseAt + 4])
local k, a = count + budgetCount, leaseAt + 5
for _ = 1, tonumber(ARGV[leaseAt]) do
  k = k + 1
  redis.call('ZREM', KEYS[k], ARGV[a])
  a = a + 1
end
for _ = 1, tonumber(ARGV[leaseAt + 1]) do
  k = k + 1
  local base, amount = KEYS[k], tonumber(ARGV[a + 1])
  if redis.call('ZREM', base .. ':rz', ARGV[a] .. '|' .. ARGV[a + 1]) == 1 then
    keepSum(base, tonumber(redis.call('DECRBY', base .. ':rs', amount)))
  end
  a = a + 2
end
for _ = 1, tonumber(ARGV[leaseAt + 2]) do
  k = k + 1
  if live(KEYS[k], ARGV[a]) then
    redis.call('ZADD', KEYS[k], now + lease, ARGV[a])
    extendTtl(KEYS[k], lease)
  end
  a = a + 1
end
for _ = 1, tonumber(ARGV[leaseAt + 3]) do
  k = k + 1
  local base, member = KEYS[k], ARGV[a] .. '|' .. ARGV[a + 1]
  if live(base .. ':rz', member) then
    redis.call('ZADD', base .. ':rz', now + lease, member)
    extendTtl(base .. ':rz', lease)
    extendTtl(base .. ':rs', lease)
  end
  a = a + 2
end
return 1`;
