package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// TestLinesAreTheProtocolsJSON: the hand-built lines are single-line JSON
// objects with the protocol's fields, whatever the strings hold.
func TestLinesAreTheProtocolsJSON(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stdout")
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{f: f}
	odd := "quote \" backslash \\ newline \n tab \t nul \x00 <html> & é \u2028 bad utf-8 \xff"
	w.hello("lockchaos token")
	w.hello(odd)
	w.granted(1, 7, "4f2c0a1b", 12)
	w.granted(2, 8, odd, 0)
	w.answer(3, nil, lockimpl.ErrNotHeld)
	w.answer(4, fmt.Errorf("wrapped: %w", lockimpl.ErrNotAcquired), lockimpl.ErrNotAcquired)
	w.answer(5, errors.New(odd), lockimpl.ErrNotHeld)
	w.answer(6, errors.New("unknown op x"), nil)
	w.lost(9)
	f.Close()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	oddJSON, _ := json.Marshal(odd)
	var oddBack string
	_ = json.Unmarshal(oddJSON, &oddBack)
	want := []map[string]any{
		{"hello": "lockchaos-driver", "version": 1.0, "name": "lockchaos token"},
		{"hello": "lockchaos-driver", "version": 1.0, "name": oddBack},
		{"id": 1.0, "result": "ok", "lease": 7.0, "token": "4f2c0a1b", "fence": 12.0},
		{"id": 2.0, "result": "ok", "lease": 8.0, "token": oddBack, "fence": 0.0},
		{"id": 3.0, "result": "ok"},
		{"id": 4.0, "result": "refused"},
		{"id": 5.0, "result": "error", "error": oddBack},
		{"id": 6.0, "result": "error", "error": "unknown op x"},
		{"lost": 9.0},
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("line %d %q:\n got %v\nwant %v", i+1, l, got, want[i])
		}
	}
}

// TestLinesAreJSONMarshal: byte for byte what json.Marshal writes for the
// same fields in the same order, escaping (<, > and & included) and all:
// one rule for every JSON line lockchaos writes (internal/jsonl).
func TestLinesAreJSONMarshal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stdout")
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{f: f}
	odd := "quote \" backslash \\ newline \n nul \x00 <html> & é \u2028 bad utf-8 \xff"
	html := "read tcp 127.0.0.1:54321->127.0.0.1:6379: i/o timeout <&>" // nothing else to escape
	w.hello(odd)
	w.granted(-1, 1<<62, odd, 1<<63)
	w.answer(5, errors.New(html), lockimpl.ErrNotHeld)
	w.lost(9)
	f.Close()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	type hello struct {
		Hello   string `json:"hello"`
		Version int    `json:"version"`
		Name    string `json:"name"`
	}
	type granted struct {
		ID     int64  `json:"id"`
		Result string `json:"result"`
		Lease  int64  `json:"lease"`
		Token  string `json:"token"`
		Fence  uint64 `json:"fence"`
	}
	type failed struct {
		ID     int64  `json:"id"`
		Result string `json:"result"`
		Error  string `json:"error"`
	}
	var want []byte
	for _, v := range []any{hello{"lockchaos-driver", 1, odd}, granted{-1, "ok", 1 << 62, odd, 1 << 63},
		failed{5, "error", html}, struct {
			Lost int64 `json:"lost"`
		}{9}} {
		b, _ := json.Marshal(v)
		want = append(append(want, b...), '\n')
	}
	if string(out) != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}
