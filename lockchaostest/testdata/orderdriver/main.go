// Command lockdriver serves the team's order lock to lockchaos over the
// driver protocol (docs/driver-protocol.md): JSON lines on stdin and
// stdout, one process per simulated pod. It lives in the team's own module
// and imports nothing of lockchaos.
package main

// docs:begin driver
import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The team's lock: SET NX PX with a random token, released by
// compare-and-delete. In a real module this is the library under test
// (Dapr's lock component, redsync, ...), called as the service calls it.
var release = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

type request struct {
	ID        int64  `json:"id"`
	Op        string `json:"op"`
	Key       string `json:"key"`
	Lease     int64  `json:"lease"`
	TimeoutMS int64  `json:"timeout_ms"`
}

func main() {
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "lockdriver:", err) // stderr lands in the cell's folder
		os.Exit(1)
	}
}

func serve() error {
	// What the harness hands each pod: its proxies' addresses and the TTL.
	addr, _, _ := strings.Cut(os.Getenv("LOCKCHAOS_ADDRS"), ",")
	ttlMS, err := strconv.Atoi(os.Getenv("LOCKCHAOS_TTL_MS"))
	if addr == "" || err != nil {
		return errors.New("LOCKCHAOS_ADDRS and LOCKCHAOS_TTL_MS must be set: run me from lockchaos")
	}
	ttl := time.Duration(ttlMS) * time.Millisecond
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()

	out := json.NewEncoder(os.Stdout) // os.Stdout is unbuffered: every line goes out at once
	if err := out.Encode(map[string]any{"hello": "lockchaos-driver", "version": 1, "name": "orders lock"}); err != nil {
		return err
	}
	tokens := map[int64]string{} // lease id -> the token it wrote
	var next int64
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() { // stdin closes when the cell ends
		var r request
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			return fmt.Errorf("bad request %q: %w", in.Text(), err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.TimeoutMS)*time.Millisecond)
		answer := map[string]any{"id": r.ID, "result": "ok"}
		switch r.Op {
		case "acquire":
			token := strconv.FormatUint(rand.Uint64(), 36)
			ok, err := rdb.SetNX(ctx, r.Key, token, ttl).Result()
			switch {
			case err != nil: // indefinite: the SET may have landed
				answer["result"], answer["error"] = "error", err.Error()
			case !ok: // definite: someone holds it
				answer["result"] = "refused"
			default:
				next++
				tokens[next] = token
				answer["lease"], answer["token"] = next, token
			}
		case "release":
			token, held := tokens[r.Lease]
			delete(tokens, r.Lease)
			n, err := release.Run(ctx, rdb, []string{r.Key}, token).Int()
			switch {
			case !held || err == nil && n == 0: // definite: not ours (any more)
				answer["result"] = "refused"
			case err != nil:
				answer["result"], answer["error"] = "error", err.Error()
			}
		default:
			answer["result"], answer["error"] = "error", "unknown op "+r.Op
		}
		cancel()
		if err := out.Encode(answer); err != nil {
			return err
		}
	}
	return in.Err()
}

// docs:end driver
