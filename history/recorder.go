package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lockchaos/lockchaos/internal/safefile"
)

// FlushInterval is how often a Recorder pushes buffered lines to its file:
// a crash loses at most this much of the history.
const FlushInterval = 50 * time.Millisecond

// line is one JSONL record: an invocation ("call"), a completion
// ("return"), or an instantaneous event ("point").
type line struct {
	Op      int64   `json:"op"`
	Phase   string  `json:"phase"`
	T       int64   `json:"t"`
	Kind    Kind    `json:"kind,omitempty"`
	Client  int     `json:"client"`
	Key     string  `json:"key,omitempty"`
	Token   string  `json:"token,omitempty"`
	Fence   uint64  `json:"fence,omitempty"`
	Value   *int64  `json:"value,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	Err     string  `json:"error,omitempty"`
	// *Window is the window's payload (window.go), its fields the
	// line's: one pointer, nil on operations (a block of lines holds a
	// million of them). A loaded event keeps it as its own.
	*Window
	// Targets and Detail are how formats 1 to 4 wrote the payload
	// (legacy.go): read from those, never written.
	Targets []string `json:"targets,omitempty"`
	Detail  string   `json:"detail,omitempty"`
}

// callLine is the line of e's call (or point): its value only where it is
// the resource's (the other kinds' payloads carry their own).
func callLine(e *Event, phase string) line {
	l := line{Op: e.ID, Phase: phase, T: e.Call, Kind: e.Kind, Client: e.Client, Key: e.Key, Token: e.Token, Fence: e.Fence}
	if e.Kind == Read || e.Kind == Write || e.Value != 0 {
		v := e.Value
		l.Value = &v
	}
	l.Window = e.Window
	return l
}

// win is the line's payload, made on its first field.
func (l *line) win() *Window {
	if l.Window == nil {
		l.Window = &Window{}
	}
	return l.Window
}

// fault is the line's fault kind ("" for none).
func (l *line) fault() string {
	if l.Window == nil {
		return ""
	}
	return l.Window.Fault
}

const (
	phaseCall   = "call"
	phaseReturn = "return"
	phasePoint  = "point"
)

// Recorder writes a history as it happens and keeps it in memory for the
// checkers. It is safe for concurrent use by every client.
type Recorder struct {
	base   time.Time // holds Go's monotonic reading: immune to wall-clock jumps
	header Header

	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	dirty  bool
	err    error
	events []Event
	// dropped counts the events Trim removed from the front of events:
	// an op's id and index are absolute, events[i-dropped] holds op i.
	dropped int
	end     int64
	closed  bool
	buf     []byte // the line being encoded

	stop chan struct{}
	done chan struct{}
}

// NewRecorder starts a history. With path "" it is kept in memory only.
// The header's Format and Start are filled in.
func NewRecorder(path string, h Header) (*Recorder, error) {
	r := &Recorder{base: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	h.Format = FormatVersion
	h.Start = r.base.Round(0)
	r.header = h
	if path != "" {
		// Never through a link planted where the history goes.
		f, err := safefile.Create(path)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		r.f, r.w = f, bufio.NewWriterSize(f, 64<<10)
		b, _ := json.Marshal(h)
		r.writeLine(b)
		r.w.Flush()
		go r.flusher()
	} else {
		close(r.done)
	}
	return r, nil
}

// Now returns the run's clock: nanoseconds since the recorder started.
func (r *Recorder) Now() int64 { return int64(time.Since(r.base)) }

// Since converts a time.Time taken during the run to the run's clock.
func (r *Recorder) Since(t time.Time) int64 { return int64(t.Sub(r.base)) }

// Op is an invoked operation waiting for its return.
type Op struct {
	r   *Recorder
	idx int
}

// Result is what an operation returned.
type Result struct {
	Outcome Outcome
	Value   *int64 // nil keeps the value given at invocation (a write's value)
	Token   string
	Fence   uint64
	Err     error
}

// Invoke records the start of an operation (its call time is now) and
// writes the invocation line at once.
func (r *Recorder) Invoke(e Event) *Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.ID = r.nextID()
	e.Call = r.Now()
	e.Return, e.Outcome, e.Open = e.Call, Indefinite, true
	r.events = append(r.events, e)
	r.bump(e.Call)
	r.write(callLine(&e, phaseCall))
	return &Op{r: r, idx: int(e.ID)}
}

// Return records the operation's completion (now) and its result.
func (o *Op) Return(res Result) {
	r := o.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.idx < r.dropped {
		return // trimmed: it was not open, so it returned already
	}
	e := &r.events[o.idx-r.dropped]
	if !e.Open {
		return // returned twice: keep the first
	}
	e.Open = false
	e.Return = r.Now()
	e.Outcome = res.Outcome
	if res.Value != nil {
		e.Value = *res.Value
	}
	if res.Token != "" {
		e.Token = res.Token
	}
	if res.Fence != 0 {
		e.Fence = res.Fence
	}
	if res.Err != nil {
		e.Err = clip(res.Err.Error())
	}
	r.bump(e.Return)
	r.write(line{Op: e.ID, Phase: phaseReturn, T: e.Return, Client: e.Client, Outcome: e.Outcome,
		Value: res.Value, Token: res.Token, Fence: res.Fence, Err: e.Err})
}

// Point records an instantaneous event (a lost-lease signal) now.
func (r *Recorder) Point(e Event) {
	clipTexts(&e)
	r.mu.Lock()
	defer r.mu.Unlock()
	e.ID = r.nextID()
	e.Call = r.Now()
	e.Return = e.Call
	if e.Outcome == 0 {
		e.Outcome = Ok
	}
	r.events = append(r.events, e)
	r.bump(e.Call)
	l := callLine(&e, phasePoint)
	l.Outcome, l.Err = e.Outcome, e.Err
	r.write(l)
}

// Snapshot returns the history so far (operations in flight as open,
// indefinite ones), for judging a cell while it runs.
func (r *Recorder) Snapshot() *History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snapshotLocked()
}

func (r *Recorder) nextID() int64 { return int64(r.dropped + len(r.events)) }

// Trim forgets the events at the front of the history kept in memory that
// were called before t, up to the first still open: they are in the file
// already. A long cell trims what its judges and checkers are done with,
// so its memory stays flat; Snapshot and Close then return the rest.
// A recorder without a file keeps everything.
func (r *Recorder) Trim(t int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return
	}
	n := 0
	for n < len(r.events) && r.events[n].Call < t && !r.events[n].Open {
		n++
	}
	if n == 0 {
		return
	}
	r.dropped += n
	// Copy the rest down when most of the slice is gone, so the backing
	// array does not grow for ever.
	if n >= len(r.events)/2 {
		r.events = append(make([]Event, 0, max(1024, 2*(len(r.events)-n))), r.events[n:]...)
	} else {
		r.events = r.events[n:]
	}
}

func (r *Recorder) bump(t int64) {
	if t > r.end {
		r.end = t
	}
}

func (r *Recorder) write(l line) {
	if r.w == nil || r.closed {
		return
	}
	b, ok := appendLine(r.buf[:0], l)
	if !ok {
		var err error
		if b, err = json.Marshal(l); err != nil {
			r.setErr(err)
			return
		}
	}
	r.writeLine(b)
	if ok {
		r.buf = b[:0]
	}
}

// writeLine appends one line, flushing first if it would not fit, so the
// file only ever ends on a line boundary: a killed run leaves whole lines.
func (r *Recorder) writeLine(b []byte) {
	if len(b)+1 > r.w.Available() && r.w.Buffered() > 0 {
		r.setErr(r.w.Flush())
	}
	_, err := r.w.Write(append(b, '\n'))
	r.setErr(err)
	r.dirty = true
}

func (r *Recorder) setErr(err error) {
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("history: write: %w", err)
	}
}

func (r *Recorder) flusher() {
	defer close(r.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.Flush()
		}
	}
}

// Flush pushes buffered lines to the file now.
func (r *Recorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil && r.dirty && !r.closed {
		r.setErr(r.w.Flush())
		r.dirty = false
	}
}

// Close flushes and closes the file and returns the history. Operations
// still open are kept as indefinite with an open end. Close is idempotent.
func (r *Recorder) Close() (*History, error) {
	r.mu.Lock()
	if r.closed {
		h := r.snapshotLocked()
		err := r.err
		r.mu.Unlock()
		return h, err
	}
	r.closed = true
	var errs []error
	if r.w != nil {
		errs = append(errs, r.w.Flush(), r.f.Sync(), r.f.Close())
	}
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range errs {
		r.setErr(err)
	}
	return r.snapshotLocked(), r.err
}

func (r *Recorder) snapshotLocked() *History {
	evs := make([]Event, len(r.events))
	copy(evs, r.events)
	for i := range evs {
		if evs[i].Open {
			evs[i].Return = r.end
			if evs[i].Err == "" {
				evs[i].Err = "no return recorded"
			}
		}
	}
	return &History{Header: r.header, Events: evs, End: r.end}
}

// Record adds an operation that already completed, with its own times
// (taken with Since): a watchdog renewal reported after the fact. Both of
// its lines are written at once.
func (r *Recorder) Record(e Event) {
	clipTexts(&e)
	r.mu.Lock()
	defer r.mu.Unlock()
	e.ID = r.nextID()
	e.Open = false
	r.events = append(r.events, e)
	r.bump(e.Return)
	r.write(callLine(&e, phaseCall))
	r.write(line{Op: e.ID, Phase: phaseReturn, T: e.Return, Client: e.Client, Outcome: e.Outcome, Err: e.Err})
}

// maxText bounds the texts a recorder writes (an error, a judgment's
// sentence): a driver's error may be as long as its wire line, and JSON's
// escapes make it longer, past what a history line may be (maxLine).
const maxText = 8 << 10

// clip cuts s to maxText bytes (on a character's boundary) and says so.
func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes cut)", s[:cut], len(s)-cut)
}

// clipTexts clips e's error and sentence (its window copied, not changed:
// the caller may share it).
func clipTexts(e *Event) {
	e.Err = clip(e.Err)
	if e.Window != nil && e.Window.Judgment != nil && len(e.Window.Judgment.Detail) > maxText {
		w, j := *e.Window, *e.Window.Judgment
		j.Detail = clip(j.Detail)
		w.Judgment = &j
		e.Window = &w
	}
}
