"""lockchaos driver for redis-py's redis.lock.Lock (docs/driver-protocol.md).

One process per pod: it reads requests as JSON lines on stdin and answers on
stdout. The lock is redis-py's own (SET key token NX PX, Lua compare-and-delete
release), used as a service would: Lock(name, timeout=TTL, blocking=False).
Debian/Ubuntu: apt-get install python3-redis.
"""
import json
import os
import sys

try:
    import redis
    from redis.exceptions import LockError, LockNotOwnedError, RedisError
except ImportError as e:  # say exactly what is missing, on stderr
    sys.stderr.write("redis-py is not installed (%s): apt-get install python3-redis, or pip install redis\n" % e)
    sys.exit(3)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    host, port = os.environ["LOCKCHAOS_ADDRS"].split(",")[0].rsplit(":", 1)
    ttl = int(os.environ["LOCKCHAOS_TTL_MS"]) / 1000.0
    call = max(int(os.environ.get("LOCKCHAOS_CALL_TIMEOUT_MS", "250")), 1) / 1000.0
    client = redis.Redis(host=host, port=int(port), socket_timeout=call, socket_connect_timeout=call,
                         retry_on_timeout=False)
    send({"hello": "lockchaos-driver", "version": 1, "name": "redis-py %s redis.lock.Lock" % redis.__version__})
    leases = {}
    next_id = 0
    for line in sys.stdin:
        req = json.loads(line)
        rid, op = req["id"], req["op"]
        try:
            if op == "acquire":
                lock = client.lock(req["key"], timeout=ttl, blocking=False)
                if lock.acquire(blocking=False):
                    next_id += 1
                    leases[next_id] = lock
                    token = lock.local.token
                    send({"id": rid, "result": "ok", "lease": next_id,
                          "token": token.decode() if isinstance(token, bytes) else str(token)})
                else:
                    send({"id": rid, "result": "refused"})
            elif op == "release":
                lock = leases.pop(req["lease"], None)
                if lock is None:
                    send({"id": rid, "result": "refused"})
                    continue
                lock.release()
                send({"id": rid, "result": "ok"})
            else:
                send({"id": rid, "result": "error", "error": "unknown op " + op})
        except LockNotOwnedError:
            # release found another token (or none): definitely not ours.
            send({"id": rid, "result": "refused"})
        except (RedisError, LockError, OSError) as e:
            # a timeout or a dropped connection: may have happened.
            send({"id": rid, "result": "error", "error": "%s: %s" % (type(e).__name__, e)})


if __name__ == "__main__":
    main()
