package scenarios

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/verify"
)

// A long cell runs as one continuous history (Part.Continuous). Nothing
// holds it whole: the recorder streams it to disk and keeps only a recent
// stretch in memory; a judge rules on each fault window once its effects
// have had time to show, into the history itself; a checker follows the
// file as it grows and checks it in chunks cut where each key is quiet
// (verify.Reader, by the rules of every other reader of a history).
// Memory stays that of the recent stretch and one chunk, however long the
// cell runs.

// streamChunkEvents is the follower's chunk size: about a minute of a
// busy cell, so a violation stops the cell soon after it happens.
var streamChunkEvents = 20_000

// streamer follows one continuous part.
type streamer struct {
	p     *Plan
	rec   *history.Recorder
	after int64 // how long after a window closes it is judged
	back  int64 // how far before a window its judgment may look

	judged map[int64]int64 // windows ruled on (op id: call), until trimmed

	failed   atomic.Bool // the checker has seen a decisive violation
	stop     chan struct{}
	stopped  chan struct{} // the judge loop has returned
	done     chan struct{}
	written  chan struct{} // closed once the recorder is closed
	mu       sync.Mutex
	rep      *checker.Report
	sum      checker.FileSummary
	err      error
	evidence *history.History // the chunk the pages show
}

// startStreamer starts following rec's file and judging its windows.
func startStreamer(ctx context.Context, p *Plan, part Part, rec *history.Recorder) (*streamer, error) {
	f, err := os.Open(part.History)
	if err != nil {
		return nil, err
	}
	ttl, work := int64(p.Scenario.TTL), int64(p.Scenario.WorkMax)
	s := &streamer{p: p, rec: rec, after: 4*ttl + int64(2*time.Second), back: 4*(ttl+work) + int64(2*time.Second),
		judged: map[int64]int64{}, stop: make(chan struct{}), stopped: make(chan struct{}), done: make(chan struct{}),
		written: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer f.Close()
		// verify.Reader: the rules every reader of a history applies (an
		// empty part is unknown), without the witness events a long cell
		// would otherwise gather.
		res, err := verify.Reader(context.WithoutCancel(ctx), history.Follow(f, s.written, 200*time.Millisecond), part.History,
			verify.Options{Options: checker.Options{Budget: p.Budget}, ChunkEvents: streamChunkEvents, Checked: s.checked,
				NoWitness: true})
		s.mu.Lock()
		if s.err = err; err == nil {
			s.rep, s.sum = res.Report, res.Summary
		}
		s.mu.Unlock()
	}()
	go s.judgeLoop()
	return s, nil
}

// checked keeps the chunk the pages will show (the first with a
// violation, else the latest) and tells the supervisor of a violation.
func (s *streamer) checked(chunk *history.History, sofar *checker.Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed.Load() {
		return
	}
	s.evidence = &history.History{Header: chunk.Header, Events: append([]history.Event(nil), chunk.Events...), End: chunk.End}
	if sofar.Verdict == checker.Fail {
		s.failed.Store(true)
	}
}

// judgeLoop rules on the windows that have closed long enough ago, twice
// a second, and forgets what no judgment needs any more.
func (s *streamer) judgeLoop() {
	defer close(s.stopped)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.judge(s.rec.Now() - s.after)
		}
	}
}

// judge rules on every closed window that ended before until (all of
// them, with until the end), on the stretch the recorder still holds,
// then trims it to what the next judgment may need.
func (s *streamer) judge(until int64) {
	snap := s.rec.Snapshot()
	oldest := until
	var due []history.Judgment
	for _, j := range faults.Judge(snap, s.p.Scenario.TTL) {
		w := j.Of
		_, done := s.judged[w.ID]
		switch {
		case done:
		case w.Return <= until:
			due = append(due, j)
			s.judged[w.ID] = w.Call
		default:
			oldest = min(oldest, w.Call)
		}
	}
	for _, e := range snap.Events { // windows still open
		if e.Kind == history.Fault && e.Open {
			oldest = min(oldest, e.Call)
		}
	}
	faults.Record(s.rec, due)
	cut := oldest - s.back
	s.rec.Trim(cut)
	for id, call := range s.judged { // gone from the recorder: never seen again
		if call < cut {
			delete(s.judged, id)
		}
	}
}

// judgeRest judges the windows left, once the workload and the faults
// have stopped (the loop is over first: one judge at a time).
func (s *streamer) judgeRest() {
	close(s.stop)
	<-s.stopped
	s.judge(1<<62 - 1)
}

// finish, with the recorder closed, waits for the checker to read the
// history to its end.
func (s *streamer) finish() (*checker.Report, checker.FileSummary, *history.History, error) {
	close(s.written)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rep, s.sum, s.evidence, s.err
}
