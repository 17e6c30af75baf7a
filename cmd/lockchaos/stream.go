package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/lockchaos/lockchaos/reports"
	"github.com/lockchaos/lockchaos/results"
)

// StreamFormat versions the JSON lines of `run --json`; the schema is
// docs/schema/run-stream.v1.json.
const StreamFormat = 1

// streamEvent is one line of `run --json`: "start" (what will run),
// "cell-started", "cell-finished" (with the cell's result) and, last,
// "summary" (what summary.json holds).
type streamEvent struct {
	Type   string    `json:"type"`
	Format int       `json:"format"`
	Time   time.Time `json:"time"`

	// start
	Version string `json:"version,omitempty"`
	Backend string `json:"backend,omitempty"`
	Cells   int    `json:"cells,omitempty"`
	Repeat  int    `json:"repeat,omitempty"`
	Seed    int64  `json:"seed,omitempty"`
	// Simulated says the run is on the simulated backend (not real Redis),
	// from the first line on.
	Simulated bool `json:"simulated,omitempty"`

	// cell-started, cell-finished
	Cell    string        `json:"cell,omitempty"`
	RunSeed int64         `json:"run_seed,omitempty"`
	Result  *results.Cell `json:"result,omitempty"`
	Done    int           `json:"done,omitempty"`
	Total   int           `json:"total,omitempty"`

	// summary
	Summary *reports.Summary `json:"summary,omitempty"`
}

// jsonStream writes events as JSON lines, one per line, as they happen.
// Its callers hold the matrix's lock, so lines never interleave.
type jsonStream struct{ enc *json.Encoder }

func newJSONStream(w io.Writer) *jsonStream { return &jsonStream{enc: json.NewEncoder(w)} }

func (s *jsonStream) emit(e streamEvent) {
	if s == nil {
		return
	}
	e.Format, e.Time = StreamFormat, time.Now().UTC()
	_ = s.enc.Encode(e)
}
