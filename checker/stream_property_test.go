package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

type genCfg struct {
	lateRenew, faults, equalTimes, lost, reacquire, openEnd bool
	// liveness makes the fault windows stop holders and take lock nodes
	// down, and pods abandon what they hold.
	liveness             bool
	keys, clients, steps int
	fencing              string
}

type busyOp struct {
	id   int64
	kind string
	key  string
	val  int64
}

// genLines writes a recorder-ordered history: lines in time order except
// late renewals (call and return written together, with older times).
func genLines(r *rand.Rand, cfg genCfg) string {
	var b strings.Builder
	hdr := map[string]any{"format": 2, "scenario": "s", "lock": "token", "seed": 1, "start": "2026-01-01T00:00:00Z", "ttl_ns": 20}
	if cfg.fencing != "" {
		hdr["fencing"] = cfg.fencing
	}
	if cfg.liveness {
		// Bounds on the generator's nanosecond clock, so moments are
		// judged and some fail.
		hdr["lock_nodes"], hdr["recover_within_ns"], hdr["acquire_within_ns"] = 3, 30, 12
	}
	if cfg.faults {
		hdr["faults"] = []string{"pause"}
		hdr["floor"] = map[string]any{"min_exercised": 1, "min_cycles": 3, "max_indefinite": 0.3}
	}
	write := func(m map[string]any) {
		bs, _ := json.Marshal(m)
		b.Write(bs)
		b.WriteByte('\n')
	}
	write(hdr)
	var t int64 = 1
	var op int64
	keys := []string{"a", "b", "c"}[:cfg.keys]
	busy := map[int]*busyOp{}
	stuck := map[int]bool{}
	held := map[int]map[string]bool{}
	counter := map[string]int64{}
	fence := map[string]uint64{}
	var openWin []int64
	var closedWin []int64
	type past struct {
		client int
		key    string
		from   int64
	}
	var pasts []past
	for c := 0; c < cfg.clients; c++ {
		held[c] = map[string]bool{}
	}
	for step := 0; step < cfg.steps; step++ {
		if cfg.equalTimes && r.Intn(3) == 0 {
			// same time
		} else {
			t += int64(1 + r.Intn(4))
		}
		c := r.Intn(cfg.clients)
		switch x := r.Intn(100); {
		case x < 55:
			if stuck[c] {
				continue
			}
			if bo := busy[c]; bo != nil {
				// return
				out := "ok"
				switch y := r.Intn(20); {
				case y < 3:
					out = "refused"
				case y < 5:
					out = "indefinite"
				}
				if cfg.openEnd && r.Intn(60) == 0 {
					stuck[c] = true
					continue
				}
				m := map[string]any{"op": bo.id, "phase": "return", "t": t, "client": c, "outcome": out}
				switch bo.kind {
				case "acquire":
					if out == "ok" {
						fence[bo.key]++
						f := fence[bo.key]
						if r.Intn(15) == 0 && f > 1 {
							f -= 1
						}
						m["fence"] = f
						m["token"] = fmt.Sprintf("t%d", bo.id)
						held[c][bo.key] = true
						pasts = append(pasts, past{c, bo.key, t})
					}
				case "read":
					v := counter[bo.key]
					if r.Intn(25) == 0 {
						v += int64(r.Intn(3)) - 1
					}
					m["value"] = v
				case "write":
					if out == "ok" || (out == "indefinite" && r.Intn(2) == 0) {
						counter[bo.key] = bo.val
					}
					m["value"] = bo.val
				case "release":
					delete(held[c], bo.key)
				}
				write(m)
				delete(busy, c)
				continue
			}
			// start an op
			var kind, key string
			var hk []string
			for k := range held[c] {
				hk = append(hk, k)
			}
			if len(hk) > 0 {
				key = hk[r.Intn(len(hk))]
				switch y := r.Intn(10); {
				case y < 3:
					kind = "read"
				case y < 6:
					kind = "write"
				case y < 9:
					kind = "release"
				default:
					if cfg.reacquire {
						kind = "acquire"
					} else {
						kind = "release"
					}
				}
			} else {
				key = keys[r.Intn(len(keys))]
				kind = "acquire"
				if r.Intn(20) == 0 {
					kind = "release" // orphan
				}
				if r.Intn(25) == 0 {
					kind = "write" // unheld write
				}
			}
			bo := &busyOp{id: op, kind: kind, key: key}
			op++
			m := map[string]any{"op": bo.id, "phase": "call", "t": t, "kind": kind, "client": c, "key": key}
			if kind == "write" {
				bo.val = counter[key] + 1
				m["value"] = bo.val
			}
			if kind != "acquire" && fence[key] > 0 {
				m["fence"] = fence[key]
				if r.Intn(10) == 0 {
					m["fence"] = fence[key] - 1
				}
			}
			write(m)
			busy[c] = bo
		case x < 63:
			if !cfg.lost {
				continue
			}
			for k := range held[c] {
				m := map[string]any{"op": op, "phase": "point", "t": t, "kind": "lost", "client": c, "key": k, "outcome": "ok"}
				if cfg.liveness && r.Intn(2) == 0 {
					m["kind"], m["error"] = "abandon", []string{"crashed", "abandoned"}[r.Intn(2)]
				}
				write(m)
				op++
				delete(held[c], k)
				break
			}
		case x < 75:
			if !cfg.lateRenew || len(pasts) == 0 {
				continue
			}
			p := pasts[r.Intn(len(pasts))]
			if r.Intn(2) == 0 {
				p = pasts[len(pasts)-1]
			}
			call := p.from + int64(r.Intn(int(t-p.from)+1))
			ret := call + int64(r.Intn(int(t-call)+1))
			out := []string{"ok", "ok", "refused", "indefinite"}[r.Intn(4)]
			write(map[string]any{"op": op, "phase": "call", "t": call, "kind": "renew", "client": p.client, "key": p.key, "token": "x", "value": 0})
			write(map[string]any{"op": op, "phase": "return", "t": ret, "client": p.client, "outcome": out})
			op++
		case x < 85:
			if !cfg.faults {
				continue
			}
			if len(openWin) > 0 && r.Intn(2) == 0 {
				w := openWin[0]
				openWin = openWin[1:]
				write(map[string]any{"op": w, "phase": "return", "t": t, "client": -1, "outcome": "ok"})
				closedWin = append(closedWin, w)
			} else if len(openWin) < 2 {
				targets := []string{"n1"}
				if cfg.liveness {
					targets = [][]string{{fmt.Sprintf("client%d", c), "stops-holder"}, {"down=n1"}, {"down=n2"},
						{fmt.Sprintf("client%d", c)}, {"down=n1", "down=n2"}}[r.Intn(5)]
				}
				write(map[string]any{"op": op, "phase": "call", "t": t, "kind": "fault", "client": -1, "fault": "pause", "targets": targets})
				openWin = append(openWin, op)
				op++
			}
		default:
			if !cfg.faults || len(closedWin) == 0 {
				continue
			}
			w := closedWin[0]
			closedWin = closedWin[1:]
			out := []string{"ok", "refused"}[r.Intn(2)]
			write(map[string]any{"op": op, "phase": "point", "t": t, "kind": "exercised", "client": -1, "value": w, "outcome": out, "fault": "pause", "detail": fmt.Sprintf("window %d %s", w, out)})
			op++
		}
	}
	return b.String()
}

