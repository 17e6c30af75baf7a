-- Delete a gone cell's keys, unless its prefix was claimed since the sweep
-- read its owner marker (a run with the same seed started meanwhile).
-- KEYS[1] the cell's owner marker; KEYS[2..] its keys (or some of them);
-- ARGV[1] the marker's value when the sweep read it ("" for none); ARGV[2]
-- "1" to delete the marker too (the last batch). Returns the keys deleted.
local v = redis.call("GET", KEYS[1])
if (v or "") ~= ARGV[1] then
  return 0
end
local n = 0
for i = 2, #KEYS do
  n = n + redis.call("DEL", KEYS[i])
end
if v and ARGV[2] == "1" then
  n = n + redis.call("DEL", KEYS[1])
end
return n
