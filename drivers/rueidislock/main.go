// Command rueidislock serves github.com/redis/rueidis/rueidislock over the
// lockchaos driver protocol (docs/driver-protocol.md): its own client
// (rueidis, RESP3 with client-side caching), automatic extension every
// half TTL, and a context cancelled when the lock is lost, reported to the
// harness as a lost lease. One key per lock (KeyMajority 1: one node).
//
//	lockchaos run --lock-driver 'rueidislock=go run ./drivers/rueidislock'
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

type request struct {
	ID    int64  `json:"id"`
	Op    string `json:"op"`
	Key   string `json:"key"`
	Lease int64  `json:"lease"`
}

type held struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func main() {
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "rueidislock driver:", err)
		os.Exit(1)
	}
}

func ms(name string) time.Duration {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return time.Duration(n) * time.Millisecond
}

// startupWait bounds how long the driver retries its first connection:
// the harness waits 10 s for the hello line.
const startupWait = 5 * time.Second

// newLocker connects rueidislock, retrying for startupWait. rueidis sets
// its connection up (HELLO, client tracking) within the call timeout,
// which a cell scales down to a few hundred milliseconds: on a loaded
// machine the first attempt timed out ("context deadline exceeded") and
// the cell failed before the lock was ever tested. A service retries at
// boot too; once it runs, every call keeps the cell's timeout.
func newLocker(addr string, ttl, call time.Duration) (rueidislock.Locker, error) {
	deadline := time.Now().Add(startupWait)
	for {
		locker, err := rueidislock.NewLocker(rueidislock.LockerOption{
			ClientOption: rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true, ConnWriteTimeout: call,
				Dialer: net.Dialer{Timeout: call}},
			KeyValidity: ttl, KeyMajority: 1,
		})
		if err == nil || time.Now().After(deadline) {
			return locker, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func serve() error {
	addrs := strings.Split(os.Getenv("LOCKCHAOS_ADDRS"), ",")
	ttl, call := ms("LOCKCHAOS_TTL_MS"), ms("LOCKCHAOS_CALL_TIMEOUT_MS")
	if os.Getenv("LOCKCHAOS_ADDRS") == "" || ttl <= 0 {
		return errors.New("LOCKCHAOS_ADDRS and LOCKCHAOS_TTL_MS must be set: run me from lockchaos")
	}
	locker, err := newLocker(addrs[0], ttl, call)
	if err != nil {
		return err
	}
	defer locker.Close()
	s := &server{locker: locker, enc: json.NewEncoder(os.Stdout), leases: map[int64]held{}}
	s.send(map[string]any{"hello": "lockchaos-driver", "version": 1, "name": "rueidislock v1.0.79"})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			return fmt.Errorf("bad request %q: %w", in.Text(), err)
		}
		switch r.Op {
		case "acquire":
			s.acquire(r)
		case "release":
			s.release(r)
		default:
			s.send(map[string]any{"id": r.ID, "result": "error", "error": "unknown op " + r.Op})
		}
	}
	return in.Err()
}

// server answers requests; mu guards leases and the output, which the
// lost-lease watchers write to as well.
type server struct {
	locker rueidislock.Locker
	mu     sync.Mutex
	enc    *json.Encoder
	leases map[int64]held
	next   int64
}

func (s *server) send(v any) { s.mu.Lock(); defer s.mu.Unlock(); _ = s.enc.Encode(v) }

func (s *server) acquire(r request) {
	// A long-lived context: rueidislock caps a lock's validity to
	// its context's deadline.
	ctx, cancel, err := s.locker.TryWithContext(context.Background(), r.Key)
	switch {
	case errors.Is(err, rueidislock.ErrNotLocked):
		s.send(map[string]any{"id": r.ID, "result": "refused"})
	case err != nil:
		s.send(map[string]any{"id": r.ID, "result": "error", "error": err.Error()})
	default:
		s.next++
		id := s.next
		s.mu.Lock()
		s.leases[id] = held{ctx: ctx, cancel: cancel}
		s.mu.Unlock()
		s.send(map[string]any{"id": r.ID, "result": "ok", "lease": id})
		go func() {
			<-ctx.Done()
			s.mu.Lock()
			_, held := s.leases[id] // released by us: already removed
			s.mu.Unlock()
			if held {
				s.send(map[string]any{"lost": id})
			}
		}()
	}
}

func (s *server) release(r request) {
	s.mu.Lock()
	h, ok := s.leases[r.Lease]
	delete(s.leases, r.Lease)
	s.mu.Unlock()
	if !ok || h.ctx.Err() != nil {
		// Lost before release: the lock was not ours any more.
		s.send(map[string]any{"id": r.ID, "result": "refused"})
		return
	}
	h.cancel() // rueidislock deletes its key
	s.send(map[string]any{"id": r.ID, "result": "ok"})
}
