package history

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A trimmed recorder forgets what it already wrote, up to the first
// operation still open, and keeps numbering ops absolutely: the file
// holds everything, the memory only the rest.
func TestTrimKeepsOpenOperationsAndTheFileWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	rec, err := NewRecorder(path, Header{Lock: "token"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		op := rec.Invoke(Event{Kind: Acquire, Client: i % 3, Key: "k"})
		op.Return(Result{Outcome: Refused})
	}
	open := rec.Invoke(Event{Kind: Acquire, Client: 7, Key: "k"})
	late := rec.Invoke(Event{Kind: Acquire, Client: 8, Key: "k"})
	late.Return(Result{Outcome: Refused})
	rec.Trim(rec.Now() + 1)
	if snap := rec.Snapshot(); len(snap.Events) != 2 || snap.Events[0].ID != 10 || !snap.Events[0].Open {
		t.Fatalf("after Trim: %+v", snap.Events)
	}
	open.Return(Result{Outcome: Ok, Token: "t"})
	rec.Trim(rec.Now() + 1)
	op := rec.Invoke(Event{Kind: Release, Client: 7, Key: "k"})
	op.Return(Result{Outcome: Ok})
	h, err := rec.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) != 1 || h.Events[0].ID != 12 {
		t.Fatalf("kept after the second Trim: %+v", h.Events)
	}
	all, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Events) != 13 || all.Events[10].Outcome != Ok || all.Events[10].Token != "t" {
		t.Fatalf("the file holds %d events: %+v", len(all.Events), all.Events[10])
	}
}

// Follow reads a file as it grows, and ends once told the writer is done.
func TestFollowReadsAGrowingFileToItsEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan struct{})
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(Follow(r, done, time.Millisecond))
		got <- string(b)
	}()
	for _, part := range []string{"one\n", "tw", "o\n", "three\n"} {
		w.WriteString(part)
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	if s := <-got; s != "one\ntwo\nthree\n" {
		t.Fatalf("read %q", s)
	}
}
