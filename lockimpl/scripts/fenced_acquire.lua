-- Acquire and take a fencing number in one atomic step, so no other holder
-- can get a number between our SET and our INCR.
-- KEYS[1] lock key; KEYS[2] fence counter; ARGV[1] token; ARGV[2] TTL in ms.
-- Returns the fence (>= 1), or 0 when someone else holds the lock.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return redis.call("INCR", KEYS[2])
end
return 0
