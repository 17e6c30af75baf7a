// Command lockchaos-driver serves one of lockchaos' built-in locks over the
// driver protocol (docs/driver-protocol.md), in a process of its own: the
// same lock can then be paused by the in-process hook or by a real SIGSTOP
// of its process, and compared. It is also the reference driver for
// anyone writing one in another language.
//
//	lockchaos run --lock-driver 'proc-token=lockchaos-driver --lock token'
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/internal/jsonl"
	"github.com/lockchaos/lockchaos/lockimpl"
)

type request struct {
	ID        int64  `json:"id"`
	Op        string `json:"op"`
	Key       string `json:"key"`
	Lease     int64  `json:"lease"`
	TimeoutMS int64  `json:"timeout_ms"`
}

func main() {
	lock := flag.String("lock", "token", "built-in lock to serve: "+strings.Join(lockimpl.Names(), ", "))
	flag.Parse()
	if err := serve(*lock); err != nil {
		fmt.Fprintln(os.Stderr, "lockchaos-driver:", err)
		os.Exit(1)
	}
}

func envMS(name string) time.Duration {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return time.Duration(n) * time.Millisecond
}

func serve(name string) error {
	spec, err := lockimpl.Lookup(name)
	if err != nil {
		return err
	}
	env, err := envFromHarness()
	if err != nil {
		return err
	}
	defer closeAll(env.Clients)
	locker, err := spec.Build(env)
	if err != nil {
		return err
	}
	out := &writer{f: os.Stdout}
	out.hello("lockchaos " + name)
	err = answer(locker, out)
	if c, ok := locker.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	return err
}

// envFromHarness builds the lock's environment from what lockchaos passes
// in the environment: the pod, the nodes (one client each), the TTL and
// the call timeout.
func envFromHarness() (lockimpl.Env, error) {
	pod, _ := strconv.Atoi(os.Getenv("LOCKCHAOS_POD"))
	addrs := strings.Split(os.Getenv("LOCKCHAOS_ADDRS"), ",")
	ttl, call := envMS("LOCKCHAOS_TTL_MS"), envMS("LOCKCHAOS_CALL_TIMEOUT_MS")
	if os.Getenv("LOCKCHAOS_ADDRS") == "" || ttl <= 0 {
		return lockimpl.Env{}, errors.New("LOCKCHAOS_ADDRS and LOCKCHAOS_TTL_MS must be set: run me from lockchaos")
	}
	env := lockimpl.Env{Pod: pod, Addrs: addrs, TTL: ttl, CallTimeout: call}
	for _, a := range addrs {
		rdb, err := lockimpl.NewRedisClient(a, lockimpl.ClientConfig{ReadTimeout: call, WriteTimeout: call})
		if err != nil {
			closeAll(env.Clients)
			return lockimpl.Env{}, err
		}
		env.Clients = append(env.Clients, redis.UniversalClient(rdb))
	}
	return env, nil
}

func closeAll(clients []redis.UniversalClient) {
	for _, c := range clients {
		_ = c.Close()
	}
}

// answer serves the requests on stdin until it closes, one at a time.
func answer(locker lockimpl.Locker, out *writer) error {
	leases := map[int64]lockimpl.Lease{}
	var next int64
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			return fmt.Errorf("bad request %q: %w", in.Text(), err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(time.Duration(r.TimeoutMS)*time.Millisecond, time.Millisecond))
		switch r.Op {
		case "acquire":
			l, err := locker.Acquire(ctx, r.Key)
			if err != nil {
				out.answer(r.ID, err, lockimpl.ErrNotAcquired)
				break
			}
			next++
			leases[next] = l
			out.granted(r.ID, next, l.Token(), l.Fence())
			if lost := l.Lost(); lost != nil {
				id := next
				go func() { <-lost; out.lost(id) }()
			}
		case "release":
			l := leases[r.Lease]
			delete(leases, r.Lease)
			if l == nil {
				out.answer(r.ID, lockimpl.ErrNotHeld, lockimpl.ErrNotHeld)
				break
			}
			out.answer(r.ID, l.Release(ctx), lockimpl.ErrNotHeld)
		default:
			out.answer(r.ID, errors.New("unknown op "+r.Op), nil)
		}
		cancel()
	}
	return in.Err()
}

// writer writes the protocol's lines, one write each, serialised:
// answers and unsolicited lost notices. The lines have fixed shapes and
// are built by hand into one buffer with internal/jsonl, byte for byte
// what encoding/json writes (encoding/json over a map reflects, sorts and
// allocates for every answer).
type writer struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
}

func (w *writer) line(build func(b []byte) []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(build(append(w.buf[:0], '{')), '}', '\n')
	_, _ = w.f.Write(w.buf)
}

func (w *writer) hello(name string) {
	w.line(func(b []byte) []byte {
		return jsonl.String(b, `"hello":"lockchaos-driver","version":1,"name":`, name)
	})
}

func (w *writer) granted(id, lease int64, token string, fence uint64) {
	w.line(func(b []byte) []byte {
		b = jsonl.Int(b, `"id":`, id)
		b = jsonl.Int(b, `,"result":"ok","lease":`, lease)
		b = jsonl.String(b, `,"token":`, token)
		return jsonl.Uint(b, `,"fence":`, fence)
	})
}

func (w *writer) lost(lease int64) {
	w.line(func(b []byte) []byte { return jsonl.Int(b, `"lost":`, lease) })
}

// answer maps a lock's error to the protocol: nil ok, the definite
// refusal refused, anything else an indefinite error.
func (w *writer) answer(id int64, err, refusal error) {
	w.line(func(b []byte) []byte {
		b = jsonl.Int(b, `"id":`, id)
		switch {
		case err == nil:
			return append(b, `,"result":"ok"`...)
		case refusal != nil && errors.Is(err, refusal):
			return append(b, `,"result":"refused"`...)
		}
		return jsonl.String(b, `,"result":"error","error":`, err.Error())
	})
}
