package reports

import (
	"encoding/json"
	"io"
	"time"

	"github.com/lockchaos/lockchaos/results"
)

// StreamFormat versions the JSON lines of `run --json`; the schema is
// docs/schema/run-stream.v1.json.
const StreamFormat = 1

// StreamEvent is one line of `run --json`: "start" (what will run),
// "cell-started", "cell-finished" (with the cell's result) and, last,
// "summary" (what summary.json holds). A Go program reading the stream
// decodes each line into one.
type StreamEvent struct {
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
	Summary *Summary `json:"summary,omitempty"`
}

// Stream writes events as JSON lines, one per line, as they happen. Its
// callers hold the matrix's lock, so lines never interleave. A nil
// Stream writes nothing.
type Stream struct{ enc *json.Encoder }

// NewStream is a Stream writing to w.
func NewStream(w io.Writer) *Stream { return &Stream{enc: json.NewEncoder(w)} }

// Emit writes e, stamped with the format and the time.
func (s *Stream) Emit(e StreamEvent) {
	if s == nil {
		return
	}
	e.Format, e.Time = StreamFormat, time.Now().UTC()
	_ = s.enc.Encode(e)
}
