package history_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

func record(t *testing.T, path string) (*history.Recorder, *history.Op) {
	t.Helper()
	rec, err := history.NewRecorder(path, history.Header{Scenario: "baseline", Lock: "token", Seed: 7, Clients: 2, Keys: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	a := rec.Invoke(history.Event{Kind: history.Acquire, Client: 0, Key: "k"})
	a.Return(history.Result{Outcome: history.Ok, Token: "tok", Fence: 3})
	v := int64(41)
	r := rec.Invoke(history.Event{Kind: history.Read, Client: 0, Key: "k", Fence: 3})
	r.Return(history.Result{Outcome: history.Ok, Value: &v})
	w := rec.Invoke(history.Event{Kind: history.Write, Client: 0, Key: "k", Fence: 3, Value: 42})
	w.Return(history.Result{Outcome: history.Indefinite, Err: errors.New("i/o timeout")})
	rec.Point(history.Event{Kind: history.Lost, Client: 0, Key: "k"})
	f := rec.Invoke(history.Event{Kind: history.Fault, Client: -1, Window: history.FaultWindow("latency", history.Hit{Pods: []int{0}, Links: []string{"client0->node0"}})})
	f.Return(history.Result{Outcome: history.Ok})
	now := rec.Now()
	rec.Record(history.Event{Kind: history.Renew, Client: 1, Key: "k", Call: now - 10, Return: now, Outcome: history.Refused})
	open := rec.Invoke(history.Event{Kind: history.Release, Client: 0, Key: "k"})
	return rec, open
}

func TestRecorderRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	rec, open := record(t, path)
	_ = open // never returns: the run "ended" with it in flight
	mem, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	disk, err := history.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mem.Events, disk.Events) {
		t.Fatalf("memory and disk differ:\n%+v\n%+v", mem.Events, disk.Events)
	}
	if disk.Header.Seed != 7 || disk.Header.Format != history.FormatVersion || disk.Header.Start.IsZero() {
		t.Fatalf("header %+v", disk.Header)
	}
	last := disk.Events[len(disk.Events)-1]
	if !last.Open || last.Outcome != history.Indefinite || last.Err != "no return recorded" {
		t.Fatalf("unreturned op loaded as %+v", last)
	}
	if w := disk.Events[2]; w.Value != 42 || w.Outcome != history.Indefinite || w.Err != "i/o timeout" {
		t.Fatalf("write %+v", w)
	}
	if a := disk.Events[0]; a.Token != "tok" || a.Fence != 3 || a.Return < a.Call {
		t.Fatalf("acquire %+v", a)
	}
}

func TestRecorderFlushesWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	rec, _ := record(t, path)
	defer rec.Close()
	deadline := time.Now().Add(time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), "\n") >= 12 {
			break // header + 11 lines, without Close: a crash now loses nothing
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 1s only %d lines on disk", strings.Count(string(b), "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	h, err := history.LoadFile(path)
	if err != nil {
		t.Fatalf("a history read mid-run must load: %v", err)
	}
	if len(h.Events) != 7 {
		t.Fatalf("%d events mid-run, want 7", len(h.Events))
	}
}

func TestLoadReportsFileAndLine(t *testing.T) {
	header := `{"format":1,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z"}`
	call := `{"op":0,"phase":"call","t":5,"kind":"acquire","client":0,"key":"k"}`
	cases := map[string]struct{ body, want string }{
		"empty":          {"", "empty file"},
		"bad header":     {"not json\n", "bad.jsonl:1: header"},
		"old format":     {`{"format":99}` + "\n", "bad.jsonl:1: header: format 99"},
		"broken json":    {header + "\n" + call + "\n{\"op\":1,\n", "bad.jsonl:3:"},
		"unknown field":  {header + "\n" + `{"op":0,"phase":"call","t":1,"kind":"acquire","client":0,"key":"k","colour":"red"}` + "\n", `bad.jsonl:2: json: unknown field "colour"`},
		"orphan return":  {header + "\n" + `{"op":4,"phase":"return","t":9,"client":0,"outcome":"ok"}` + "\n", "bad.jsonl:2: return for op 4 that was never invoked"},
		"double return":  {header + "\n" + call + "\n" + `{"op":0,"phase":"return","t":9,"client":0,"outcome":"ok"}` + "\n" + `{"op":0,"phase":"return","t":9,"client":0,"outcome":"ok"}` + "\n", "bad.jsonl:4: op 0 returned twice"},
		"unknown kind":   {header + "\n" + `{"op":0,"phase":"call","t":1,"kind":"teleport","client":0,"key":"k"}` + "\n", `bad.jsonl:2: unknown kind "teleport" (want one of`},
		"bad outcome":    {header + "\n" + call + "\n" + `{"op":0,"phase":"return","t":9,"client":0,"outcome":"maybe"}` + "\n", `bad.jsonl:3: unknown outcome "maybe" (want one of`},
		"time backwards": {header + "\n" + call + "\n" + `{"op":0,"phase":"return","t":2,"client":0,"outcome":"ok"}` + "\n", "bad.jsonl:3: op 0: times out of order"},
		"unknown phase":  {header + "\n" + `{"op":0,"phase":"maybe","t":1}` + "\n", `bad.jsonl:2: unknown phase "maybe"`},
		"truncated line": {header + "\n" + call + "\n" + `{"op":0,"phase":"ret`, "bad.jsonl:3:"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := history.Load(strings.NewReader(c.body), "bad.jsonl")
			if !errors.Is(err, history.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := history.LoadFile(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Fatalf("err = %v", err)
	}
}

// TestTwoOperationsInFlightIsBadInput: a client does one thing at a time;
// a history that says otherwise is malformed, named by file and line.
func TestTwoOperationsInFlightIsBadInput(t *testing.T) {
	in := `{"format":2,"scenario":"s","lock":"token","seed":1,"start":"2026-11-29T00:00:00Z"}
{"op":0,"phase":"call","t":10,"kind":"acquire","client":1,"key":"k"}
{"op":1,"phase":"call","t":20,"kind":"read","client":1,"key":"k"}
`
	_, err := history.Load(strings.NewReader(in), "two.jsonl")
	if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), "two.jsonl:3:") || !strings.Contains(err.Error(), "one operation at a time") {
		t.Fatalf("err = %v", err)
	}
	// Renewals are a lock's background work: they may overlap.
	ok := `{"format":2,"scenario":"s","lock":"token","seed":1,"start":"2026-11-29T00:00:00Z"}
{"op":0,"phase":"call","t":10,"kind":"acquire","client":1,"key":"k"}
{"op":1,"phase":"call","t":20,"kind":"renew","client":1,"key":"k"}
{"op":1,"phase":"return","t":25,"client":1,"outcome":"ok"}
{"op":0,"phase":"return","t":30,"client":1,"outcome":"ok"}
`
	if _, err := history.Load(strings.NewReader(ok), "renew.jsonl"); err != nil {
		t.Fatal(err)
	}
}

// A span is printed in the unit its rounded value falls in: 999.6 ms is
// a second, not "1000 ms" (a warning once read "lasted 1000 ms").
func TestSpanRoundsBeforeItPicksTheUnit(t *testing.T) {
	for d, want := range map[time.Duration]string{
		999600 * time.Microsecond: "1.000 s",
		999400 * time.Microsecond: "999 ms",
		1590 * time.Millisecond:   "1.590 s",
		999600 * time.Nanosecond:  "1 ms",
		1500 * time.Nanosecond:    "2 µs",
		999 * time.Nanosecond:     "1 µs",
		400 * time.Nanosecond:     "400 ns",
	} {
		if got := history.Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}
