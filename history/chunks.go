package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Quiescence decides where each key's events may be cut when a history
// is read in chunks. It sees every event as its lines are applied.
type Quiescence interface {
	// Start is called with the file's header before any line.
	Start(h Header)
	// Applied is called after each line: e is the event as it stands
	// (returned false after its call or point line, true after its return).
	Applied(e *Event, returned bool)
	// Open reports whether something with no key is open (a fault
	// window): no chunk ends while one is.
	Open() bool
	// KeyCut returns the first op id of key's events that belong to the
	// next chunk: none (math.MaxInt64) when nothing the checkers follow
	// on key is open, else the first after the key was last quiet (before
	// the hold or the operation still open). Ids follow the file's
	// order, unlike times: a release called at the instant of the next
	// acquire's call is on the right side of a cut.
	KeyCut(key string) int64
}

// ChunkOptions bound the chunks.
type ChunkOptions struct {
	// MinEvents is the fewest events a chunk holds before it may be cut
	// (the last chunk may hold fewer). Default 1,000,000: a history of up
	// to a million events is checked whole, as LoadFile reads it.
	MinEvents int
}

// DefaultChunkEvents is ChunkOptions.MinEvents's default.
const DefaultChunkEvents = 1_000_000

// ReadChunks reads the history file at path in consecutive chunks and
// calls emit with each: a History with the file's header, the chunk's
// events and, as End, the latest time read so far (the file's, for the
// last chunk). Once a chunk holds opts.MinEvents events it ends before the
// next call, and each key's events from its KeyCut on, with any operation
// still in flight, move to the next chunk: every key is cut where it was
// quiet, so memory follows the longest stretch a key is never quiet, not
// the file's length.
//
// The History passed to emit is reused for the next chunk: emit must not
// keep it or its events. Errors name the file and line, as LoadFile's do.
func ReadChunks(path string, q Quiescence, opts ChunkOptions, emit func(h *History, last bool) error) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return readChunks(f, path, q, opts, sizeHint(f), emit)
}

func readChunks(r io.Reader, name string, q Quiescence, opts ChunkOptions, hint int, emit func(*History, bool) error) (Header, error) {
	if opts.MinEvents <= 0 {
		opts.MinEvents = DefaultChunkEvents
	}
	br := bufio.NewReaderSize(r, maxLine+1)
	header, err := readHeader(br, name)
	if err != nil {
		return header, err
	}
	// Sized up front (growing a million events by doubling holds two
	// copies at once), to a chunk and a quarter: the events moved on at a
	// cut and those read before the next call line fit.
	size := min(hint, opts.MinEvents+opts.MinEvents/4)
	ld := newLoader(name, header, size)
	ld.byID.dense = make([]int32, 0, size) // grown by appending, its copies were a tenth of a load's garbage
	q.Start(header)
	var moved []Event
	// limit is the size at which the next cut is tried: MinEvents past
	// what the last one moved on, so a key that is never quiet (all its
	// events move on every time) costs one attempt per MinEvents events,
	// not one per line.
	limit := opts.MinEvents
	apply := func(l *line, n int) error {
		if l.Phase != phaseReturn && len(ld.h.Events) >= limit && l.T > ld.h.End && !q.Open() {
			moved = ld.cut(q, moved[:0])
			if len(ld.h.Events) > 0 {
				if err := emit(ld.h, false); err != nil {
					return err
				}
			}
			ld.restart(moved)
			limit = len(moved) + opts.MinEvents
		}
		if err := ld.apply(l, n); err != nil {
			return err
		}
		i, _ := ld.byID.get(l.Op)
		q.Applied(&ld.h.Events[i], l.Phase == phaseReturn)
		return nil
	}
	if err := parseBlocks(unbuffered(br, r), 2, apply); err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return header, ld.lineErr(err)
		}
		return header, err // emit's, or the reader's (which names the file)
	}
	ld.closeOpen()
	return header, emit(ld.h, true)
}

// unbuffered is what is left of r past what br has read: br's buffered
// bytes, then r itself. Blocks are read straight from r, not copied through
// br's buffer on the way (a second copy of the whole file).
func unbuffered(br *bufio.Reader, r io.Reader) io.Reader {
	rest, _ := br.Peek(br.Buffered())
	return io.MultiReader(bytes.NewReader(rest), r)
}

// cut keeps in ld.h.Events what belongs to the chunk ending before t and
// returns the rest (appended to moved): each key's events from its cut
// on, and any operation still in flight. It remembers every id of the
// chunk, so one invoked again later is still reported.
func (ld *loader) cut(q Quiescence, moved []Event) []Event {
	cuts := map[string]int64{}
	kept := ld.h.Events[:0]
	for _, e := range ld.h.Events {
		ld.nextID = max(ld.nextID, e.ID+1)
		next := e.Open
		if e.Key != "" && !next {
			at, ok := cuts[e.Key]
			if !ok {
				at = q.KeyCut(e.Key)
				cuts[e.Key] = at
			}
			next = e.ID >= at
		}
		if next {
			moved = append(moved, e)
		} else {
			kept = append(kept, e)
			ld.earlier.add(e.ID)
		}
	}
	ld.h.Events = kept
	return moved
}

// restart begins the next chunk with the events moved into it.
func (ld *loader) restart(moved []Event) {
	ld.h.Events = append(ld.h.Events[:0], moved...)
	// Ops are numbered in file order: the next chunk's index starts past
	// the ids seen, so it stays dense (moved ones go to its map).
	ld.byID = opIndex{base: ld.nextID, dense: ld.byID.dense[:0]} // put zeroes what it extends into
	for i, e := range ld.h.Events {
		ld.byID.put(e.ID, i)
	}
}

// ReadChunksFrom is ReadChunks over a reader (a file still being written,
// through Follow); name is used in error messages.
func ReadChunksFrom(r io.Reader, name string, q Quiescence, opts ChunkOptions, emit func(h *History, last bool) error) (Header, error) {
	return readChunks(r, name, q, opts, 0, emit)
}

// Follow reads a history file while its recorder writes it: at the end of
// the file it waits (polling every poll) for more, until done is closed;
// then it reads what is left and ends. A recorder writes whole lines, so
// what Follow returns always ends on one once done is closed.
func Follow(f *os.File, done <-chan struct{}, poll time.Duration) io.Reader {
	return &follower{f: f, done: done, poll: poll}
}

type follower struct {
	f        *os.File
	done     <-chan struct{}
	poll     time.Duration
	draining bool
}

func (fl *follower) Read(p []byte) (int, error) {
	for {
		n, err := fl.f.Read(p)
		if n > 0 || !errors.Is(err, io.EOF) {
			return n, err
		}
		if fl.draining {
			return 0, io.EOF
		}
		select {
		case <-fl.done:
			fl.draining = true // one more read: what was written before done
		case <-time.After(fl.poll):
		}
	}
}
