package sim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/redis/go-redis/v9"
)

// seen collects what an observer reports.
type seen struct {
	mu  sync.Mutex
	got []backend.KeyChange
}

func (s *seen) sink(c backend.KeyChange) {
	s.mu.Lock()
	s.got = append(s.got, c)
	s.mu.Unlock()
}

// take returns what was reported since the last take.
func (s *seen) take() []backend.KeyChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func lockKeys(k string) bool { return strings.HasPrefix(k, "lock:") }

// ops renders changes for comparison: op, key and value.
func ops(cs []backend.KeyChange) string {
	var b []string
	for _, c := range cs {
		s := string(c.Op)
		if c.Key != "" {
			s += " " + c.Key + "=" + c.Value
		}
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		b = append(b, s)
	}
	return strings.Join(b, ", ")
}

// observe registers an observer on n for the lock: keys and checks it
// starts watching now.
func observe(t *testing.T, n *Node) (*seen, func()) {
	t.Helper()
	s := &seen{}
	stop := n.ObserveKeys(lockKeys, s.sink)
	got := s.take()
	if ops(got) != "watching" || !got[0].At.Equal(time.Now()) || got[0].Node != "node0" {
		t.Fatalf("on observing: %+v, want watching now on node0", got)
	}
	return s, stop
}

// between checks every change happened within [from, now].
func between(t *testing.T, cs []backend.KeyChange, from time.Time) {
	t.Helper()
	for _, c := range cs {
		if c.At.Before(from) || c.At.After(time.Now()) {
			t.Errorf("%s %s at %v, outside the call [%v, %v]", c.Op, c.Key, c.At, from, time.Now())
		}
	}
}

// A lock's acquire and release, as a witness sees them: set with the
// token and its deadline (exactly the set's instant plus the TTL), then
// del with the token, through the release script in Lua and natively.
func TestObserveSetThenRelease(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		src := lockchaosScripts(t)["release"]
		s, stop := observe(t, n)
		defer stop()
		for _, path := range []string{"lua", "native"} {
			start := time.Now()
			if ok, err := rdb.SetNX(ctx, "lock:a", "tok-"+path, 300*time.Millisecond).Result(); err != nil || !ok {
				t.Fatal(ok, err)
			}
			set := s.take()
			if ops(set) != "set lock:a=tok-"+path || !set[0].Deadline.Equal(set[0].At.Add(300*time.Millisecond)) {
				t.Fatalf("%s: SET NX PX: %+v, want set with deadline At+300ms", path, set)
			}
			between(t, set, start)
			runs := nativeRuns.Load()
			var released int64
			var err error
			if path == "lua" {
				released, err = rdb.Eval(ctx, src, []string{"lock:a"}, "tok-"+path).Int64()
			} else {
				released, err = rdb.EvalSha(ctx, sha1hex(src), []string{"lock:a"}, "tok-"+path).Int64()
			}
			if err != nil || released != 1 {
				t.Fatalf("%s release: %v %v", path, released, err)
			}
			if native := nativeRuns.Load() > runs; native != (path == "native" && nativeScriptsOn) {
				t.Errorf("%s release ran natively: %v", path, native)
			}
			if got := s.take(); ops(got) != "del lock:a=tok-"+path || !got[0].Deadline.Equal(set[0].Deadline) {
				t.Fatalf("%s release: %+v, want del of the token (with the deadline it had)", path, got)
			}
		}
	})
}

// A key left to expire is reported expired, with the value it held and
// the deadline it had (the set's instant plus the TTL, exactly), when
// the node is next touched: miniredis removes it then, not at the
// deadline. A key that expired unseen and was set again is expired, then
// set, even with the same value.
func TestObserveExpiry(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		s, stop := observe(t, n)
		defer stop()
		_ = rdb.Set(ctx, "lock:b", "v1", 200*time.Millisecond).Err()
		set := s.take()
		time.Sleep(500 * time.Millisecond)
		if got := s.take(); len(got) != 0 {
			t.Fatalf("an idle node reported %s", ops(got))
		}
		start := time.Now()
		_ = rdb.Get(ctx, "unrelated").Err()
		got := s.take()
		if ops(got) != "expired lock:b=v1" || !got[0].Deadline.Equal(set[0].At.Add(200*time.Millisecond)) {
			t.Fatalf("after its TTL: %+v, want expired with deadline set+200ms (set %+v)", got, set)
		}
		between(t, got, start)

		_ = rdb.Set(ctx, "lock:c", "v1", 100*time.Millisecond).Err()
		s.take()
		time.Sleep(150 * time.Millisecond)
		_ = rdb.SetNX(ctx, "lock:c", "v1", 100*time.Millisecond).Err()
		if got := s.take(); ops(got) != "expired lock:c=v1, set lock:c=v1" {
			t.Fatalf("expired unseen, then set again: %s", ops(got))
		}
	})
}

