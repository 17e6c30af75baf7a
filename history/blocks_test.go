package history

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// bigHistory is a few megabytes of history: several parse blocks, lines
// cut across block boundaries, and both parse paths (an escaped string
// goes to the strict decoder).
func bigHistory(n int) *History {
	h := &History{Header: Header{Format: FormatVersion, Scenario: "s", Lock: "token"}}
	for i := range n {
		e := Event{ID: int64(i), Kind: Write, Client: i % 7, Key: fmt.Sprintf("order:%d", i%3), Value: int64(i),
			Call: int64(10 * i), Return: int64(10*i + 5), Outcome: Ok}
		if i%1000 == 0 {
			e.Kind, e.Outcome, e.Err = Acquire, Indefinite, "i/o \"timeout\"\n"
		}
		if i%4 == 1 {
			e.Kind, e.Token, e.Fence = Acquire, fmt.Sprintf("tok-%d", i), uint64(i)
		}
		h.Events = append(h.Events, e)
		h.End = e.Return
	}
	return h
}

func written(t *testing.T, h *History) *bytes.Buffer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := WriteFile(path, h); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewBuffer(b)
}

func TestLoadInBlocksMatchesWhatWasWritten(t *testing.T) {
	h := bigHistory(60_000)
	buf := written(t, h)
	if buf.Len() < 3*blockSize {
		t.Fatalf("history is %d bytes, want several blocks", buf.Len())
	}
	got, err := Load(bytes.NewReader(buf.Bytes()), "big.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Events, h.Events) || got.End != h.End {
		for i := range h.Events {
			if i >= len(got.Events) || !reflect.DeepEqual(got.Events[i], h.Events[i]) {
				t.Fatalf("event %d: got %+v, want %+v", i, got.Events[min(i, len(got.Events)-1)], h.Events[i])
			}
		}
		t.Fatalf("got %d events ending %d, want %d ending %d", len(got.Events), got.End, len(h.Events), h.End)
	}
}

func TestLoadInBlocksNamesTheLineOfALateError(t *testing.T) {
	buf := written(t, bigHistory(60_000))
	lines := strings.Split(buf.String(), "\n")
	bad := len(lines) - 10
	lines[bad-1] = `{"op":1,"phase":"call","t":1,"kind":"teleport","client":0,"key":"k"}`
	_, err := Load(strings.NewReader(strings.Join(lines, "\n")), "late.jsonl")
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), fmt.Sprintf("late.jsonl:%d: unknown kind", bad)) {
		t.Fatalf("err = %v, want late.jsonl:%d: unknown kind", err, bad)
	}
}

// A history with a header and nothing else (a cell whose pods failed
// before their first operation), and one whose body ends exactly at a
// block boundary, load: the reader must stop when nothing follows the
// last line break.
func TestLoadHeaderOnlyAndBlockAlignedHistories(t *testing.T) {
	header := `{"format":2,"scenario":"s","lock":"token","seed":1,"start":"2026-01-01T00:00:00Z"}`
	for name, text := range map[string]string{"header, newline": header + "\n", "header, no newline": header} {
		h, err := Load(strings.NewReader(text), name)
		if err != nil || len(h.Events) != 0 {
			t.Fatalf("%s: %v, %d events", name, err, len(h.Events))
		}
	}
	// A body of exactly one block (blockSize bytes, ending in a newline).
	line := `{"op":0,"phase":"point","t":1,"kind":"renew","client":0,"key":"k","outcome":"ok"}`
	var b strings.Builder
	b.WriteString(header + "\n")
	op := 0
	for b.Len()-len(header)-1 < blockSize-200 {
		b.WriteString(strings.Replace(line, `"op":0`, fmt.Sprintf(`"op":%d`, op), 1) + "\n")
		op++
	}
	body := b.Len() - len(header) - 1
	pad := blockSize - body - 1
	b.WriteString(strings.Repeat(" ", pad) + "\n") // blank lines are skipped
	if got := b.Len() - len(header) - 1; got != blockSize {
		t.Fatalf("body is %d bytes, want %d", got, blockSize)
	}
	h, err := Load(strings.NewReader(b.String()), "aligned.jsonl")
	if err != nil || len(h.Events) != op {
		t.Fatalf("aligned: %v, %d events, want %d", err, len(h.Events), op)
	}
}
