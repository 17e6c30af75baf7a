package sim

import (
	"bufio"
	"bytes"
	"reflect"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// What the native scripts (scripts.go) read of miniredis's private state.

// private is what native scripts read of miniredis's private state, found
// once with reflect and checked against the types this was written for.
var private struct {
	once sync.Once
	ok   bool
	// Miniredis fields
	scripts, passwords []int
	// connCtx fields
	ctxType                                reflect.Type
	nested, transaction, subscriber, selDB []int
	nestedCtx                              reflect.Value // *connCtx of a script's redis.call, copied per run
}

// learnPrivate finds the fields, and a nested context, from a scratch
// instance that runs one real script. false: native scripts are off.
func learnPrivate() bool {
	private.once.Do(func() {
		mt := reflect.TypeOf(miniredis.Miniredis{})
		f, ok1 := mt.FieldByName("scripts")
		p, ok2 := mt.FieldByName("passwords")
		if !ok1 || !ok2 || f.Type != reflect.TypeOf(map[string]string{}) || p.Type.Kind() != reflect.Map {
			return
		}
		private.scripts, private.passwords = f.Index, p.Index

		mr := miniredis.NewMiniRedis()
		conn, err := mr.Dial() // starts its server
		if err != nil {
			return
		}
		_ = conn.Close()
		defer mr.Close()
		var captured any
		mr.Server().SetPreHook(func(c *server.Peer, cmd string, _ ...string) bool {
			if cmd == "PING" && captured == nil {
				captured = c.Ctx // the context of a script's redis.call
			}
			return false
		})
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		mr.Server().Dispatch(server.NewPeer(w), []string{"EVAL", "return redis.call('PING')", "0"})
		if captured == nil || reflect.TypeOf(captured).Kind() != reflect.Pointer {
			return
		}
		ct := reflect.TypeOf(captured).Elem()
		if ct.Kind() != reflect.Struct {
			return
		}
		field := func(name string, k reflect.Kind) []int {
			sf, ok := ct.FieldByName(name)
			if !ok || sf.Type.Kind() != k {
				return nil
			}
			return sf.Index
		}
		private.ctxType = ct
		private.nested = field("nested", reflect.Bool)
		private.transaction = field("transaction", reflect.Slice)
		private.subscriber = field("subscriber", reflect.Pointer)
		private.selDB = field("selectedDB", reflect.Int)
		if private.nested == nil || private.transaction == nil || private.subscriber == nil || private.selDB == nil {
			return
		}
		nc := reflect.New(ct)
		nc.Elem().Set(reflect.ValueOf(captured).Elem())
		cv := nc.Elem()
		if !cv.FieldByIndex(private.nested).Bool() || cv.FieldByIndex(private.selDB).Int() != 0 ||
			!cv.FieldByIndex(private.transaction).IsNil() || !cv.FieldByIndex(private.subscriber).IsNil() {
			return
		}
		private.nestedCtx = nc
		private.ok = true
	})
	return private.ok
}

// plainConn: a connection whose EVALSHA miniredis would run right away on
// database 0 (not queued in MULTI, not refused in pub/sub mode, not a
// script's own call).
func plainConn(c *server.Peer) bool {
	if c.Ctx == nil {
		return true // a fresh connection: no context yet
	}
	v := reflect.ValueOf(c.Ctx)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != private.ctxType || v.IsNil() {
		return false
	}
	v = v.Elem()
	return !v.FieldByIndex(private.nested).Bool() && v.FieldByIndex(private.transaction).IsNil() &&
		v.FieldByIndex(private.subscriber).IsNil() && v.FieldByIndex(private.selDB).Int() == 0
}
