package history_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// The fault kinds this test binary knows, as the faults package registers
// its own in a real program.
func init() {
	for _, k := range []string{"client-pause", "pod-crash", "abandoned-lease", "client-partition", "clock-jump",
		"minority-partition", "slow-reply", "failover"} {
		history.RegisterFaultKind(k)
	}
}

// validHeader is a header as a recorder writes it today, every field set.
const validHeader = `{"format":5,"scenario":"gc-pause","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z",` +
	`"clients":2,"keys":["order:1"],"fencing":"off","nodes":1,"faults":["client-pause"],"ttl_ns":300000000,` +
	`"lock_nodes":1,"recover_within_ns":660000000,"acquire_within_ns":600000000,` +
	`"floor":{"min_exercised":3,"min_cycles":20,"max_indefinite":0.5},"backend":"sim","simulated":true,"extra":{"ttl":"300ms"}}`

// validBody is a double hold: client 0 and client 1 both hold order:1.
const validBody = `{"op":0,"phase":"call","t":1,"kind":"acquire","client":0,"key":"order:1"}
{"op":0,"phase":"return","t":2,"client":0,"outcome":"ok","token":"a"}
{"op":1,"phase":"call","t":3,"kind":"acquire","client":1,"key":"order:1"}
{"op":1,"phase":"return","t":4,"client":1,"outcome":"ok","token":"b"}
`

// Every header value no recorder writes and no rule can read is bad
// input naming the file and line (the first), with the valid values; an
// unknown fencing mode used to read as "the resource checks fences" and
// excuse a double hold.
func TestHeaderFieldsAreValidated(t *testing.T) {
	field := func(old, new string) string {
		if !strings.Contains(validHeader, old) {
			t.Fatalf("the header has no %s", old)
		}
		return strings.Replace(validHeader, old, new, 1)
	}
	for name, c := range map[string]struct{ header, want string }{
		"fencing":               {field(`"fencing":"off"`, `"fencing":"bogus"`), `unknown fencing mode "bogus" (valid: off, writes, reads-and-writes, transaction)`},
		"fencing case":          {field(`"fencing":"off"`, `"fencing":"Off"`), `unknown fencing mode "Off"`},
		"ttl zero":              {field(`"ttl_ns":300000000`, `"ttl_ns":0`), "ttl_ns 0: a lease time must be positive"},
		"ttl negative":          {field(`"ttl_ns":300000000`, `"ttl_ns":-1`), "ttl_ns -1: a lease time must be positive"},
		"recover negative":      {field(`"recover_within_ns":660000000`, `"recover_within_ns":-5`), "recover_within_ns -5 is negative"},
		"acquire negative":      {field(`"acquire_within_ns":600000000`, `"acquire_within_ns":-5`), "acquire_within_ns -5 is negative"},
		"unknown fault kind":    {field(`"faults":["client-pause"]`, `"faults":["client-pause","teleport"]`), `unknown fault kind "teleport" (valid: abandoned-lease, client-partition, client-pause, clock-jump`},
		"clients huge":          {field(`"clients":2`, `"clients":2000000000`), "clients 2000000000 out of range 0..10000"},
		"clients exponent":      {field(`"clients":2`, `"clients":2e9`), "cannot unmarshal number 2e9"},
		"nodes huge":            {field(`"nodes":1`, `"nodes":1000000000`), "nodes 1000000000 out of range 0..64"},
		"lock nodes negative":   {field(`"lock_nodes":1`, `"lock_nodes":-1`), "lock_nodes -1 out of range 0..64"},
		"floor negative":        {field(`"min_cycles":20`, `"min_cycles":-1`), "counts must not be negative"},
		"floor fraction":        {field(`"max_indefinite":0.5`, `"max_indefinite":1.5`), "max_indefinite must be in [0, 1]"},
		"empty key":             {field(`"keys":["order:1"]`, `"keys":["order:1",""]`), "keys: an empty key"},
		"duplicate field":       {field(`"fencing":"off"`, `"fencing":"reads-and-writes","fencing":"off"`), `name "fencing" given twice in one object`},
		"duplicate by case":     {field(`"fencing":"off"`, `"fencing":"off","Fencing":"writes"`), `name "fencing" given twice in one object (again as "Fencing"`},
		"duplicate nested":      {field(`"min_cycles":20`, `"min_cycles":20,"min_cycles":0`), `name "min_cycles" given twice`},
		"invalid utf-8":         {field(`"scenario":"gc-pause"`, "\"scenario\":\"gc\xff\""), "invalid UTF-8 at byte"},
		"lone surrogate escape": {field(`"scenario":"gc-pause"`, `"scenario":"gc\ud800"`), `is half a UTF-16 surrogate pair`},
		"format zero":           {field(`"format":5`, `"format":0`), "format 0, this lockchaos reads formats 1 to 5"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := history.Load(strings.NewReader(c.header+"\n"+validBody), "h.jsonl")
			if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), "h.jsonl:1: header: ") ||
				!strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want h.jsonl:1: header: ...%s", err, c.want)
			}
			path := filepath.Join(t.TempDir(), "h.jsonl")
			if err := os.WriteFile(path, []byte(c.header+"\n"+validBody), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = history.ReadChunks(path, nopQuiet{}, history.ChunkOptions{}, func(*history.History, bool) error { return nil })
			if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadChunks: %v, want %s", err, c.want)
			}
		})
	}
	h, err := history.Load(strings.NewReader(validHeader+"\n"+validBody), "h.jsonl")
	if err != nil || h.Header.TTL != 300*time.Millisecond || h.Header.Floor.MinCycles != 20 || len(h.Events) != 2 {
		t.Fatalf("the valid header: %v, %+v", err, h)
	}
}

