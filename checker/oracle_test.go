package checker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockchaos/lockchaos/history"
)

// bruteForce decides linearizability by trying every order of ops that
// respects real time (a before b when a returned strictly before b was
// called), stepping a nondeterministic model. Only for a handful of ops.
func bruteForce(ops []porcupine.Operation, init []interface{}, step func(s, in interface{}) []interface{}) bool {
	done := make([]bool, len(ops))
	var try func(states []interface{}, left int) bool
	try = func(states []interface{}, left int) bool {
		if left == 0 {
			return true
		}
		for i, op := range ops {
			if done[i] {
				continue
			}
			blocked := false
			for j, other := range ops {
				if !done[j] && j != i && other.Return < op.Call {
					blocked = true
					break
				}
			}
			if blocked {
				continue
			}
			var next []interface{}
			seen := map[interface{}]bool{}
			for _, s := range states {
				for _, n := range step(s, op.Input) {
					if !seen[n] {
						seen[n] = true
						next = append(next, n)
					}
				}
			}
			if len(next) == 0 {
				continue
			}
			done[i] = true
			if try(next, left-1) {
				return true
			}
			done[i] = false
		}
		return false
	}
	return try(init, len(ops))
}

func lockStep(s, in interface{}) []interface{} {
	ok, n := LockModel.Step(s, in, nil)
	if !ok {
		return nil
	}
	return []interface{}{n}
}

func counterStep(s, in interface{}) []interface{} { return counterModel.Step(s, in, nil) }

// byKey splits operations per key for the per-key oracle.
func byKey(ops []porcupine.Operation) map[string][]porcupine.Operation {
	m := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Metadata.(*keyed).key
		m[k] = append(m[k], op)
	}
	return m
}

// verdicts returns (segmented, plain porcupine, brute force) for one model.
func verdicts(t *testing.T, sm segmentedModel, ops []porcupine.Operation, init []interface{}, step func(s, in interface{}) []interface{}, bruteOK bool) (seg, plain, brute bool) {
	t.Helper()
	out := sm.check(context.Background(), opSlice(ops), nil, time.Now().Add(10*time.Second))
	if out.timedOut {
		t.Fatal("segmented check timed out on a tiny history")
	}
	seg = len(out.illegal) == 0
	res := porcupine.CheckOperationsTimeout(sm.model, ops, 10*time.Second)
	if res == porcupine.Unknown {
		t.Fatal("plain porcupine timed out on a tiny history")
	}
	plain = res == porcupine.Ok
	brute = plain
	if bruteOK {
		brute = true
		for _, kops := range byKey(ops) {
			if !bruteForce(kops, init, step) {
				brute = false
			}
		}
	}
	return seg, plain, brute
}

// agree checks one history: for the lock model, segmented porcupine, plain
// porcupine, brute force (when small) and the interval sweep agree; for
// the counter model, the first three.
func agree(t *testing.T, h *history.History) {
	t.Helper()
	evs := sortedEvents(h)
	holds := holdsOf(evs)
	lops := lockOperations(holds)
	small := len(lops) <= 9
	seg, plain, brute := verdicts(t, lockSegmented, lops, []interface{}{free}, lockStep, small)
	sweep := len(Overlaps(holds)) == 0
	if seg != plain || plain != brute || brute != sweep {
		t.Fatalf("lock model disagreement: segmented %v, porcupine %v, brute force %v, interval sweep %v\nholds %+v", seg, plain, brute, sweep, holds)
	}
	rops := resourceOperations(evs)
	seg, plain, brute = verdicts(t, counterSegmented, rops, []interface{}{int64(0)}, counterStep, len(rops) <= 8)
	if seg != plain || plain != brute {
		t.Fatalf("counter model disagreement: segmented %v, porcupine %v, brute force %v\nops %+v", seg, plain, brute, rops)
	}
	// And the public entry point says the same as the parts.
	rep := Check(context.Background(), h, Options{Budget: 10 * time.Second})
	if (rep.Result(MutualExclusion).Status == Pass) != sweep || (rep.Result(ResourceLinearizable).Status == Pass) != plain {
		t.Fatalf("Check disagrees with its parts: %+v", rep.Results)
	}
}

func TestCheckersAgreeOnTestdata(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(files) < 5 {
		t.Fatalf("only %d testdata histories", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h, err := history.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, h)
		})
	}
}

