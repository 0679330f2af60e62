/**
 * Lua scripts that record output-token usage on Redis (layout in output-counters.ts). The minute is
 * the Redis server's (TIME) at recording time unless the caller supplies one (tests), so every replica
 * charges the same minute and all output of one provider attempt lands in one minute.
 *
 * RECORD  KEYS: receipt key, epoch key, base keys…   ARGV: now|'', amount, max, graceMs, receiptTtlMs
 *         A receipt already there means this write was applied before (a retry after a lost reply):
 *         nothing is added. A live epoch marker's `seq` advances (a missing or paused one is left for
 *         admission to notice).  →  {1 added | 2 duplicate, now, minute, saturated 0|1, epochId, seq, count…}
 * UNKNOWN KEYS: base keys…   ARGV: now|'', graceMs   →  {now, minute}
 * EPOCH   KEYS: epoch key   ARGV: id   →  1 when the marker was created, 0 when it was there
 */
const CLOCK = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end`;

export const RECORD_OUTPUT_SCRIPT = `${CLOCK}
local counts = {}
local prior = redis.call('GET', KEYS[1])
if prior then
  local minute = string.match(prior, '^(%d+)')
  for i = 3, #KEYS do counts[i - 2] = tonumber(redis.call('GET', KEYS[i] .. ':' .. minute) or '0') end
  return {2, now, tonumber(minute), 0, '', 0, unpack(counts)}
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
return {1, now, minuteNumber, saturated, epochId, seq, unpack(counts)}`;

export const MARK_OUTPUT_UNKNOWN_SCRIPT = `${CLOCK}
local minuteNumber = math.floor(now / 60000)
local minute = string.format('%d', minuteNumber)
local ttl = math.max(1, (minuteNumber + 1) * 60000 + tonumber(ARGV[2]) - now)
for i = 1, #KEYS do redis.call('SET', KEYS[i] .. ':u:' .. minute, '1', 'PX', ttl) end
return {now, minuteNumber}`;

export const ENSURE_OUTPUT_EPOCH_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'until', 0, 'seq', 0)
return 1`;
