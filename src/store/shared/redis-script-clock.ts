/**
 * The opening of every Redis script that works in store time: `now` (epoch ms) is ARGV[1] when the
 * caller supplies one (tests inject a clock), else the Redis server's TIME, so every replica agrees.
 */
export const STORE_CLOCK_LUA = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end`;
