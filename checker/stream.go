package checker

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// FileOptions tune CheckFile.
type FileOptions struct {
	Options
	// ChunkEvents is the fewest events a chunk holds before the file may
	// be cut (history.ChunkOptions.MinEvents). Default 1,000,000: smaller
	// histories are checked whole.
	ChunkEvents int
	// Prepare, if set, is called with each chunk before it is checked,
	// last true for the file's last (lockchaos check judges the fault
	// windows a crashed run left unjudged, and appends them to the last).
	Prepare func(chunk *history.History, last bool)
	// Checked, if set, is called after each chunk with it and the report
	// so far (its verdict and counts; evidence is held to the floor only
	// at the end). Neither may be kept: copy what is needed.
	Checked func(chunk *history.History, sofar *Report)
}

// FileSummary is what CheckFile read.
type FileSummary struct {
	Header       history.Header
	Events       int
	End          int64
	Chunks       int
	LargestChunk int // events
}

// CheckFile checks the history file at path without holding it whole: it
// reads the file in chunks, each key cut where it was quiet (nobody held
// it, none of its operations in flight), and checks each chunk as it is
// read, carrying across each cut what the rules need: the resource's
// possible values and pending writes, the highest fence accepted, recent
// reads, writes and holds (to tell a lost update whose first write lies
// before the cut), who was still trying
// for a key, and the latest fault windows (for the evidence and the
// incidents' causes). Memory follows the longest stretch a key is never
// quiet, not the file's length.
//
// A history of up to ChunkEvents events is one chunk, and its report is
// Check's. A report over several chunks has the same verdict, violation
// counts, evidence and statistics Check would give, with these
// differences: it carries no holds (Report.Holds is nil), and the
// violations kept are the first MaxViolations of each property in file
// order (Check keeps the first by time; they differ only past that many).
//
// CheckFile runs the properties only: it judges no fault window the file
// left unjudged (that needs faults, which checker does not import) and
// does not make an empty history unknown. verify.File does both; it is
// what every lockchaos command reads a history with.
func CheckFile(ctx context.Context, path string, opts FileOptions) (*Report, FileSummary, error) {
	return checkChunks(ctx, opts, func(q history.Quiescence, co history.ChunkOptions,
		emit func(*history.History, bool) error) (history.Header, error) {
		return history.ReadChunks(path, q, co, emit)
	})
}

// CheckReader is CheckFile over a reader: a history still being written,
// read through history.Follow, is checked as it grows (a long cell).
func CheckReader(ctx context.Context, r io.Reader, name string, opts FileOptions) (*Report, FileSummary, error) {
	return checkChunks(ctx, opts, func(q history.Quiescence, co history.ChunkOptions,
		emit func(*history.History, bool) error) (history.Header, error) {
		return history.ReadChunksFrom(r, name, q, co, emit)
	})
}

type chunkReader func(history.Quiescence, history.ChunkOptions, func(*history.History, bool) error) (history.Header, error)

func checkChunks(ctx context.Context, opts FileOptions, read chunkReader) (*Report, FileSummary, error) {
	opts.Options = opts.withDefaults()
	var sum FileSummary
	var acc *Report
	c := newCarry()
	c.maxViolations = opts.MaxViolations
	q := &quiet{keys: map[string]*keyState{}}
	var spent time.Duration
	header, err := read(q, history.ChunkOptions{MinEvents: opts.ChunkEvents}, func(h *history.History, last bool) error {
		if opts.Prepare != nil {
			opts.Prepare(h, last)
		}
		o := opts.Options
		// The budget bounds each property over the whole file: the time
		// spent checking, not waiting for a growing file.
		o.Budget = max(time.Millisecond, opts.Budget-spent)
		start := time.Now()
		rep := check(ctx, h, o, c)
		spent += time.Since(start)
		sum.Chunks++
		sum.Events += len(h.Events)
		sum.LargestChunk = max(sum.LargestChunk, len(h.Events))
		sum.End = h.End
		if !last || sum.Chunks > 1 {
			rep.Holds = nil // a file's holds are what chunks avoid holding
		}
		if acc == nil {
			acc = rep
		} else {
			acc.merge(rep, opts.MaxViolations)
		}
		if opts.Checked != nil {
			opts.Checked(h, acc)
		}
		return nil
	})
	sum.Header = header
	if err != nil {
		return nil, sum, err
	}
	acc.finish(c, sum.End, q.faulty, header.TTL)
	if size := cmp.Or(opts.ChunkEvents, history.DefaultChunkEvents); sum.LargestChunk > 4*size {
		acc.Warnings = append(acc.Warnings, fmt.Sprintf("a chunk held %d events where the chunk size is %d: some "+
			"key was not quiet (nobody holding it, nothing in flight) for that long, a hold never released or an "+
			"operation that never returned, and memory followed it", sum.LargestChunk, size))
	}
	return acc, sum, nil
}

