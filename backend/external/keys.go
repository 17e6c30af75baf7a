package external

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/backend"
)

// Keys on someone else's Redis.
//
// Every key a cell writes there is under its prefix, "lockchaos:<cell
// seed>:" (scenarios.Plan.KeyPrefix), and the cell deletes them all when
// it ends. A harness killed outright (SIGKILL, a CI job cancelled, a power
// loss) deletes nothing, so two more things hold:
//
//   - every key the built-in locks write has an expiry: lock keys their
//     lease time, the fence counter a day after its last acquire
//     (lockimpl.DefaultFenceTTL);
//   - while a cell runs, its prefix carries an owner marker,
//     "<prefix>owner", written before the cell's first key, with an expiry
//     of OwnerTTL pushed out every OwnerTTL/6, and its value names the
//     process. Each external-backend run begins with Sweep: every key
//     under "lockchaos:<digits>:" whose prefix has no marker (its run was
//     killed more than OwnerTTL ago), or a marker of a process of this
//     machine that no longer runs, is deleted. So a key a lock writes
//     without an expiry (a user's driver, say) is gone by the next run.
//
// Nothing outside "lockchaos:<digits>:" is read or written: the prefix is
// the harness's own. Keys are found with SCAN, never KEYS (the server may
// be busy with real work), and a prefix is swept in one script that checks
// its marker first, so a run that claimed it meanwhile keeps its keys.

// Prefix begins every key the harness writes on someone else's Redis.
const Prefix = "lockchaos:"

// OwnerTTL is the owner marker's expiry: a run whose marker lapsed (it was
// killed, or stopped longer than this) has its keys swept by the next run.
const OwnerTTL = 30 * time.Second

// ownerTTL is OwnerTTL, shortened by tests.
var ownerTTL = OwnerTTL

const (
	ownerKey     = "owner" // the marker's name under a cell's prefix
	sweepTimeout = 10 * time.Second
	sweepBatch   = 500 // keys per sweep script
)

//go:embed sweep.lua
var sweepLua string

var sweepScript = redis.NewScript(sweepLua)

// ownerValue names this process for the marker: where pids compare
// (backend.BootID), then backend.ProcessID, then the host for people.
func ownerValue() string {
	host, _ := os.Hostname()
	return backend.BootID() + " " + backend.ProcessID() + " " + host
}

// ownerGone reports whether a marker names a process of this machine and
// pid namespace that no longer runs. A marker of another machine, or one
// that does not parse, is alive until it lapses.
func ownerGone(v string) bool {
	f := strings.Fields(v)
	return len(f) >= 2 && f[0] != "" && f[0] == backend.BootID() && !backend.ProcessAlive(f[1])
}

// Claim marks prefix as a live run's on the servers at addrs (the cell's
// nodes), before the cell writes any key there, and keeps the mark alive
// until release, which removes it (the cell then deletes its keys). An
// error means a server refused the mark: the cell cannot run safely there.
func (b *Backend) Claim(prefix string, addrs []string) (release func(), err error) {
	if !strings.HasPrefix(prefix, Prefix) {
		return nil, fmt.Errorf("%w: key prefix %q is not under %q", backend.ErrInvalidConfig, prefix, Prefix)
	}
	if b.pg != nil && slices.Contains(addrs, b.pg.addr) {
		return b.pg.claimSchema(prefix) // a PostgreSQL cell: its one node is that server
	}
	marker, value := prefix+ownerKey, ownerValue()
	var clients []*redis.Client
	for _, a := range addrs {
		if slices.ContainsFunc(clients, func(c *redis.Client) bool { return c.Options().Addr == a }) {
			continue
		}
		rdb := backend.Admin(a)
		clients = append(clients, rdb)
		if err := rdb.Set(context.Background(), marker, value, ownerTTL).Err(); err != nil {
			closeAll(clients)
			return nil, fmt.Errorf("external: redis %s: mark keys %s* as this run's: %w", a, prefix, err)
		}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ownerTTL / 6)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				for _, rdb := range clients {
					_ = rdb.Set(context.Background(), marker, value, ownerTTL).Err()
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for _, rdb := range clients {
				_ = rdb.Del(ctx, marker).Err()
			}
			closeAll(clients)
		})
	}, nil
}

func closeAll(cs []*redis.Client) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// Sweep deletes, on each server at addrs, the keys of cells whose run is
// gone (see the top of this file) and returns how many it deleted. It is
// bounded by timeout and does what it can: a server that fails midway
// keeps the rest of its leftovers for the next run.
func Sweep(addrs []string, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	n := 0
	for _, a := range slices.Compact(slices.Sorted(slices.Values(addrs))) {
		rdb := backend.Admin(a)
		k, _ := sweepServer(ctx, rdb)
		_ = rdb.Close()
		n += k
	}
	return n
}

// sweepServer sweeps one server: SCAN for the harness's keys, grouped by
// cell prefix, then one script per prefix whose owner is gone.
func sweepServer(ctx context.Context, rdb *redis.Client) (int, error) {
	cells := map[string][]string{}
	var cursor uint64
	for {
		keys, next, err := rdb.Scan(ctx, cursor, Prefix+"*", 1000).Result()
		if err != nil {
			return 0, err
		}
		for _, k := range keys {
			p, ok := cellPrefix(k)
			switch {
			case !ok:
			case k == p+ownerKey: // a marker alone (the cell's keys expired) goes too
				if _, seen := cells[p]; !seen {
					cells[p] = nil
				}
			default:
				cells[p] = append(cells[p], k)
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	n := 0
	for p, keys := range cells {
		v, err := rdb.Get(ctx, p+ownerKey).Result()
		switch {
		case errors.Is(err, redis.Nil):
			v = ""
		case err != nil:
			return n, err
		case !ownerGone(v):
			continue // a live run's
		}
		for {
			batch := keys[:min(len(keys), sweepBatch)]
			keys = keys[len(batch):]
			last := 0 // the marker goes with the last batch: the others check it
			if len(keys) == 0 {
				last = 1
			}
			k, err := sweepScript.Run(ctx, rdb, append([]string{p + ownerKey}, batch...), v, last).Int()
			if err != nil {
				return n, err
			}
			if n += k; last == 1 {
				break
			}
		}
	}
	return n, nil
}

// cellPrefix returns the cell prefix of a key the harness wrote,
// "lockchaos:<cell seed>:", or false for any other key (the seed is an
// integer: nothing else under "lockchaos:" is swept).
func cellPrefix(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, Prefix)
	if !ok {
		return "", false
	}
	seed, _, ok := strings.Cut(rest, ":")
	digits := strings.TrimPrefix(seed, "-")
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	return Prefix + seed + ":", true
}
