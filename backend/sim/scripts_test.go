package sim

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// lockchaosScripts reads lockimpl/scripts: the sources our locks send.
func lockchaosScripts(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"release", "renew", "fenced_acquire"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "lockimpl", "scripts", name+".lua"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	return out
}

// redsyncScripts runs redsync's Lock, Extend (with and without SET NX on
// extend) and Unlock against miniredis, and returns the Lua sources it
// sends with EVAL (the first EVALSHA of each finds no script): the
// scripts are taken from the library as it runs, not copied.
func redsyncScripts(t *testing.T) map[string]string {
	t.Helper()
	mr := miniredis.NewMiniRedis()
	defer mr.Close()
	c, err := mr.Dial()
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	var mu sync.Mutex
	srcs := map[string]string{}
	mr.Server().SetPreHook(func(_ *server.Peer, cmd string, args ...string) bool {
		if cmd == "EVAL" {
			mu.Lock()
			srcs[sha1hex(args[0])] = args[0]
			mu.Unlock()
		}
		return false
	})
	rdb := redis.NewClient(&redis.Options{Addr: "10.255.255.1:6379", DisableIdentity: true,
		Dialer: func(context.Context, string, string) (net.Conn, error) { return mr.Dial() }})
	defer rdb.Close()
	rs := redsync.New(goredis.NewPool(rdb))
	for _, opts := range [][]redsync.Option{{redsync.WithExpiry(time.Minute)}, {redsync.WithExpiry(time.Minute), redsync.WithSetNXOnExtend()}} {
		m := rs.NewMutex("k", opts...)
		if err := m.Lock(); err != nil {
			t.Fatal(err)
		}
		if ok, err := m.Extend(); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if ok, err := m.Unlock(); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	return srcs
}

// Every native script is keyed by the SHA1 of the source it replaces:
// ours from lockimpl/scripts, redsync's as redsync sends them. A script
// edited without its native twin runs in Lua again (and this fails).
func TestNativeScriptSHAs(t *testing.T) {
	ours := lockchaosScripts(t)
	for name, want := range map[string]string{"release": shaRelease, "renew": shaRenew, "fenced_acquire": shaFencedAcquire} {
		if got := sha1hex(ours[name]); got != want {
			t.Errorf("lockimpl/scripts/%s.lua has SHA1 %s, native scripts know %s: update the native twin in scripts.go with the script", name, got, want)
		}
	}
	theirs := redsyncScripts(t)
	for _, sha := range []string{shaRedsyncDelete, shaRedsyncTouch, shaRedsyncTouchNX} {
		if _, ok := theirs[sha]; !ok {
			t.Errorf("redsync no longer sends the script %s (it sent %v): update scripts.go", sha, slices.Collect(maps.Keys(theirs)))
		}
	}
	if len(natives) != 6 {
		t.Errorf("%d native scripts, this test knows 6", len(natives))
	}
}

// rawConn sends commands and returns their replies as they came, byte
// for byte.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func (rc *rawConn) do(t *testing.T, args ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := rc.c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	var raw strings.Builder
	if err := readRaw(rc.r, &raw); err != nil {
		t.Fatal(err)
	}
	return raw.String()
}

// readRaw copies one whole reply, byte for byte (arrays with their
// elements, errors included).
func readRaw(r *bufio.Reader, out *strings.Builder) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	out.WriteString(line)
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	switch line[0] {
	case '$':
		if n >= 0 {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(r, buf); err != nil {
				return err
			}
			out.Write(buf)
		}
	case '*':
		for range n {
			if err := readRaw(r, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// state is everything a script can change: every key's type, value and
// TTL (miniredis's Dump and TTL).
func state(mr *miniredis.Miniredis) string {
	var b strings.Builder
	b.WriteString(mr.Dump())
	keys := mr.Keys()
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s ttl %v\n", k, mr.Type(k), mr.TTL(k))
	}
	return b.String()
}

// TestNativeScriptsMatchLua runs random command sequences against two
// miniredis instances in one bubble (one clock): one runs the known
// scripts natively, the other in its Lua. Keys present, absent, of
// another type, expiring; our token or another; TTL and counter values
// the checks must refuse; wrong KEYS counts; scripts cached or not
// (NOSCRIPT), flushed; EVALSHA inside MULTI and on another database.
// Every reply, and after every command every key, value and TTL, must be
// the same, and most EVALSHAs must have run natively.
func TestNativeScriptsMatchLua(t *testing.T) {
	ours := lockchaosScripts(t)
	srcs := redsyncScripts(t)
	for _, s := range ours {
		srcs[sha1hex(s)] = s
	}
	var shas []string
	for sha := range natives {
		if _, ok := srcs[sha]; !ok {
			t.Fatalf("no source for native script %s", sha)
		}
		shas = append(shas, sha)
	}
	slices.Sort(shas)
	ops := 4000
	if testing.Short() {
		ops = 800
	}
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				runs0, falls0 := nativeRuns.Load(), nativeFallbacks.Load()
				evalshas := compareRandomOps(t, rand.New(rand.NewPCG(seed, 17)), shas, srcs, ops)
				runs, falls := nativeRuns.Load()-runs0, nativeFallbacks.Load()-falls0
				t.Logf("%d EVALSHAs: %d native, %d fell back after checking the keyspace, the rest went to Lua before", evalshas, runs, falls)
				if runs < int64(evalshas)/4 {
					t.Errorf("only %d of %d EVALSHAs ran natively: the comparison did not exercise the native path", runs, evalshas)
				}
			})
		})
	}
}