// carry is what crosses a cut between chunks.
type carry struct {
	counter   map[string]carried         // the resource model per key
	fences    map[string]history.Event   // the highest fence accepted per key
	recent    map[string][]history.Event // the latest accepted reads and writes per key
	holds     map[string][]Hold          // the latest holds per key
	trying    map[ck]int64               // first attempt of clients still trying
	lastTry   map[ck]int64               // their latest attempt's return
	heldUntil map[string]int64           // the latest hold end per key
	freeGaps  map[string][]span          // free stretches a client still trying may yet cover
	best      int64                      // the longest free stretch so far
	clients   map[int]bool
	latencies []int64 // of successful acquires: 8 bytes each
	// windows are the latest fault windows, moments the exercised ones'
	// sentences: a violation just past a cut is put down to its window.
	windows    []history.Event
	moments    map[int64]string
	candidates map[int64]history.Event // every window, which a violation may be put down to
	// maxViolations is Options.MaxViolations: no more are kept per property.
	maxViolations int
	// ph is what the server-side properties carry (phantomchunk.go).
	ph *phantomCarry
	// live is the liveness sweep, which carries its own state over cuts
	// (stopped holders not yet resolved, free stretches, leases left).
	live *live
}

func newCarry() *carry {
	return &carry{counter: map[string]carried{}, fences: map[string]history.Event{}, recent: map[string][]history.Event{},
		holds: map[string][]Hold{}, trying: map[ck]int64{}, lastTry: map[ck]int64{}, heldUntil: map[string]int64{},
		clients: map[int]bool{}, moments: map[int64]string{}, candidates: map[int64]history.Event{}}
}

// keptWindows is how many of the latest fault windows cross a cut.
const keptWindows = 64

// keepWindows notes, for the incidents built at the end, every fault
// window and the sentences of those that reached their dangerous moment
// (which a judgment may write after the cut). Every violation counts in
// an incident, not only the examples kept, so any window may be one's
// cause: windows are one per fault fired, few beside the events.
func (c *carry) keepWindows(evs []history.Event) {
	ws := windowsOf(evs, c.moments)
	for _, w := range ws {
		c.candidates[w.ID] = w
	}
	c.windows = lastOf(append(slices.Clip(c.windows), ws...), keptWindows)
}

// keptRecent is how many of each key's latest reads, writes and holds
// cross a cut: a lost update's two writes lie within a lease or two of
// each other.
const keptRecent = 64

func (c *carry) keepRecent(evs []history.Event, holds []Hold) {
	for _, e := range evs {
		if (e.Kind == history.Write || e.Kind == history.Read) && e.Outcome == history.Ok {
			c.recent[e.Key] = lastOf(append(c.recent[e.Key], e), keptRecent)
		}
	}
	for _, h := range holds {
		c.holds[h.Key] = lastOf(append(c.holds[h.Key], h), keptRecent)
	}
}

// lastOf keeps the last n of s once it holds twice that (amortised).
func lastOf[T any](s []T, n int) []T {
	if len(s) > 2*n {
		s = append(s[:0], s[len(s)-n:]...)
	}
	return s
}