// fuzzHistory builds a small history from bytes: 2-3 clients taking turns
// (or not) on one or two keys, with refused and indefinite acquires,
// releases, lost signals, reads and writes with small values.
func fuzzHistory(data []byte) *history.History {
	i := 0
	next := func(n int) int {
		if n <= 0 {
			return 0
		}
		if i >= len(data) {
			i++
			return (i * 7) % n
		}
		b := int(data[i])
		i++
		return b % n
	}
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Lock: "token"}}
	var id int64
	add := func(e history.Event) {
		e.ID = id
		id++
		h.Events = append(h.Events, e)
		h.End = max(h.End, e.Return)
	}
	keys := []string{"a", "b"}
	nKeys := 1 + next(2)
	clients := 2 + next(2)
	var last int64
	counter := map[string]int64{}
	for c := range clients {
		// Mostly take turns after the previous client, sometimes overlap it.
		t := int64(next(6))
		if next(3) != 0 {
			t += last
		}
		for range 1 + next(2) {
			key := keys[next(nKeys)]
			// Optional refused or indefinite attempts first.
			if next(3) == 0 {
				out := []history.Outcome{history.Refused, history.Indefinite}[next(2)]
				call := t
				t += int64(1 + next(3))
				add(history.Event{Kind: history.Acquire, Client: c, Key: key, Call: call, Return: t, Outcome: out})
			}
			call := t
			t += int64(next(3))
			add(history.Event{Kind: history.Acquire, Client: c, Key: key, Call: call, Return: t, Outcome: history.Ok})
			if next(2) == 0 { // a critical section
				rc := t + int64(next(3))
				t = rc + int64(next(3))
				v := counter[key]
				if next(3) == 0 {
					v = int64(next(3))
				}
				add(history.Event{Kind: history.Read, Client: c, Key: key, Call: rc, Return: t, Value: v, Outcome: history.Ok})
				wc := t + int64(next(3))
				t = wc + int64(next(3))
				out := history.Ok
				if next(4) == 0 {
					out = history.Indefinite
				}
				add(history.Event{Kind: history.Write, Client: c, Key: key, Call: wc, Return: t, Value: v + 1, Outcome: out})
				if out == history.Ok {
					counter[key] = v + 1
				}
			}
			end := t + int64(next(4))
			switch next(8) {
			case 0: // never released: holds to the end
				t = end
			case 1:
				add(history.Event{Kind: history.Lost, Client: c, Key: key, Call: end, Return: end, Outcome: history.Ok})
				t = end
			default:
				t = end + int64(next(3))
				add(history.Event{Kind: history.Release, Client: c, Key: key, Call: end, Return: t, Outcome: []history.Outcome{history.Ok, history.Refused}[next(2)]})
			}
			t += int64(next(4))
		}
		last = t
	}
	return h
}

// FuzzCheckersAgree compares, on small generated histories, the segmented
// porcupine verdicts with plain porcupine, a brute-force oracle and (for
// mutual exclusion) the interval sweep. The seed corpus runs in make test;
// `go test -fuzz FuzzCheckersAgree ./checker/` explores further.
func FuzzCheckersAgree(f *testing.F) {
	for _, seed := range [][]byte{
		{}, {0}, {1, 2, 3}, {5, 0, 0, 0, 1, 1, 1, 2}, {255, 254, 3, 9, 27, 81},
		{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1},
		{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
		{1, 3, 0, 2, 0, 0, 1, 1, 2, 0, 3, 1, 0, 2, 1, 0, 0, 1, 2, 3, 0, 1},
		[]byte("lockchaos mutual exclusion"), []byte("lost update 17 -> 18"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			return
		}
		agree(t, fuzzHistory(data))
	})
}

// TestFuzzCorpusFindsBothVerdicts guards the generator: a corpus where
// every history passes (or every one fails) would test nothing.
func TestFuzzCorpusFindsBothVerdicts(t *testing.T) {
	var mePass, meFail, resPass, resFail int
	for n := range 300 {
		data := []byte{byte(n), byte(n * 7), byte(n * 13), byte(n * 31), byte(n / 3), byte(n % 5), byte(n * 3), byte(n * 11)}
		h := fuzzHistory(data)
		agree(t, h)
		rep := Check(context.Background(), h, Options{})
		if rep.Result(MutualExclusion).Status == Pass {
			mePass++
		} else {
			meFail++
		}
		if rep.Result(ResourceLinearizable).Status == Pass {
			resPass++
		} else {
			resFail++
		}
	}
	if mePass == 0 || meFail == 0 || resPass == 0 || resFail == 0 {
		t.Fatalf("generator is lopsided: mutual-exclusion %d pass / %d fail, resource %d pass / %d fail", mePass, meFail, resPass, resFail)
	}
	if os.Getenv("LOCKCHAOS_VERBOSE") != "" {
		t.Logf("mutual-exclusion %d pass / %d fail, resource %d pass / %d fail", mePass, meFail, resPass, resFail)
	}
}

// TestCarriedStatesRespectReads: a read above the largest definite write
// shows a pending write landed; the values carried across the cut must
// not include the older ones, or a later stale write passes where plain
// porcupine finds it (found in review).
func TestCarriedStatesRespectReads(t *testing.T) {
	ms := int64(1_000_000)
	ev := func(id int64, k history.Kind, c int, v, call, ret int64, out history.Outcome) history.Event {
		return history.Event{ID: id, Kind: k, Client: c, Key: "k", Value: v, Call: call * ms, Return: ret * ms, Outcome: out}
	}
	h := &history.History{Events: []history.Event{
		ev(0, history.Write, 0, 1, 0, 10, history.Ok),
		ev(1, history.Read, 1, 1, 5, 6, history.Ok),
		ev(2, history.Read, 3, 1, 6, 7, history.Ok),
		ev(3, history.Write, 1, 2, 7, 7, history.Indefinite),
		ev(4, history.Read, 2, 2, 8, 9, history.Ok),
		ev(5, history.Write, 3, 2, 20, 21, history.Ok),
	}, End: 21 * ms}
	agree(t, h)
	if rep := Check(context.Background(), h, Options{Budget: 10 * time.Second}); rep.Result(ResourceLinearizable).Status != Fail {
		t.Fatal("the stale write after the cut was not found")
	}
}
