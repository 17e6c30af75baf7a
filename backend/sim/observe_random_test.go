package sim

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/redis/go-redis/v9"
)

// TestObserverFollowsTheKeyspace runs random commands on a node (strings
// set every way, with and without TTLs, deleted, renamed, renewed,
// persisted, overwritten by another type; the lock scripts in Lua and
// natively; MULTI/EXEC; another database; idle stretches that let keys
// expire; clock jumps; restarts) and after each one replays what the
// observer reported: the replayed keys must be exactly the node's
// matched string keys on database 0, each with its value and its
// deadline (the instant of the command plus its TTL, to the
// nanosecond). Every report must come at the instant of the command that
// caused it; a del only from a command that deletes, an expired only for
// a key at or past its deadline (or a clock jump).
func TestObserverFollowsTheKeyspace(t *testing.T) {
	ops := 3000
	if testing.Short() {
		ops = 600
	}
	scripts := lockchaosScripts(t)
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newNode("node0")
				defer n.Close()
				followRandomOps(t, n, rand.New(rand.NewPCG(seed, 26)), scripts, ops)
			})
		})
	}
}

type modelKey struct {
	value    string
	deadline time.Time
}

func followRandomOps(t *testing.T, n *Node, rng *rand.Rand, scripts map[string]string, ops int) {
	s := &seen{}
	stop := n.ObserveKeys(lockKeys, s.sink)
	defer stop()
	s.take() // watching
	model := map[string]modelKey{}
	var clients []*rawConn
	dial := func() {
		clients = clients[:0]
		for range 2 {
			c, err := n.dial()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			clients = append(clients, &rawConn{c, bufio.NewReader(c)})
		}
	}
	dial()
	for _, src := range scripts {
		clients[0].do(t, "SCRIPT", "LOAD", src)
	}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	key := func() string { return pick("lock:a", "lock:b", "lock:fence", "other") }
	tok := func() string { return pick("tokA", "tokB") }
	ms := func() string { return strconv.Itoa(1 + rng.IntN(300)) }
	counts := map[backend.KeyOp]int{}
	defer func() { t.Logf("reported: %v", counts) }()
	inMulti := make([]bool, len(clients))
	deletes := map[string]bool{"DEL": true, "UNLINK": true, "GETDEL": true, "FLUSHDB": true, "RENAME": true,
		"EVAL": true, "EVALSHA": true, "EXEC": true, "RESTART": true}
	for i := range ops {
		ci := rng.IntN(len(clients))
		var args []string
		jumped := false
		switch r := rng.IntN(100); {
		case r < 25:
			args = []string{"SET", key(), tok()}
			switch rng.IntN(5) {
			case 0:
				args = append(args, "NX", "PX", ms())
			case 1:
				args = append(args, "PX", ms())
			case 2:
				args = append(args, "XX", "KEEPTTL")
			case 3:
				args = append(args, "EX", "1", "GET")
			}
		case r < 29:
			args = []string{pick("SETEX", "PSETEX"), key(), pick("1", "2"), tok()}
		case r < 31:
			args = []string{pick("SETNX", "GETSET"), key(), tok()}
		case r < 37:
			args = []string{pick("DEL", "UNLINK", "GETDEL"), key()}
			if args[0] != "GETDEL" && rng.IntN(2) == 0 {
				args = append(args, key())
			}
		case r < 43:
			args = []string{pick("PEXPIRE", "PEXPIRE", "EXPIRE", "PERSIST"), key(), ms()}
			if args[0] == "PERSIST" {
				args = args[:2]
			}
		case r < 45:
			args = []string{"GETEX", key(), pick("PX", "PERSIST")}
			if args[2] == "PX" {
				args = append(args, ms())
			}
		case r < 47:
			args = []string{"RENAME", key(), key()}
		case r < 51:
			args = []string{pick("INCR", "APPEND"), key()}
			if args[0] == "APPEND" {
				args = append(args, "x")
			}
		case r < 53:
			args = []string{"HSET", key(), "f", "v"}
			if rng.IntN(2) == 0 {
				args = []string{"RPUSH", key(), "x"}
			}
		case r < 68:
			name := pick("release", "renew", "fenced_acquire")
			src := scripts[name]
			args = []string{pick("EVAL", "EVALSHA"), src}
			if args[0] == "EVALSHA" {
				args[1] = sha1hex(src)
			}
			switch name {
			case "release":
				args = append(args, "1", key(), tok())
			case "renew":
				args = append(args, "1", key(), tok(), ms())
			default:
				args = append(args, "2", pick("lock:a", "lock:b"), "lock:fence", tok(), ms(), pick("0", ms()))
			}
		case r < 74:
			if inMulti[ci] {
				args = []string{pick("EXEC", "EXEC", "DISCARD")}
			} else {
				args = []string{"MULTI"}
			}
			inMulti[ci] = !inMulti[ci]
		case r < 76 && !inMulti[ci]:
			// Another database: never reported.
			clients[ci].do(t, "SELECT", "1")
			clients[ci].do(t, "SET", key(), tok())
			args = []string{"SELECT", "0"}
		case r < 77:
			args = []string{"FLUSHDB"}
		case r < 79:
			if err := n.ShiftClock(time.Duration(rng.IntN(200)) * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			args, jumped = []string{"SHIFTCLOCK"}, true
		case r < 80:
			if err := n.Restart(t.Context()); err != nil {
				t.Fatal(err)
			}
			dial()
			for _, src := range scripts {
				clients[0].do(t, "SCRIPT", "LOAD", src)
			}
			inMulti = make([]bool, len(clients))
			args = []string{"RESTART"}
		default:
			time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
			args = []string{"SLEEP"}
		}
		if args[0] != "SHIFTCLOCK" && args[0] != "RESTART" && args[0] != "SLEEP" {
			clients[ci].do(t, args...)
		}
		op := fmt.Sprintf("op %d %.60q", i, args)
		now := time.Now()
		for _, c := range s.take() {
			if !c.At.Equal(now) {
				t.Fatalf("%s: %s %s reported at %v, the command ran at %v", op, c.Op, c.Key, c.At, now)
			}
			if args[0] == "SLEEP" {
				t.Fatalf("%s: an idle node reported %s %s", op, c.Op, c.Key)
			}
			replay(t, op, model, c, deletes[args[0]], jumped)
			counts[c.Op]++
		}
		// A key past its deadline is gone, reported when the node is next
		// touched (the idle ones: miniredis removes it on access).
		if got, want := fmtModel(model, now), fmtModel(actual(n, now), now); got != want {
			t.Fatalf("%s: the observer's view\n%s\nthe node's keys\n%s", op, got, want)
		}
	}
}

// replay applies one report to the model, checking it makes sense there.
func replay(t *testing.T, op string, model map[string]modelKey, c backend.KeyChange, deletes, jumped bool) {
	t.Helper()
	m, had := model[c.Key]
	switch c.Op {
	case backend.Watching, backend.Blind:
		return
	case backend.KeySet, backend.KeyExpire:
		if had && lapsed(m.deadline, c.At) {
			t.Fatalf("%s: %s %s=%s over a value past its deadline, not reported expired first", op, c.Op, c.Key, c.Value)
		}
	}
	switch c.Op {
	case backend.KeySet:
		if had && m.value == c.Value {
			t.Fatalf("%s: set %s=%s, which it already held (not an expire?)", op, c.Key, c.Value)
		}
		model[c.Key] = modelKey{c.Value, c.Deadline}
		return
	case backend.KeyExpire:
		if !had || m.value != c.Value {
			t.Fatalf("%s: expire of %s=%s, which the model holds as %+v", op, c.Key, c.Value, m)
		}
		model[c.Key] = modelKey{c.Value, c.Deadline}
		return
	case backend.KeyDel:
		if !deletes || lapsed(m.deadline, c.At) {
			t.Fatalf("%s: del of %s (deadline %v, now %v) from a command that does not delete", op, c.Key, m.deadline, c.At)
		}
	case backend.KeyExpired:
		if !jumped && !lapsed(m.deadline, c.At) {
			t.Fatalf("%s: expired %s before its deadline %v (now %v)", op, c.Key, m.deadline, c.At)
		}
	case backend.KeyAbsent:
	default:
		t.Fatalf("%s: unexpected %s", op, c.Op)
	}
	if !had || m.value != c.Value || !m.deadline.Equal(c.Deadline) {
		t.Fatalf("%s: %s %s=%s (deadline %v), the model holds %+v", op, c.Op, c.Key, c.Value, c.Deadline, m)
	}
	delete(model, c.Key)
}

// actual is the node's matched string keys on database 0 now.
func actual(n *Node, now time.Time) map[string]modelKey {
	out := map[string]modelKey{}
	for _, k := range n.mr.Keys() {
		v, err := n.mr.Get(k)
		if !lockKeys(k) || err != nil {
			continue
		}
		var dl time.Time
		if ttl := n.mr.TTL(k); ttl > 0 {
			dl = now.Add(ttl)
		}
		out[k] = modelKey{v, dl}
	}
	return out
}

func fmtModel(m map[string]modelKey, now time.Time) string {
	var b []string
	for k, v := range m {
		if lapsed(v.deadline, now) {
			continue
		}
		b = append(b, fmt.Sprintf("  %s=%s until %v", k, v.value, v.deadline))
	}
	slices.Sort(b)
	return strings.Join(b, "\n")
}

// Pods contend for one lock through their own links while another
// client waits in BLPOP (a blocking command, let through unwrapped: the
// others must not wait for it): every acquire that won is one set of its
// token, every release that deleted is one del of it, a set never lands
// while another value is live, and the replayed view ends as the node.
func TestObserveConcurrentClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := New(nil)
		nd, _ := b.StartNode(ctx, backend.NodeConfig{Name: "node0"})
		n := nd.(*Node)
		defer n.Close()
		nw, _ := b.NewNetwork()
		defer nw.Close()
		s := &seen{}
		stop := n.ObserveKeys(lockKeys, s.sink)
		defer stop()
		release := lockchaosScripts(t)["release"]
		client := func(name string) *redis.Client {
			l, err := nw.NewLink(name+"->node0", n.Addr())
			if err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(&redis.Options{Addr: l.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
				Dialer: nw.(netfault.Dialer).DialContext})
			t.Cleanup(func() { rdb.Close() })
			return rdb
		}
		blocked := make(chan time.Duration)
		go func() {
			start := time.Now()
			v, err := client("waiter").BLPop(ctx, time.Second, "list").Result()
			if err != nil || v[1] != "x" {
				t.Errorf("BLPOP: %v %v", v, err)
			}
			blocked <- time.Since(start)
		}()
		var wins, releases atomic.Int64
		var wg sync.WaitGroup
		for p := range 6 {
			rdb := client(fmt.Sprint("pod", p))
			rng := rand.New(rand.NewPCG(uint64(p), 26))
			wg.Go(func() {
				if p == 0 {
					time.Sleep(100 * time.Millisecond)
					_ = rdb.LPush(ctx, "list", "x").Err()
				}
				for i := range 150 {
					tok := fmt.Sprintf("p%d-%d", p, i)
					if ok, _ := rdb.SetNX(ctx, "lock:a", tok, 5*time.Millisecond).Result(); !ok {
						time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
						continue
					}
					wins.Add(1)
					time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
					if r, _ := rdb.Eval(ctx, release, []string{"lock:a"}, tok).Int(); r == 1 {
						releases.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if took := <-blocked; took > 200*time.Millisecond {
			t.Errorf("BLPOP waited %v for an LPUSH sent at 100ms", took)
		}
		model := map[string]modelKey{}
		count := map[backend.KeyOp]int64{}
		for _, c := range s.take() {
			if c.Op == backend.KeySet && model[c.Key].value != "" && !lapsed(model[c.Key].deadline, c.At) {
				t.Fatalf("set %s=%s at %v while %+v was live", c.Key, c.Value, c.At, model[c.Key])
			}
			replay(t, "concurrent", model, c, true, false)
			count[c.Op]++
		}
		if count[backend.KeySet] != wins.Load() || count[backend.KeyDel] != releases.Load() {
			t.Errorf("%d acquires won and %d releases deleted; reported %v", wins.Load(), releases.Load(), count)
		}
		now := time.Now()
		if got, want := fmtModel(model, now), fmtModel(actual(n, now), now); got != want {
			t.Errorf("the observer's view\n%s\nthe node's keys\n%s", got, want)
		}
		t.Logf("%d acquires, %d releases, reported %v", wins.Load(), releases.Load(), count)
	})
}
