package sim

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// Native scripts.
//
// miniredis runs every EVAL and EVALSHA in a fresh gopher-lua state (it
// opens the base, string, math, table, ... libraries each time): that was
// 30-65 % of the CPU of a simulated cell whose lock uses Lua, and most of
// a Redlock cell (redsync releases on every node after each failed
// acquire). The locks' scripts are a few lines of if/else around GET,
// SET, DEL, INCR and PEXPIRE, so for the scripts whose SHA1 is known here
// (lockimpl/scripts/*.lua and the ones redsync v4 sends), an EVALSHA runs
// the same control flow in Go instead: the same redis commands, with the
// same arguments, in the same order, dispatched to miniredis's own command
// handlers exactly as its Lua redis.call does (a nested call under the
// instance's lock, so the script stays atomic), and the script's result
// written as miniredis's Lua bridge writes it (an integer; Lua numbers are
// float64, so through float64).
//
// Everything else takes miniredis's own path, unchanged: EVAL (which also
// fills the script cache), any other script, an EVALSHA whose script is
// not in the instance's cache (NOSCRIPT), a connection inside MULTI, in
// pub/sub mode, nested in a script or on a database other than 0, an
// instance that requires AUTH, argument counts or values outside what the
// native code checks (a TTL that is not a plain positive integer, a
// fence counter that is not a small integer, a key of another type), and
// anything that could make a command fail: the native code only decides
// to fall back before it has changed anything. TestNativeScriptsMatchLua
// runs random command sequences against both paths and compares every
// reply, key, value and TTL.
//
// The one visible difference: miniredis's command counter (INFO,
// CommandCount) does not count the EVALSHA itself, only the commands in
// it. Nothing in lockchaos reads it.
//
// The hook goes in miniredis's pre-command hook (server.SetPreHook), which
// Node uses otherwise only to wrap it while a witness observes the node
// (observe.go; miniredis uses it only for SetError). Reading
// miniredis's private state (the script cache, the connection's context)
// is done with reflect, checked once against the types this was written
// for: if miniredis changes them, native scripts are off and every script
// runs in Lua, as before.

// nativeScriptsOn is false when LOCKCHAOS_SIM_LUA=1: every script then
// runs in miniredis's Lua, to compare the two or to rule this out.
var nativeScriptsOn = os.Getenv("LOCKCHAOS_SIM_LUA") != "1"

// The SHA1s of the scripts run natively. TestNativeScriptSHAs checks the
// first three against lockimpl/scripts and the others against what
// redsync sends.
const (
	shaRelease        = "4f55f0a53db2392c74e613423dae1a740e0a167a" // lockimpl/scripts/release.lua
	shaRenew          = "71b2bb455977c10b5c45855114ae81b4bf9b60ce" // lockimpl/scripts/renew.lua
	shaFencedAcquire  = "679f85387b13e762856427339266fd27874f68bc" // lockimpl/scripts/fenced_acquire.lua
	shaRedsyncDelete  = "e950836ed1e694540c503ef9972b8de518044d3b" // redsync v4 deleteScript
	shaRedsyncTouchNX = "b6b55c439e02c6f52ffb8be7ec8c0d0ac816ea79" // redsync v4 touchWithSetNXScript
	shaRedsyncTouch   = "d75bb8b5bd13532ddedd17762e772346e39b321e" // redsync v4 touchScript
)

// native is one script in Go: its exact KEYS and ARGV counts, and its
// body. run returns the script's integer result, or ok false to fall back
// to Lua, which it may do only before it has changed anything.
type native struct {
	keys, argv int
	run        func(x *nestedCalls, keys, argv []string) (result int64, ok bool)
}

