-- Compare-and-extend: push the TTL out only if the lock still carries our
-- token (the watchdog's renewal).
-- KEYS[1] lock key; ARGV[1] our token; ARGV[2] TTL in ms. Returns 1 or 0.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
