/**
 * Lua scripts that record output-token usage on Redis (layout in output-counters.ts). The minute is
 * the Redis server's (TIME) at recording time unless the caller supplies one (tests), so every replica
 * charges the same minute and all output of one provider attempt lands in one minute.
 *
 * RECORD  KEYS: receipt key, epoch key, base keys…   ARGV: now|'', amount, max, graceMs, receiptTtlMs
 *         A receipt already there means this write was applied before (a retry after a lost reply):
 *         nothing is added. A live epoch marker's `seq` advances (a missing or paused one is left for
 *         admission to notice). Each counter's unknown-usage marker of that minute is reported too, since
 *         another request may have set it (remaining capacity is then not shown).
 *         →  {1 added | 2 duplicate, now, minute, saturated 0|1, epochId, seq, count…, unknown 0|1…}
 * UNKNOWN KEYS: base keys…   ARGV: now|'', graceMs   →  {now, minute}
 * EPOCH   KEYS: epoch key   ARGV: now|''   →  1 when the marker was created, 0 when it was there.
 *         A missing marker is created paused (no id, `until` the next minute), as admission re-creates
 *         a lost one: a replica starting just after a flush must not vouch for writes that are gone
 *         (another process may have seen them acknowledged), so the first start of a fresh store pauses
 *         governed callers until the next minute too.
 */
import { STORE_CLOCK_LUA } from './redis-script-clock.ts';

export const RECORD_OUTPUT_SCRIPT = `${STORE_CLOCK_LUA}
local function reply(code, minute, saturated, epochId, seq, counts)
  local result = {code, now, tonumber(minute), saturated, epochId, seq}
  for i = 1, #counts do result[6 + i] = counts[i] end
  for i = 3, #KEYS do result[4 + #counts + i] = redis.call('EXISTS', KEYS[i] .. ':u:' .. minute) end
  return result
end
local counts = {}
local prior = redis.call('GET', KEYS[1])
if prior then
  local minute = string.match(prior, '^(%d+)')
  for i = 3, #KEYS do counts[i - 2] = tonumber(redis.call('GET', KEYS[i] .. ':' .. minute) or '0') end
  return reply(2, minute, 0, '', 0, counts)
end
local minuteNumber = math.floor(now / 60000)
local minute = string.format('%d', minuteNumber)
local amount, max = tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl = math.max(1, (minuteNumber + 1) * 60000 + tonumber(ARGV[4]) - now)
local saturated = 0
for i = 3, #KEYS do
  local key = KEYS[i] .. ':' .. minute
  local value = tonumber(redis.call('GET', key) or '0') + amount
  if value > max then
    value = max
    saturated = 1
  end
  redis.call('SET', key, string.format('%d', value), 'PX', ttl)
  counts[i - 2] = value
end
redis.call('SET', KEYS[1], minute .. ':' .. ARGV[2], 'PX', ARGV[5])
local epochId, seq = redis.call('HGET', KEYS[2], 'id'), 0
if epochId and epochId ~= '' then seq = redis.call('HINCRBY', KEYS[2], 'seq', 1) else epochId = '' end
return reply(1, minute, saturated, epochId, seq, counts)`;

export const MARK_OUTPUT_UNKNOWN_SCRIPT = `${STORE_CLOCK_LUA}
local minuteNumber = math.floor(now / 60000)
local minute = string.format('%d', minuteNumber)
local ttl = math.max(1, (minuteNumber + 1) * 60000 + tonumber(ARGV[2]) - now)
for i = 1, #KEYS do redis.call('SET', KEYS[i] .. ':u:' .. minute, '1', 'PX', ttl) end
return {now, minuteNumber}`;

export const ENSURE_OUTPUT_EPOCH_SCRIPT = `${STORE_CLOCK_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', '', 'until', math.floor(now / 60000) + 1, 'seq', 0)
return 1`;
