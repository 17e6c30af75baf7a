package history_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

// FuzzLoad: whatever the file, loading never panics and an error names
// the file; the whole load and a read in chunks of one event agree on
// whether the file is a history; and whatever header loads, the recorder
// writes back (json.Marshal, as NewRecorder does) and loads again, so
// the loader accepts nothing its own writer cannot say. Seeds: the
// checker's testdata histories (formats 1 to 4) and the header and line
// shapes the validation tests refuse.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("../checker/testdata/*.jsonl")
	older, _ := filepath.Glob("../checker/testdata/formats/*.jsonl")
	for _, p := range append(files, older...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(validHeader + "\n" + validBody))
	f.Add([]byte("\xef\xbb\xbf" + validHeader + "\n" + validBody))
	f.Add([]byte(strings.Replace(validHeader, `"fencing":"off"`, `"fencing":"off","Fencing":"x"`, 1) + "\n"))
	f.Add([]byte(validHeader + "\n" + `{"op":0,"phase":"call","t":1,"kind":"acquire","client":0,"key":"order:1","key":"x"}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := history.Load(bytes.NewReader(b), "f.jsonl")
		_, cerr := history.ReadChunksFrom(bytes.NewReader(b), "f.jsonl", nopQuiet{}, history.ChunkOptions{MinEvents: 1},
			func(*history.History, bool) error { return nil })
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Load: %v; ReadChunks: %v", err, cerr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "f.jsonl") {
				t.Fatalf("an error that does not name the file: %v", err)
			}
			return
		}
		if !errors.Is(cerr, nil) {
			t.Fatal(cerr)
		}
		for _, e := range h.Events {
			if verr := e.Validate(); verr != nil {
				t.Fatalf("loaded an invalid event %+v: %v", e, verr)
			}
		}
		hb, merr := json.Marshal(h.Header)
		if merr != nil {
			t.Fatalf("the header loaded does not marshal: %v", merr)
		}
		if _, lerr := history.Load(bytes.NewReader(append(hb, '\n')), "again.jsonl"); lerr != nil {
			t.Fatalf("the header loaded, written back, does not load: %v\n%s", lerr, hb)
		}
	})
}