// PEXPIRE, a renewal script (native) and PERSIST change the deadline
// only: expire with the new one, zero for none. A SET NX that fails and
// a renewal of another token change nothing and report nothing.
func TestObservePexpire(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		s, stop := observe(t, n)
		defer stop()
		_ = rdb.Set(ctx, "lock:a", "tok", 300*time.Millisecond).Err()
		s.take()
		time.Sleep(100 * time.Millisecond)
		_ = rdb.PExpire(ctx, "lock:a", time.Second).Err()
		if got := s.take(); ops(got) != "expire lock:a=tok" || !got[0].Deadline.Equal(got[0].At.Add(time.Second)) {
			t.Fatalf("PEXPIRE: %+v, want expire with deadline At+1s", got)
		}
		renew := lockchaosScripts(t)["renew"]
		if err := rdb.Eval(ctx, renew, []string{"lock:a"}, "other", 5000).Err(); err != nil {
			t.Fatal(err)
		}
		_ = rdb.SetNX(ctx, "lock:a", "other", time.Minute).Err()
		if got := s.take(); len(got) != 0 {
			t.Fatalf("a renewal of another token and a failed SET NX reported %s", ops(got))
		}
		if err := rdb.EvalSha(ctx, sha1hex(renew), []string{"lock:a"}, "tok", 5000).Err(); err != nil {
			t.Fatal(err)
		}
		if got := s.take(); ops(got) != "expire lock:a=tok" || !got[0].Deadline.Equal(got[0].At.Add(5*time.Second)) {
			t.Fatalf("renewal: %+v, want expire with deadline At+5s", got)
		}
		_ = rdb.Persist(ctx, "lock:a").Err()
		if got := s.take(); ops(got) != "expire lock:a=tok" || !got[0].Deadline.IsZero() {
			t.Fatalf("PERSIST: %+v, want expire with no deadline", got)
		}
	})
}

// Kill: what lapsed before is expired, then blind; Start: watching, then
// absent for each key that was live (the instance comes back empty). An
// observer that starts on a killed node is blind until it is back.
func TestObserveKillStart(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		s, stop := observe(t, n)
		defer stop()
		_ = rdb.Set(ctx, "lock:a", "A", 0).Err()
		_ = rdb.Set(ctx, "lock:b", "B", 100*time.Millisecond).Err()
		_ = rdb.Set(ctx, "lock:c", "C", time.Second).Err()
		s.take()
		time.Sleep(150 * time.Millisecond)
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
		got := s.take()
		if ops(got) != "expired lock:b=B, blind (node killed)" || !got[1].At.Equal(time.Now()) {
			t.Fatalf("kill: %+v", got)
		}
		late := &seen{}
		stopLate := n.ObserveKeys(lockKeys, late.sink)
		defer stopLate()
		if got := ops(late.take()); got != "blind (node killed)" {
			t.Fatalf("observing a killed node: %s", got)
		}
		time.Sleep(50 * time.Millisecond)
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		got = s.take()
		if ops(got) != "watching, absent lock:a=A, absent lock:c=C" {
			t.Fatalf("start: %s", ops(got))
		}
		for _, c := range got {
			if !c.At.Equal(time.Now()) {
				t.Errorf("%s at %v, not at the start (%v)", c.Op, c.At, time.Now())
			}
		}
		if got := ops(late.take()); got != "watching" {
			t.Fatalf("start, for the late observer: %s", got)
		}
		_ = rdb.Ping(ctx).Err() // the pooled connection died with the node
		_ = rdb.Set(ctx, "lock:a", "A2", 0).Err()
		if got := ops(s.take()); got != "set lock:a=A2" {
			t.Fatalf("after start: %s", got)
		}
		if err := n.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ops(s.take()); got != "blind (node killed), watching, absent lock:a=A2" {
			t.Fatalf("restart: %s", got)
		}
	})
}

