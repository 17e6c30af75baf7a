-- Compare-and-delete: remove the lock only if it still carries our token,
-- so a holder that ran past its TTL cannot delete the next holder's lock.
-- KEYS[1] lock key; ARGV[1] our token. Returns 1 if deleted, 0 if not ours.
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