// merge adds a later chunk's report to r.
func (r *Report) merge(o *Report, maxViolations int) {
	for i := range r.Results {
		a, b := &r.Results[i], o.Result(r.Results[i].Property)
		if b == nil {
			continue
		}
		switch {
		case a.Status == Fail || b.Status == Fail:
			a.Status = Fail
		case a.Status == Unknown || b.Status == Unknown:
			a.Status = Unknown
		}
		if a.Note == "" || a.Note == noHolderToken {
			a.Note = b.Note
		}
		for _, v := range b.Violations {
			if len(a.Violations) < maxViolations {
				a.Violations = append(a.Violations, v)
			}
		}
		a.ViolationCount += b.ViolationCount
		a.marks = append(a.marks, b.marks...)
		a.Judged += b.Judged
		a.Elapsed += b.Elapsed
		a.Operations += b.Operations
		a.Segments += b.Segments
		a.LargestSegment = max(a.LargestSegment, b.LargestSegment)
	}
	r.Verdict = Verdict(r.Results)
	s, t := &r.Stats, o.Stats
	s.AcquireOK += t.AcquireOK
	s.AcquireRefused += t.AcquireRefused
	s.AcquireIndefinite += t.AcquireIndefinite
	s.Cycles += t.Cycles
	s.Reads += t.Reads
	s.Writes += t.Writes
	s.StaleFence += t.StaleFence
	s.ReleasesNotHeld += t.ReleasesNotHeld
	s.LostSignals += t.LostSignals
	s.Abandoned += t.Abandoned
	s.RenewalsOK += t.RenewalsOK
	s.RenewalsFailed += t.RenewalsFailed
	s.Overlaps += t.Overlaps
	// Ties go to the first key in order, then the earliest, as in Check.
	if t.LongestFree > s.LongestFree || (t.LongestFree == s.LongestFree && t.LongestFree > 0 &&
		(t.LongestFreeKey < s.LongestFreeKey || (t.LongestFreeKey == s.LongestFreeKey && t.LongestFreeAt < s.LongestFreeAt))) {
		s.LongestFree, s.LongestFreeKey, s.LongestFreeAt = t.LongestFree, t.LongestFreeKey, t.LongestFreeAt
	}
	if t.FirstViolation >= 0 && (s.FirstViolation < 0 || t.FirstViolation < s.FirstViolation) {
		s.FirstViolation = t.FirstViolation
	}
	floor := r.Evidence.Floor
	r.Evidence = r.Evidence.Add(o.Evidence)
	r.Evidence.Floor = floor
	for _, w := range o.Warnings {
		if !slices.Contains(r.Warnings, w) {
			r.Warnings = append(r.Warnings, w)
		}
	}
}

// finish computes what only the whole file gives: client count, latency
// percentiles, the rate, and the evidence held to its floor.
func (r *Report) finish(c *carry, end int64, faulty bool, ttl time.Duration) {
	r.finishPhantoms(c, end)
	r.finishLiveness(c, end)
	s := &r.Stats
	s.Duration = end
	s.Clients = len(c.clients)
	if end > 0 {
		s.CyclesPerSecond = float64(s.Cycles) / (float64(end) / 1e9)
	}
	s.AcquireP50, s.AcquireP99 = percentiles(c.latencies)
	r.Evidence = r.Evidence.Hold(r.Evidence.Floor, faulty || r.Evidence.Fired > 0)
	windows := slices.Collect(maps.Values(c.candidates))
	slices.SortFunc(windows, func(a, b history.Event) int { return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.ID, b.ID)) })
	r.Incidents = incidentsFrom(incidentViolations(r.Results), windows, c.moments, ttl)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// finishLiveness adds what the liveness sweep settled at the file's end
// (the stopped holders nobody recovered from, the notes, the figures),
// and the windows its violations name, for the incidents.
func (r *Report) finishLiveness(c *carry, end int64) {
	if c.live == nil {
		return
	}
	df, ft, lv := c.live.finish(end)
	r.Liveness = lv
	for _, o := range []Result{df, ft} {
		a := r.Result(o.Property)
		a.Violations = append(a.Violations, o.Violations[:min(len(o.Violations), c.maxViolations-len(a.Violations))]...)
		a.ViolationCount += o.ViolationCount
		a.marks = append(a.marks, o.marks...)
		a.Judged += o.Judged
		a.Operations += o.Operations
		a.Elapsed += o.Elapsed
		a.Note = o.Note
		if o.Property == DeadlockFree {
			a.Note = phantomNote(o.Note, c.live.df.totalJudged, a.Judged-c.live.df.totalJudged)
		}
		if a.ViolationCount > 0 {
			a.Status = Fail
		}
		for _, v := range o.Violations {
			if r.Stats.FirstViolation < 0 || v.At < r.Stats.FirstViolation {
				r.Stats.FirstViolation = v.At
			}
			for _, w := range c.live.windows {
				if slices.Contains(v.Events, w.ID) {
					c.candidates[w.ID] = w
				}
			}
		}
	}
	r.Verdict = Verdict(r.Results)
}