var natives = map[string]native{
	// if redis.call("GET", KEYS[1]) == ARGV[1] then
	//   return redis.call("DEL", KEYS[1])
	// end
	// return 0
	shaRelease: {1, 1, func(x *nestedCalls, k, a []string) (int64, bool) {
		v, ok := x.get(k[0])
		if !ok {
			return 0, false
		}
		if v == luaString(a[0]) {
			return x.integer("DEL", k[0]), true
		}
		return 0, true
	}},
	// if redis.call("GET", KEYS[1]) == ARGV[1] then
	//   return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	// end
	// return 0
	shaRenew: {1, 2, compareAndPexpire},
	// redsync's touchScript: the same as renew.lua.
	shaRedsyncTouch: {1, 2, compareAndPexpire},
	// if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	//   local fence = redis.call("INCR", KEYS[2])
	//   if ARGV[3] ~= "0" then redis.call("PEXPIRE", KEYS[2], ARGV[3]) end
	//   return fence
	// end
	// return 0
	shaFencedAcquire: {2, 3, func(x *nestedCalls, k, a []string) (int64, bool) {
		if !plainTTL(a[1]) || k[0] == k[1] || a[2] != "0" && !plainTTL(a[2]) {
			return 0, false
		}
		// INCR must not fail after SET has landed: the counter is absent
		// or a string holding a small integer, else Lua does it all.
		fence, ok := x.get(k[1])
		if !ok || fence != luaFalse && !smallInt(string(fence.(luaString))) {
			return 0, false
		}
		if !x.truthy("SET", k[0], a[0], "NX", "PX", a[1]) {
			return 0, true
		}
		next := x.integer("INCR", k[1])
		if a[2] != "0" {
			x.integer("PEXPIRE", k[1], a[2])
		}
		return next, true
	}},
	// local val = redis.call("GET", KEYS[1])
	// if val == ARGV[1] then
	//   return redis.call("DEL", KEYS[1])
	// elseif val == false then
	//   return -1
	// else
	//   return 0
	// end
	shaRedsyncDelete: {1, 1, func(x *nestedCalls, k, a []string) (int64, bool) {
		v, ok := x.get(k[0])
		switch {
		case !ok:
			return 0, false
		case v == luaString(a[0]):
			return x.integer("DEL", k[0]), true
		case v == luaFalse:
			return -1, true
		}
		return 0, true
	}},
	// if redis.call("GET", KEYS[1]) == ARGV[1] then
	//   return redis.call("PEXPIRE", KEYS[1], ARGV[2])
	// elseif redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") then
	//   return 1
	// else
	//   return 0
	// end
	shaRedsyncTouchNX: {1, 2, func(x *nestedCalls, k, a []string) (int64, bool) {
		if !plainTTL(a[1]) {
			return 0, false
		}
		v, ok := x.get(k[0])
		switch {
		case !ok:
			return 0, false
		case v == luaString(a[0]):
			return x.integer("PEXPIRE", k[0], a[1]), true
		case x.truthy("SET", k[0], a[0], "PX", a[1], "NX"):
			return 1, true
		}
		return 0, true
	}},
}

func compareAndPexpire(x *nestedCalls, k, a []string) (int64, bool) {
	if !plainTTL(a[1]) {
		return 0, false
	}
	v, ok := x.get(k[0])
	if !ok {
		return 0, false
	}
	if v == luaString(a[0]) {
		return x.integer("PEXPIRE", k[0], a[1]), true
	}
	return 0, true
}

var (
	plainTTLRe = regexp.MustCompile(`^[1-9]\d{0,11}$`)
	smallIntRe = regexp.MustCompile(`^(0|-?[1-9]\d{0,17})$`)
)

// plainTTL: a TTL argument SET PX and PEXPIRE accept without error.
func plainTTL(s string) bool { return plainTTLRe.MatchString(s) }

// smallInt: a value INCR increments without error.
func smallInt(s string) bool { return smallIntRe.MatchString(s) }

// luaValue is what redis.call returns to a script, as miniredis's Lua
// bridge converts it: a bulk string is a string, a nil reply false.
type luaValue any

type luaString string

type luaBool bool

const luaFalse = luaBool(false)

// nestedCalls dispatches commands as a script's redis.call does: to the
// instance's own handlers, on a context marked nested (so they do not take
// the instance's lock, which the script holds).
type nestedCalls struct {
	srv *server.Server
	ctx any // a fresh nested connection context for this run
	buf bytes.Buffer
	w   *bufio.Writer
	r   *bufio.Reader
}

