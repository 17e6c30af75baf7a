package scenarios

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/lockchaos/lockchaos/history"
	"github.com/lockchaos/lockchaos/internal/safefile"
)

// Writing a part's history: the recorder with the cell's header, and what
// the faults add to it (their windows, their probes).

// recording is a part's history as it is written: the recorder and, for a
// continuous part, the streamer that judges and checks it as it grows.
type recording struct {
	rec   *history.Recorder
	st    *streamer
	ended bool
}

// startRecording opens the part's history (and its streamer).
func startRecording(ctx context.Context, p *Plan, part Part) (*recording, error) {
	rec, err := newRecorder(p, part)
	if err != nil {
		return nil, err
	}
	r := &recording{rec: rec}
	if part.Continuous {
		if r.st, err = startStreamer(ctx, p, part, rec); err != nil {
			rec.Close()
			return nil, fmt.Errorf("harness: %w", err)
		}
	}
	return r, nil
}

// end closes the history; a continuous part's checker then reads to its
// end and reports. It runs once, also if the part panics, so no judge or
// checker is left waiting.
func (r *recording) end() (partRun, error) {
	r.ended = true
	if r.st != nil {
		r.st.judgeRest()
	}
	h, err := r.rec.Close()
	if r.st == nil {
		return partRun{h: h}, err
	}
	rep, sum, shown, ferr := r.st.finish()
	if ferr != nil {
		// h is only the recent stretch the recorder kept: nothing to
		// judge the cell on.
		return partRun{}, errors.Join(err, fmt.Errorf("checking the history as it grew: %w", ferr))
	}
	if shown == nil {
		shown = h
	}
	return partRun{h: shown, rep: rep, sum: sum}, err
}

// newRecorder opens the part's history file, its header naming the cell.
func newRecorder(p *Plan, part Part) (*history.Recorder, error) {
	if part.History != "" {
		if err := safefile.MkdirAll(filepath.Dir(part.History)); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
	}
	var kinds []string
	for _, f := range p.Scenario.Faults {
		kinds = append(kinds, f.Kind)
	}
	floor := p.Floor
	rec, err := history.NewRecorder(part.History, history.Header{Scenario: p.Scenario.Name, Lock: p.Lock.Name, Seed: p.RunSeed,
		Clients: p.Scenario.Clients, Keys: p.Keys, Fencing: string(p.Fencing), InProcess: p.Lock.Nodes == 0,
		Faults: kinds, TTL: p.Scenario.TTL, Floor: &floor, Nodes: p.Nodes, Backend: p.Backend.Name(), Simulated: p.Simulated(),
		LockNodes: p.Lock.Nodes, RecoverWithin: p.RecoverWithin, AcquireWithin: p.AcquireWithin,
		Extra: map[string]string{"ttl": p.Scenario.TTL.String(), "cell_seed": fmt.Sprint(p.CellSeed), "topology": string(p.Topology),
			"part":        fmt.Sprintf("%d of %d", part.Index+1, len(p.Parts)),
			"expectation": string(p.Expect.Safety), "liveness_expectation": string(p.Expect.Liveness),
			"backend": p.Backend.Name(), "lock_traits": p.Lock.Describe(), "witness": witnessWord(p)}})
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	return rec, nil
}

// probes records what faults observe on nodes.
func probes(rec *history.Recorder) func(node, key, value string, exists bool) {
	return func(node, key, value string, exists bool) {
		rec.Point(history.Event{Kind: history.Probe, Client: -1, Key: key, Window: history.ProbeWindow(node, exists, value)})
	}
}

// faultWindows records each fault window in the history as it opens and
// closes.
func faultWindows(rec *history.Recorder) func(string, history.Hit) func() {
	return func(name string, hit history.Hit) func() {
		op := rec.Invoke(history.Event{Kind: history.Fault, Client: -1, Window: history.FaultWindow(name, hit)})
		return func() { op.Return(history.Result{Outcome: history.Ok}) }
	}
}