// Lines past the header are held to the same rules, and to the header:
// a key it does not list, a return that names another client or key,
// a name given twice, invalid UTF-8, each an error at its line.
func TestLinesAreHeldToTheHeader(t *testing.T) {
	call := `{"op":2,"phase":"call","t":5,"kind":"release","client":0,"key":"order:1"}`
	for name, c := range map[string]struct{ line, want string }{
		"key not in header": {`{"op":2,"phase":"call","t":5,"kind":"release","client":0,"key":"order:2"}`,
			`h.jsonl:6: key "order:2" is not one of the header's keys (["order:1"])`},
		"point key not in header": {`{"op":2,"phase":"point","t":5,"kind":"lost","client":0,"key":"other"}`,
			`h.jsonl:6: key "other" is not one of the header's keys`},
		"return on another client": {call + "\n" + `{"op":2,"phase":"return","t":6,"client":1,"outcome":"ok"}`,
			"h.jsonl:7: op 2 returns on client 1, but client 0 called it"},
		"return on another key": {call + "\n" + `{"op":2,"phase":"return","t":6,"client":0,"key":"order:9","outcome":"ok"}`,
			`h.jsonl:7: op 2 returns on key "order:9", but was called on key "order:1"`},
		"duplicate field": {`{"op":2,"phase":"call","t":5,"kind":"release","client":0,"client":1,"key":"order:1"}`,
			`h.jsonl:6: jsonl: name "client" given twice in one object`},
		"duplicate by case": {`{"op":2,"phase":"call","t":5,"kind":"release","client":0,"Client":1,"key":"order:1"}`,
			`h.jsonl:6: jsonl: name "client" given twice in one object (again as "Client"`},
		"invalid utf-8": {call + "\n" + "{\"op\":2,\"phase\":\"return\",\"t\":6,\"client\":0,\"outcome\":\"ok\",\"error\":\"\xc3(\"}",
			"h.jsonl:7: jsonl: invalid UTF-8 at byte 66"},
		"byte order mark mid-file": {"\xef\xbb\xbf" + call, "h.jsonl:6: jsonl: a byte order mark (U+FEFF) before the JSON value"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := history.Load(strings.NewReader(validHeader+"\n"+validBody+c.line+"\n"), "h.jsonl")
			if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want %s", err, c.want)
			}
		})
	}
	// A surrogate pair escaped in full is a character: it loads.
	pair := call + "\n" + `{"op":2,"phase":"return","t":6,"client":0,"outcome":"ok","error":"\ud83d\ude00"}` + "\n"
	h, err := history.Load(strings.NewReader(validHeader+"\n"+validBody+pair), "h.jsonl")
	if err != nil || h.Events[2].Err != "😀" {
		t.Fatalf("an escaped surrogate pair: %v", err)
	}
}

// A UTF-8 byte order mark before the header (as some editors save a file)
// is skipped: the history loads as without it.
func TestByteOrderMarkBeforeTheHeaderIsSkipped(t *testing.T) {
	h, err := history.Load(strings.NewReader("\xef\xbb\xbf"+validHeader+"\n"+validBody), "bom.jsonl")
	if err != nil || h.Header.Scenario != "gc-pause" || len(h.Events) != 2 {
		t.Fatalf("Load with a BOM: %v, %+v", err, h)
	}
}

// Every value a recorder writes loads back: a header as a cell's (every
// field, every fencing mode) through NewRecorder, and the histories of
// formats 1 to 4 kept in checker/testdata.
func TestEveryHeaderARecorderWritesLoads(t *testing.T) {
	for _, mode := range append([]string{""}, history.FencingModes...) {
		path := filepath.Join(t.TempDir(), "h.jsonl")
		floor := history.DefaultFloor
		rec, err := history.NewRecorder(path, history.Header{Scenario: "gc-pause", Lock: "token", Seed: -3, Clients: 256,
			Keys: []string{"order:1", "order:2"}, Fencing: mode, InProcess: true, Nodes: 15, Faults: []string{"client-pause", "pod-crash"},
			TTL: time.Millisecond, Floor: &floor, LockNodes: 15, RecoverWithin: time.Second, AcquireWithin: time.Second,
			Backend: "process", Extra: map[string]string{"ttl": "1ms", "lock_traits": "fencing, renews"}})
		if err != nil {
			t.Fatal(err)
		}
		op := rec.Invoke(history.Event{Kind: history.Acquire, Client: 255, Key: "order:2"})
		op.Return(history.Result{Outcome: history.Ok, Token: "t", Fence: 1})
		if _, err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := history.LoadFile(path); err != nil {
			t.Fatalf("fencing %q: %v", mode, err)
		}
	}
	files, _ := filepath.Glob("../checker/testdata/*.jsonl")
	older, _ := filepath.Glob("../checker/testdata/formats/*.jsonl")
	files = append(files, older...)
	if len(files) < 10 {
		t.Fatalf("%d testdata histories, want the checker's", len(files))
	}
	for _, f := range files {
		if _, err := history.LoadFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