func compareRandomOps(t *testing.T, rng *rand.Rand, shas []string, srcs map[string]string, ops int) (evalshas int) {
	native, lua := miniredis.NewMiniRedis(), miniredis.NewMiniRedis()
	defer native.Close()
	defer lua.Close()
	native.ClockTTL(true)
	lua.ClockTTL(true)
	if c, err := native.Dial(); err == nil { // start its server
		_ = c.Close()
	}
	if !installNativeScripts(native) {
		t.Fatal("native scripts are off: miniredis's private state is not what scripts.go expects")
	}
	// Two clients on each, so one can be inside MULTI while the other is not.
	type pair struct{ n, l *rawConn }
	var clients []pair
	for range 2 {
		cn, err := native.Dial()
		if err != nil {
			t.Fatal(err)
		}
		cl, err := lua.Dial()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cn.Close(); cl.Close() })
		clients = append(clients, pair{&rawConn{cn, bufio.NewReader(cn)}, &rawConn{cl, bufio.NewReader(cl)}})
	}
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	keys := []string{"lock", "fence", "other"}
	key := func() string { return pick(keys...) }
	token := func() string { return pick("tokA", "tokB", "", "tokA") }
	ttl := func() string {
		if rng.IntN(4) > 0 {
			return strconv.Itoa(1 + rng.IntN(400))
		}
		return pick("0", "-5", "abc", "0100", "999999999999", "9999999999999", "1e3", " 100", "")
	}
	counter := func() string {
		if rng.IntN(3) > 0 {
			return strconv.Itoa(rng.IntN(10))
		}
		return pick("-3", "abc", "", "9223372036854775807", "9223372036854775806", "99999999999999999999", "999999999999999999", "9007199254740993", "9007199254740994", "123456789012345678", "007")
	}
	inMulti := make([]bool, len(clients))
	selected := make([]bool, len(clients))
	for i := 0; i < ops; i++ {
		ci := rng.IntN(len(clients))
		c := clients[ci]
		var args []string
		r := rng.IntN(1000)
		switch {
		case inMulti[ci] && rng.IntN(3) == 0:
			r = 870 // leave MULTI soon
		case selected[ci] && rng.IntN(3) == 0:
			r = 900 // back to database 0 soon
		}
		switch {
		case r < 450:
			sha := shas[rng.IntN(len(shas))]
			nat := natives[sha]
			nk, na := nat.keys, nat.argv
			if rng.IntN(10) == 0 {
				nk += rng.IntN(3) - 1
			}
			if rng.IntN(10) == 0 {
				na += rng.IntN(3) - 1
			}
			if rng.IntN(40) == 0 {
				sha = strings.ToUpper(sha)
			}
			args = []string{"EVALSHA", sha, strconv.Itoa(max(nk, 0))}
			if rng.IntN(30) == 0 {
				args[2] = pick("x", "-1", "01", "9")
			}
			for range max(nk, 0) {
				args = append(args, key())
			}
			for j := range max(na, 0) {
				if j == 0 {
					args = append(args, token())
				} else {
					args = append(args, ttl())
				}
			}
			evalshas++
		case r < 500:
			sha := shas[rng.IntN(len(shas))]
			nat := natives[sha]
			args = []string{"EVAL", srcs[sha], strconv.Itoa(nat.keys)}
			for range nat.keys {
				args = append(args, key())
			}
			args = append(args, token())
			for range nat.argv - 1 {
				args = append(args, ttl())
			}
		case r < 515:
			args = []string{"SCRIPT", "LOAD", srcs[shas[rng.IntN(len(shas))]]}
		case r < 518:
			args = []string{"SCRIPT", "FLUSH"}
		case r < 540:
			args = []string{"SCRIPT", "EXISTS", shas[rng.IntN(len(shas))]}
		case r < 660:
			args = []string{"SET", key(), token()}
			if rng.IntN(2) == 0 {
				args = append(args, "PX", strconv.Itoa(1+rng.IntN(300)))
			}
		case r < 740:
			args = []string{"SET", key(), counter()}
		case r < 780:
			args = []string{"DEL", key()}
		case r < 810:
			args = []string{"HSET", key(), "f", "v"}
		case r < 830:
			args = []string{"RPUSH", key(), "x"}
		case r < 860:
			args = []string{"PEXPIRE", key(), strconv.Itoa(1 + rng.IntN(300))}
		case r < 890:
			if inMulti[ci] {
				args = []string{pick("EXEC", "DISCARD")}
				inMulti[ci] = false
			} else {
				args = []string{"MULTI"}
				inMulti[ci] = true
			}
		case r < 910:
			selected[ci] = !selected[ci]
			args = []string{"SELECT", map[bool]string{true: "1", false: "0"}[selected[ci]]}
		case r < 930:
			args = []string{"INCR", key()}
		default:
			time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
			continue
		}
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		}
		got, want := c.n.do(t, args...), c.l.do(t, args...)
		if got != want {
			t.Fatalf("op %d %q: native replied %s, Lua %s", i, args, got, want)
		}
		if gs, ws := state(native), state(lua); gs != ws {
			t.Fatalf("op %d %q (reply %s): keyspaces differ\nnative:\n%s\nLua:\n%s", i, args, got, gs, ws)
		}
		for _, k := range keys { // database 1 too
			for _, db := range []int{1} {
				if g, w := native.DB(db).Exists(k), lua.DB(db).Exists(k); g != w {
					t.Fatalf("op %d %q: db %d key %s exists %v natively, %v in Lua", i, args, db, k, g, w)
				}
			}
		}
	}
	return evalshas
}
