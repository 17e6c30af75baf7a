package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// checkWithin runs lockchaos check with args, failing the test if it has
// not returned within d (an unbounded read spins for ever).
func checkWithin(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code        int
		out, errOut string
	}
	done := make(chan res, 1)
	go func() {
		code, out, errOut := runCLI(append([]string{"check"}, args...)...)
		done <- res{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errOut
	case <-time.After(d):
		t.Fatalf("check %v: still running after %s", args, d)
	}
	return 0, "", ""
}

// check reads its file once, as a stream, validating as it goes: /dev/zero
// fails at its first MiB, a FIFO is checked like a file, and a line past
// 1 MiB is named by file and line.
func TestCheckReadsBoundedOnce(t *testing.T) {
	code, _, errOut := checkWithin(t, 20*time.Second, "/dev/zero")
	if code != exitUsage || !strings.Contains(errOut, "/dev/zero:1: line longer than 1048576 bytes") {
		t.Fatalf("check /dev/zero: exit %d, %s", code, errOut)
	}

	fifo := filepath.Join(t.TempDir(), "history.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	body, err := os.ReadFile(testdata("pass.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.Write(body)
	}()
	code, out, errOut := checkWithin(t, 20*time.Second, fifo)
	if code != exitOK || !strings.Contains(out, "verdict: pass") {
		t.Fatalf("check FIFO: exit %d\n%s\n%s", code, out, errOut)
	}

	huge := filepath.Join(t.TempDir(), "huge.jsonl")
	lines := strings.SplitAfter(string(body), "\n")
	lines[2] = `{"op":99,"phase":"point","t":1,"kind":"renew","client":0,"key":"k","outcome":"ok","error":"` +
		strings.Repeat("x", 3<<20) + "\"}\n"
	if err := os.WriteFile(huge, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = checkWithin(t, 20*time.Second, huge)
	if code != exitUsage || !strings.Contains(errOut, "huge.jsonl:3: line longer than 1048576 bytes") {
		t.Fatalf("check huge.jsonl: exit %d, %s", code, errOut)
	}
}

// A history with no events (a header alone) is checked to no verdict:
// never "pass", exit 4, with or without a floor.
func TestCheckHeaderOnlyIsNoPass(t *testing.T) {
	dir := t.TempDir()
	for name, header := range map[string]string{
		"no-floor.jsonl": `{"format":2,"scenario":"baseline","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z","clients":2}`,
		"floor.jsonl": `{"format":2,"scenario":"baseline","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z","clients":2,` +
			`"floor":{"min_exercised":3,"min_cycles":20,"max_indefinite":0.5}}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(header+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI("check", path)
		if code != exitInconclusive || strings.Contains(out, "pass") || !strings.Contains(out, "verdict: unknown") ||
			!strings.Contains(out, "the history has no events") {
			t.Errorf("check %s: exit %d\n%s\n%s", name, code, out, errOut)
		}
		code, out, _ = runCLI("check", "--json", path)
		var rep checker.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitInconclusive || rep.Verdict != checker.Unknown || rep.Evidence.Enough {
			t.Errorf("check --json %s: exit %d, %v, %+v", name, code, err, rep)
		}
	}
}

// A client the header does not have is bad input, named by file and line.
func TestCheckClientOutOfRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clients.jsonl")
	body := `{"format":2,"scenario":"baseline","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z","clients":2}` + "\n" +
		`{"op":0,"phase":"call","t":1,"kind":"acquire","client":5,"key":"k"}` + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI("check", path)
	if code != exitUsage || !strings.Contains(errOut, "clients.jsonl:2: client 5 out of range (the header says 2 clients, numbered 0 to 1)") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
}

// Windows the file leaves unjudged (a crashed run's last ones) are judged
// by check; those it judges keep the file's judgment, even when it comes
// chunks after its window: judged counts agree, whole or in chunks.
func TestCheckJudgesWhatTheFileLeftUnjudged(t *testing.T) {
	body, err := os.ReadFile(testdata("two-windows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var partial, none []string
	for _, l := range strings.SplitAfter(string(body), "\n") {
		if strings.Contains(l, `"exercised"`) {
			if strings.Contains(l, `"value": 10`) {
				partial = append(partial, l) // window 11's judgment lost
			}
			continue
		}
		partial, none = append(partial, l), append(none, l)
	}
	files := map[string]string{"whole.jsonl": string(body), "partial.jsonl": strings.Join(partial, ""), "none.jsonl": strings.Join(none, "")}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, out, errOut := runCLI("check", "--json", path)
		var rep checker.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, errOut)
		}
		if rep.Evidence.Fired != 2 || rep.Evidence.Judged != 2 {
			t.Errorf("%s: %d fired, %d judged; want 2 and 2", name, rep.Evidence.Fired, rep.Evidence.Judged)
		}
		checkChunkEvents = 2
		_, text, _ := runCLI("check", path)
		_, out, _ = runCLI("check", "--json", path)
		checkChunkEvents = 0
		var rep2 checker.Report
		err := json.Unmarshal([]byte(out), &rep2)
		if err != nil || !strings.Contains(text, "(checked in ") || rep2.Evidence.Judged != 2 ||
			rep2.Evidence.Exercised != rep.Evidence.Exercised {
			t.Errorf("%s in chunks: %v, %d judged (%d exercised), want 2 (%d)\n%s", name, err,
				rep2.Evidence.Judged, rep2.Evidence.Exercised, rep.Evidence.Exercised, text)
		}
	}
}

// check lists the liveness properties with how many moments each judged,
// and for a stopped holder what became of its key, against the bound and
// in TTLs; a history with nothing liveness reads gets no liveness block.
func TestCheckPrintsLiveness(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	h := &history.History{Header: history.Header{Format: history.FormatVersion, Scenario: "pod-crash", Lock: "no-ttl",
		Clients: 3, TTL: 300 * time.Millisecond, LockNodes: 1, Faults: []string{"pod-crash"}}}
	add := func(e history.Event) {
		e.ID = int64(len(h.Events))
		h.Events = append(h.Events, e)
		h.End = max(h.End, e.Return)
	}
	add(history.Event{Kind: history.Acquire, Client: 2, Key: "order:1", Call: ms(100), Return: ms(101), Outcome: history.Ok, Token: "a"})
	for i := int64(0); i < 53; i++ {
		if i == 10 {
			add(history.Event{Kind: history.Fault, Client: -1, Call: ms(410), Return: ms(412), Outcome: history.Ok,
				Window: history.FaultWindow("pod-crash", history.Hit{Pods: []int{2}, StopsHolder: true})})
			add(history.Event{Kind: history.Abandon, Client: 2, Key: "order:1", Call: ms(411), Return: ms(411), Outcome: history.Ok,
				Err: history.Crashed})
		}
		at := 120 + 30*i
		add(history.Event{Kind: history.Acquire, Client: int(i % 2), Key: "order:1", Call: ms(at), Return: ms(at + 1), Outcome: history.Refused})
	}
	path := filepath.Join(t.TempDir(), "stuck.jsonl")
	if err := history.WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("check", path)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitViolation, out, errOut)
	}
	for _, want := range []string{
		"deadlock-free          fail       1 violation(s), 1 judged",
		"fault-tolerant         not judged 0 violation(s), 0 judged",
		"client 2 crashed at 0.410 s holding order:1 (TTL 300 ms); clients 0 and 1 kept trying; nobody acquired order:1 " +
			"for 1.271 s, to the end of the cell (bound 660 ms): stuck",
		"liveness: recover within 660 ms (2.20 TTLs), acquire within 810 ms",
		"  - client 2 crashed at 0.410 s holding order:1: stuck: nobody acquired it for 1.271 s (4.24 TTLs), to the end (bound 660 ms)",
		"recovery, 1 judged: max 1.271 s (4.24 TTLs)\n",
		"1 lease(s) abandoned",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, js, _ := runCLI("check", "--json", path)
	validate(t, compileSchema(t, "check.v1.json"), "check --json stuck.jsonl", []byte(js))
	if !strings.Contains(js, `"stuck": true`) || !strings.Contains(js, `"property": "deadlock-free"`) {
		t.Errorf("check --json lacks the stuck recovery:\n%s", js)
	}
	code, out, _ = runCLI("check", testdata("pass.jsonl"))
	// A property that judged nothing is never shown as a pass.
	if code != exitOK || !strings.Contains(out, "deadlock-free          not judged 0 violation(s), 0 judged") ||
		!strings.Contains(out, "fence-order            n/a        0 violation(s)") ||
		!strings.Contains(out, "server-exclusive       not judged 0 violation(s)") ||
		!strings.Contains(out, "note: no holder stopped while another pod tried: nothing to judge") || strings.Contains(out, "liveness:") {
		t.Fatalf("a history with nothing to judge: exit %d\n%s", code, out)
	}
}