// TestChunkedCheckAgreesOnRecorderOrderedHistories writes histories as a
// recorder orders its lines (late renewals with older times, lost
// signals, equal times and zero-length operations, a second acquire
// without a release, operations open at the end, fault windows with
// judgments, fences, several keys) and checks each whole and in chunks of
// 1, 3 and 20 events: the reports must agree (sameReport). It found cuts
// by time moving a hold's end away from its start, and windows open at a
// cut.
func TestChunkedCheckAgreesOnRecorderOrderedHistories(t *testing.T) {
	type variant struct {
		name string
		cfg  genCfg
	}
	base := genCfg{keys: 2, clients: 3, steps: 150}
	var variants []variant
	add := func(name string, f func(*genCfg)) {
		c := base
		f(&c)
		variants = append(variants, variant{name, c})
	}
	add("plain", func(c *genCfg) {})
	add("equal", func(c *genCfg) { c.equalTimes = true })
	add("lost", func(c *genCfg) { c.lost = true })
	add("renew", func(c *genCfg) { c.lateRenew = true })
	add("reacquire", func(c *genCfg) { c.reacquire = true })
	add("faults", func(c *genCfg) { c.faults = true })
	add("openEnd", func(c *genCfg) { c.openEnd = true })
	add("fenced", func(c *genCfg) { c.fencing = "writes" })
	// Late renewals are left out: the generator writes some with returns
	// older than lines before them, which a recorder never does (it writes
	// a renewal as it returns), and a chunk may have passed that time
	// (livesweep.go).
	add("liveness", func(c *genCfg) {
		c.liveness, c.faults, c.lost, c.reacquire, c.openEnd = true, true, true, true, true
	})
	add("liveness-equal", func(c *genCfg) { c.liveness, c.faults, c.lost, c.equalTimes = true, true, true, true })
	add("all", func(c *genCfg) {
		*c = genCfg{lateRenew: true, faults: true, equalTimes: true, lost: true, reacquire: true, openEnd: true, keys: 3, clients: 4, steps: 200, fencing: "reads-and-writes"}
	})
	iters := 60
	if s := os.Getenv("LOCKCHAOS_CHUNK_SEEDS"); s != "" {
		fmt.Sscan(s, &iters)
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			fails := 0
			judged, failed := map[Property]int{}, map[Property]int{}
			for seed := 0; seed < iters; seed++ {
				r := rand.New(rand.NewSource(int64(seed)))
				body := genLines(r, v.cfg)
				path := filepath.Join(t.TempDir(), "h.jsonl")
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				h, err := history.LoadFile(path)
				if err != nil {
					t.Fatalf("seed %d: load: %v", seed, err)
				}
				whole := Check(context.Background(), h, Options{})
				for _, r := range whole.Results[4:] {
					judged[r.Property] += r.Judged
					failed[r.Property] += r.ViolationCount
				}
				for _, n := range []int{1, 3, 20} {
					rep, sum, err := CheckFile(context.Background(), path, FileOptions{ChunkEvents: n})
					if err != nil {
						t.Fatalf("seed %d n %d: %v", seed, n, err)
					}
					if d := sameReport(whole, rep, 50); len(d) > 0 {
						fails++
						if fails <= 3 {
							t.Errorf("seed %d chunks of %d (%d chunks): %v", seed, n, sum.Chunks, d)
							if os.Getenv("LOCKCHAOS_CHUNK_DUMP") != "" {
								os.WriteFile(fmt.Sprintf("/tmp/fail-%s-%d-%d.jsonl", v.name, seed, n), []byte(body), 0o644)
							}
						}
						break
					}
				}
			}
			if fails > 0 {
				t.Errorf("%d of %d seeds disagree", fails, iters)
			}
			if v.cfg.liveness && (judged[DeadlockFree] == 0 || judged[FaultTolerant] == 0 || failed[DeadlockFree] == 0 ||
				failed[FaultTolerant] == 0) {
				t.Errorf("liveness judged %v and failed %v over %d seeds: want some of each property", judged, failed, iters)
			}
		})
	}
}
