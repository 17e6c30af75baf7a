package history_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

const boundsHeader = `{"format":2,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z","clients":2}`

// withTimeout fails the test if f has not returned within d: an unbounded
// read would spin for ever.
func withTimeout(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still reading after %s", d)
	}
}

// Every line is bounded, the header first: a line past 1 MiB is an error
// naming the file and line, wherever it lies (the header, a block's
// middle, a file's last line with no line break).
func TestEveryLineIsBounded(t *testing.T) {
	call := `{"op":%d,"phase":"point","t":1,"kind":"renew","client":0,"key":"k","outcome":"ok"}` + "\n"
	long := `{"op":9,"phase":"point","t":1,"kind":"renew","client":0,"key":"k","outcome":"ok","error":"` +
		strings.Repeat("x", 2<<20) + `"}`
	var many strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&many, call, 100+i)
	}
	for name, c := range map[string]struct{ body, want string }{
		"header":          {`{"format":2,"x":"` + strings.Repeat("y", 2<<20) + `"}` + "\n", "huge.jsonl:1: line longer than 1048576 bytes"},
		"header, no \\n":  {strings.Repeat("y", 3<<20), "huge.jsonl:1: line longer than 1048576 bytes"},
		"second line":     {boundsHeader + "\n" + long + "\n", "huge.jsonl:2: line longer than 1048576 bytes"},
		"last, no \\n":    {boundsHeader + "\n" + fmt.Sprintf(call, 0) + long, "huge.jsonl:3: line longer than 1048576 bytes"},
		"after a block":   {boundsHeader + "\n" + many.String() + long + "\n", "huge.jsonl:20002: line longer than 1048576 bytes"},
		"zeros, no lines": {boundsHeader + "\n" + strings.Repeat("\x00", 3<<20), "huge.jsonl:2: line longer than 1048576 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "huge.jsonl")
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := history.LoadFile(path)
			if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadFile: %v, want %q", err, c.want)
			}
			_, err = history.ReadChunks(path, nopQuiet{}, history.ChunkOptions{}, func(*history.History, bool) error { return nil })
			if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadChunks: %v, want %q", err, c.want)
			}
		})
	}
}

// /dev/zero is endless and has no line break: it fails at its first MiB,
// says why, and is read no further.
func TestDevZeroFailsAtOnce(t *testing.T) {
	withTimeout(t, 10*time.Second, func() {
		_, err := history.LoadFile("/dev/zero")
		if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), "/dev/zero:1: line longer than 1048576 bytes") ||
			!strings.Contains(err.Error(), "is this a history file?") {
			t.Errorf("LoadFile(/dev/zero): %v", err)
		}
		_, err = history.ReadChunks("/dev/zero", nopQuiet{}, history.ChunkOptions{}, func(*history.History, bool) error { return nil })
		if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), "/dev/zero:1: line longer") {
			t.Errorf("ReadChunks(/dev/zero): %v", err)
		}
	})
}

// A FIFO is read as a stream, once, like a file.
func TestFIFOIsReadAsAStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	body := boundsHeader + "\n" + `{"op":0,"phase":"call","t":1,"kind":"acquire","client":1,"key":"k"}` + "\n" +
		`{"op":0,"phase":"return","t":2,"client":1,"outcome":"ok","token":"a"}` + "\n"
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for _, b := range []byte(body) { // a byte at a time: a slow writer
			_, _ = f.Write([]byte{b})
		}
	}()
	withTimeout(t, 10*time.Second, func() {
		h, err := history.LoadFile(path)
		if err != nil || len(h.Events) != 1 || h.Events[0].Token != "a" {
			t.Errorf("LoadFile(fifo): %v, %+v", err, h)
		}
	})
}

// A client past the header's count is bad input, named by file and line;
// a header that does not say (older histories) accepts any client, and
// judgments and fault windows (client -1) are always fine.
func TestClientOutOfRangeIsBadInput(t *testing.T) {
	body := func(header string, client int) string {
		return header + "\n" +
			`{"op":0,"phase":"call","t":1,"kind":"fault","client":-1,"fault":"client-pause"}` + "\n" +
			fmt.Sprintf(`{"op":1,"phase":"call","t":2,"kind":"acquire","client":%d,"key":"k"}`, client) + "\n" +
			fmt.Sprintf(`{"op":1,"phase":"return","t":3,"client":%d,"outcome":"refused"}`, client) + "\n" +
			`{"op":0,"phase":"return","t":4,"client":-1,"outcome":"ok"}` + "\n"
	}
	_, err := history.Load(strings.NewReader(body(boundsHeader, 2)), "c.jsonl")
	want := "c.jsonl:3: client 2 out of range (the header says 2 clients, numbered 0 to 1)"
	if !errors.Is(err, history.ErrMalformed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("client 2 of 2: %v, want %q", err, want)
	}
	if _, err := history.Load(strings.NewReader(body(boundsHeader, 1)), "c.jsonl"); err != nil {
		t.Fatalf("client 1 of 2: %v", err)
	}
	old := `{"format":1,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z"}`
	if _, err := history.Load(strings.NewReader(body(old, 40)), "old.jsonl"); err != nil {
		t.Fatalf("no clients in the header: %v", err)
	}
	neg := strings.Replace(boundsHeader, `"clients":2`, `"clients":-1`, 1)
	if _, err := history.Load(strings.NewReader(body(neg, 0)), "n.jsonl"); err == nil || !strings.Contains(err.Error(), "n.jsonl:1: header: clients -1 out of range 0..10000") {
		t.Fatalf("negative clients: %v", err)
	}
}

// A recorder never writes a line its reader refuses: an error text of
// megabytes (a driver's, which JSON's escapes grow sixfold) is clipped.
func TestRecorderClipsLongTexts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	rec, err := history.NewRecorder(path, history.Header{Lock: "token", Clients: 1})
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("<é>", 400_000)
	op := rec.Invoke(history.Event{Kind: history.Acquire, Client: 0, Key: "k"})
	op.Return(history.Result{Outcome: history.Indefinite, Err: errors.New(huge)})
	rec.Point(history.Event{Kind: history.Exercised, Client: -1, Outcome: history.Refused,
		Window: &history.Window{Fault: "client-pause", Judgment: &history.Judged{Detail: huge}}})
	if _, err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := history.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, j := h.Events[0], h.Events[1]
	if len(e.Err) > 9<<10 || !strings.HasSuffix(e.Err, "bytes cut)") || !strings.HasPrefix(e.Err, "<é>") ||
		len(j.Detail()) > 9<<10 || !strings.HasSuffix(j.Detail(), "bytes cut)") {
		t.Fatalf("error %d bytes ending %q, detail %d bytes", len(e.Err), e.Err[max(0, len(e.Err)-30):], len(j.Detail()))
	}
}

type nopQuiet struct{}

func (nopQuiet) Start(history.Header)         {}
func (nopQuiet) Applied(*history.Event, bool) {}
func (nopQuiet) Open() bool                   { return false }
func (nopQuiet) KeyCut(string) int64          { return 1 << 62 }
