package checker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// shape is a kind of history the checker must handle in O(n log n).
type shape struct {
	name    string
	clients int
	// contended adds a refused attempt overlapping every hold; indefinite
	// makes this share of writes time out (they may or may not have
	// happened).
	contended  bool
	indefinite float64
}

var shapes = []shape{
	{name: "contended", clients: 8, contended: true},
	{name: "serial", clients: 8},
	{name: "indefinite-1pct", clients: 8, contended: true, indefinite: 0.01},
	{name: "many-clients", clients: 200, contended: true},
}

// shaped builds a passing history of about n events of the given shape.
func shaped(n, keys int, s shape) *history.History {
	h := generateWith(n, keys, s.clients, s.contended, s.indefinite)
	return h
}

// BenchmarkCheckShapes loads and checks every shape at 1M events on one
// key and on ten, as `lockchaos check` would: the history is written to a
// file first, and a fresh process (this test binary, as a helper) loads
// and checks it, so its peak RSS is the figure, not this process's.
// Targets: under 3 s and 512 MiB each.
//
//	go test -run '^$' -bench BenchmarkCheckShapes -benchtime 1x ./checker/
func BenchmarkCheckShapes(b *testing.B) {
	for _, s := range shapes {
		for _, keys := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/keys=%d", s.name, keys), func(b *testing.B) {
				benchCheckFile(b, 1_000_000, keys, s)
			})
		}
	}
}

// BenchmarkCheck10M is the ten-million-event figure, contended, one key
// and ten. Targets: under 30 s and 2 GiB. Writing the file takes a minute
// and about 6 GB in this process before the helper starts.
//
//	go test -run '^$' -bench BenchmarkCheck10M -benchtime 1x -timeout 30m ./checker/
func BenchmarkCheck10M(b *testing.B) {
	for _, keys := range []int{1, 10} {
		b.Run(fmt.Sprintf("contended/keys=%d", keys), func(b *testing.B) {
			benchCheckFile(b, 10_000_000, keys, shapes[0])
		})
	}
}

func benchCheckFile(b *testing.B, n, keys int, s shape) {
	path := filepath.Join(b.TempDir(), "h.jsonl")
	if err := history.WriteFile(path, shaped(n, keys, s)); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	var m checkFileMeasure
	for range b.N {
		m = checkFileInHelper(b, path)
	}
	b.ReportMetric(m.Check, "total-s")
	b.ReportMetric(float64(m.PeakRSSKiB)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(m.Chunks), "chunks")
}

// checkFileMeasure is what the helper process reports.
type checkFileMeasure struct {
	Check      float64 // seconds, reading included
	PeakRSSKiB int64   // VmHWM
	Chunks     int
	Verdict    string
}

const helperEnv = "LOCKCHAOS_CHECK_HELPER_FILE"

func checkFileInHelper(b *testing.B, path string) checkFileMeasure {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCheckFileHelper$", "-test.count", "1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("helper: %v\n%s", err, out)
	}
	var m checkFileMeasure
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "MEASURE "); ok {
			if err := json.Unmarshal([]byte(rest), &m); err != nil {
				b.Fatal(err)
			}
		}
	}
	if m.Verdict != string(checker.Pass) {
		b.Fatalf("generated history should pass, helper says %q:\n%s", m.Verdict, out)
	}
	return m
}

// TestCheckFileHelper is the helper process of the benchmarks above: it
// checks the file it is given as lockchaos check does (CheckFile: read
// and checked in chunks of a million events or more) and prints what it
// measured.
func TestCheckFileHelper(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("runs only as the helper process of BenchmarkCheckShapes and BenchmarkCheck10M")
	}
	start := time.Now()
	rep, sum, err := checker.CheckFile(context.Background(), path, checker.FileOptions{Options: checker.Options{Budget: 5 * time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	m := checkFileMeasure{Check: time.Since(start).Seconds(), Chunks: sum.Chunks, Verdict: string(rep.Verdict)}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			m.PeakRSSKiB, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	if m.PeakRSSKiB == 0 {
		t.Fatal("no VmHWM in /proc/self/status")
	}
	j, _ := json.Marshal(m)
	fmt.Printf("MEASURE %s\n", j)
}

// plainCounter is porcupine's counter model written afresh, for plain
// porcupine on the same reads and writes, without any of the checker's
// cutting.
var plainCounter = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range ops {
			k := op.Input.(plainOp).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{int64(0)} },
	Step: func(state, input, _ interface{}) []interface{} {
		s, in := state.(int64), input.(plainOp)
		if !in.write {
			if s == in.value {
				return []interface{}{s}
			}
			return nil
		}
		var next []interface{}
		if s == in.value-1 {
			next = append(next, in.value)
		}
		if in.indefinite {
			next = append(next, s)
		}
		return next
	},
}

type plainOp struct {
	key               string
	write, indefinite bool
	value             int64
}

// BenchmarkPlainPorcupine is the side-by-side figure: plain porcupine on
// the resource operations of the same contended history (100k events: at
// 1M it needs tens of seconds and gigabytes, see docs/performance.md).
//
//	go test -run '^$' -bench 'BenchmarkPlainPorcupine|BenchmarkCheckShapes/contended' -benchtime 1x ./checker/
func BenchmarkPlainPorcupine(b *testing.B) {
	for _, keys := range []int{1, 10} {
		b.Run(fmt.Sprintf("events=100000/keys=%d", keys), func(b *testing.B) {
			h := shaped(100_000, keys, shapes[0])
			var ops []porcupine.Operation
			for _, e := range h.Events {
				if (e.Kind != history.Read && e.Kind != history.Write) || e.Outcome == history.Refused {
					continue
				}
				ops = append(ops, porcupine.Operation{ClientId: e.Client, Call: e.Call, Return: e.Return,
					Input: plainOp{key: e.Key, write: e.Kind == history.Write, value: e.Value}})
			}
			m := plainCounter.ToModel()
			b.ResetTimer()
			var peak uint64
			var res porcupine.CheckResult
			for range b.N {
				peak = max(peak, peakHeap(func() { res = porcupine.CheckOperationsTimeout(m, ops, time.Minute) }))
			}
			if res != porcupine.Ok {
				b.Fatalf("plain porcupine: %v", res)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
