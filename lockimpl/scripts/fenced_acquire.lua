-- Acquire and take a fencing number in one atomic step, so no other holder
-- can get a number between our SET and our INCR.
-- KEYS[1] lock key; KEYS[2] fence counter; ARGV[1] token; ARGV[2] TTL in ms;
-- ARGV[3] the counter's expiry in ms, pushed out on every acquire ("0": none).
-- Returns the fence (>= 1), or 0 when someone else holds the lock.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  local fence = redis.call("INCR", KEYS[2])
  if ARGV[3] ~= "0" then
    redis.call("PEXPIRE", KEYS[2], ARGV[3])
  end
  return fence
end
return 0