func (x *nestedCalls) call(args ...string) (any, error) {
	x.buf.Reset()
	x.w.Reset(&x.buf)
	peer := server.NewPeer(x.w)
	peer.Ctx = x.ctx
	x.srv.Dispatch(peer, args)
	_ = x.w.Flush()
	x.r.Reset(&x.buf)
	return server.ParseReply(x.r)
}

// get runs GET and returns its value the way Lua sees it (a string, or
// false); ok false if it failed (WRONGTYPE), before anything changed.
func (x *nestedCalls) get(key string) (luaValue, bool) {
	v, err := x.call("GET", key)
	switch v := v.(type) {
	case string:
		return luaString(v), err == nil
	case nil:
		return luaFalse, err == nil
	}
	return nil, false
}

// truthy runs a command the checks before it guarantee does not fail, and
// returns whether Lua would find its reply true (anything but nil).
func (x *nestedCalls) truthy(args ...string) bool {
	v, err := x.call(args...)
	if err != nil {
		panic(&nativeBug{"sim: native script: " + args[0] + " failed after the checks: " + err.Error()})
	}
	return v != nil
}

// integer runs a command that replies with an integer the checks before
// it guarantee, and returns it as a Lua number returned from the script
// comes out: through float64.
func (x *nestedCalls) integer(args ...string) int64 {
	v, err := x.call(args...)
	n, ok := v.(int)
	if err != nil || !ok {
		panic(&nativeBug{"sim: native script: " + args[0] + " did not reply with an integer after the checks"})
	}
	return int64(float64(n))
}

// nativeBug is a native script that met what its checks ruled out, after
// it changed something (so it cannot fall back): a bug here, never a
// model of Redis. It crashes the run rather than guess a reply.
type nativeBug struct{ msg string }

func (b *nativeBug) Error() string { return b.msg }

// nativeRuns counts EVALSHAs run natively and fallbacks, for tests.
var nativeRuns, nativeFallbacks atomic.Int64

// installNativeScripts sets the pre-command hook of mr's server (started:
// a connection was dialed) to run known scripts natively. False when
// native scripts are off: mr is then untouched.
func installNativeScripts(mr *miniredis.Miniredis) bool {
	h := nativeScriptsHook(mr)
	if h == nil {
		return false
	}
	mr.Server().SetPreHook(h)
	return true
}

// nativeScriptsHook is the pre-command hook that runs known scripts of mr
// (started) natively, or nil when native scripts cannot run.
func nativeScriptsHook(mr *miniredis.Miniredis) server.Hook {
	srv := mr.Server()
	if srv == nil || !learnPrivate() {
		return nil
	}
	self := reflect.ValueOf(mr).Elem()
	return func(c *server.Peer, cmd string, args ...string) bool {
		if cmd != "EVALSHA" || len(args) < 2 {
			return false
		}
		nat, ok := natives[args[0]]
		if !ok || args[1] != strconv.Itoa(nat.keys) || len(args) != 2+nat.keys+nat.argv || !plainConn(c) {
			return false
		}
		mr.Lock()
		defer mr.Unlock()
		if self.FieldByIndex(private.passwords).Len() != 0 ||
			!self.FieldByIndex(private.scripts).MapIndex(reflect.ValueOf(args[0])).IsValid() {
			return false // AUTH to check, or NOSCRIPT to say: miniredis's path
		}
		ctx := reflect.New(private.ctxType)
		ctx.Elem().Set(private.nestedCtx.Elem())
		x := &nestedCalls{srv: srv, ctx: ctx.Interface()}
		x.w = bufio.NewWriterSize(&x.buf, 64)
		x.r = bufio.NewReaderSize(&x.buf, 64)
		keys := args[2 : 2+nat.keys]
		argv := args[2+nat.keys:]
		result, ok := nat.run(x, keys, argv)
		if !ok {
			nativeFallbacks.Add(1)
			return false
		}
		nativeRuns.Add(1)
		c.WriteInt(int(result))
		return true
	}
}