// Only matched string keys are reported; keys there when observing
// starts are present; each observer has its own filter; stop ends the
// reports (and the node then runs its commands as before: native
// scripts still run natively).
func TestObserveMatchAndStop(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		_ = rdb.Set(ctx, "lock:old", "x", time.Minute).Err()
		s := &seen{}
		stop := n.ObserveKeys(lockKeys, s.sink)
		// Its deadline is the SET's instant (half a round trip ago) plus a minute.
		if got := s.take(); ops(got) != "watching, present lock:old=x" ||
			!rtt(2*time.Now().Add(time.Minute).Sub(got[1].Deadline), 0) {
			t.Fatalf("observing a node with a key: %+v", got)
		}
		other := &seen{}
		stopOther := n.ObserveKeys(func(k string) bool { return k == "other" }, other.sink)
		other.take()
		_ = rdb.Set(ctx, "other", "o", 0).Err()
		_ = rdb.Incr(ctx, "lock:fence").Err()
		_ = rdb.HSet(ctx, "lock:hash", "f", "v").Err()
		_ = rdb.Set(ctx, "lock:a", "tok", time.Second).Err()
		if got := ops(s.take()); got != "set lock:fence=1, set lock:a=tok" {
			t.Errorf("lock: keys: %s", got)
		}
		if got := ops(other.take()); got != "set other=o" {
			t.Errorf("the other observer: %s", got)
		}
		stop()
		stop() // twice is fine
		_ = rdb.Del(ctx, "lock:a", "other").Err()
		if got := s.take(); len(got) != 0 {
			t.Errorf("after stop: %s", ops(got))
		}
		if got := ops(other.take()); got != "del other=o" {
			t.Errorf("the other observer, still on: %s", got)
		}
		stopOther()
		src := lockchaosScripts(t)["release"]
		_ = rdb.ScriptLoad(ctx, src).Err()
		runs := nativeRuns.Load()
		err := rdb.EvalSha(ctx, sha1hex(src), []string{"lock:x"}, "t").Err()
		if err != nil || nativeScriptsOn && nativeRuns.Load() == runs {
			t.Errorf("after every observer stopped, EVALSHA: err %v, native %v", err, nativeRuns.Load() > runs)
		}
		if got := len(s.take()) + len(other.take()); got != 0 {
			t.Errorf("%d reports after both stopped", got)
		}
	})
}

// A forward clock jump shortens a deadline (expire, with the earlier
// one) or ends it (expired), reported at the jump.
func TestObserveClockJump(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, rdb *redis.Client) {
		ctx := context.Background()
		s, stop := observe(t, n)
		defer stop()
		_ = rdb.Set(ctx, "lock:a", "tok", 300*time.Millisecond).Err()
		set := s.take()
		if err := n.ShiftClock(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		got := s.take()
		if ops(got) != "expire lock:a=tok" || !got[0].Deadline.Equal(set[0].Deadline.Add(-100*time.Millisecond)) {
			t.Fatalf("a jump of 100ms: %+v, want expire 100ms earlier than %v", got, set[0].Deadline)
		}
		if err := n.ShiftClock(500 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if got := s.take(); ops(got) != "expired lock:a=tok" || !got[0].At.Equal(time.Now()) {
			t.Fatalf("a jump past the deadline: %+v", got)
		}
	})
}

// A closed node's observer is told so, once.
func TestObserveClosed(t *testing.T) {
	cell(t, func(t *testing.T, n *Node, _ *netfault.Link, _ *redis.Client) {
		s, _ := observe(t, n)
		_ = n.Close()
		if got := s.take(); len(got) != 0 {
			t.Errorf("close reported %s", ops(got))
		}
		late := &seen{}
		n.ObserveKeys(lockKeys, late.sink)()
		if got := ops(late.take()); got != "blind (node closed)" {
			t.Errorf("observing a closed node: %s", got)
		}
	})
}
