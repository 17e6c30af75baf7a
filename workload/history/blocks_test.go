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
