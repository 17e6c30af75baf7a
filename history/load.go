package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockchaos/lockchaos/internal/jsonl"
)

// maxLine bounds every line of a history, its header included: a longer
// one is an error naming the file and line, never buffered further. A
// recorder's lines are a few hundred bytes (an event, or a fault window
// listing its links), and it clips the texts it writes (maxText), so no
// history it writes comes near the bound.
const maxLine = 1 << 20

// LoadFile reads a history written by a Recorder. Errors name the file and
// line: "run.jsonl:17: return for op 12 that was never invoked".
//
// The file is read once, as a stream, and checked as it is read: the
// header must be its first line, and no line may be longer than 1 MiB, so
// a file that is no history (/dev/zero, a binary) fails within its first
// MiB. A pipe or a FIFO works like a file.
func LoadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return load(f, path, sizeHint(f))
}

// sizeHint guesses a regular file's events from its size: about two lines
// of ~100 bytes per event (growing a slice of a million events by doubling
// would hold two copies at once). 0 for anything else (a pipe, a device).
func sizeHint(f *os.File) int {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		return int(min(st.Size()/180, 1<<26))
	}
	return 0
}

// Load reads a history from r; name is used in error messages.
func Load(r io.Reader, name string) (*History, error) { return load(r, name, 0) }

// load parses lines in parallel, in blocks, and applies them in file
// order: parsing is most of a load, applying is a few map-free steps.
func load(r io.Reader, name string, hint int) (*History, error) {
	br := bufio.NewReaderSize(r, maxLine+1)
	header, err := readHeader(br, name)
	if err != nil {
		return nil, err
	}
	// Sized once the header is read: a file that is no history costs no
	// memory for the events it was guessed to hold.
	ld := newLoader(name, header, hint)
	if err := parseBlocks(br, 2, ld.apply); err != nil {
		return nil, ld.lineErr(err)
	}
	ld.closeOpen()
	return ld.h, nil
}

// readHeader reads the first line of br, which must be the header, and
// checks it: nothing past it is read before it is known to be one.
func readHeader(br *bufio.Reader, name string) (Header, error) {
	var h Header
	head, err := readLine(br)
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return h, malformed(name, 1, "line longer than %d bytes (a history's first line is its header, "+
			"one JSON object: is this a history file?)", maxLine)
	case err != nil && !errors.Is(err, io.EOF):
		return h, fmt.Errorf("history: %s: %w", name, err)
	case err != nil && len(head) == 0:
		return h, fmt.Errorf("%w: %s: empty file (no header line)", ErrMalformed, name)
	}
	if h, err = parseHeader(head); err != nil {
		return h, malformed(name, 1, "header: %v", err)
	}
	return h, nil
}

// readLine returns the first line of br (without copying more than it).
func readLine(br *bufio.Reader) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	return append([]byte(nil), b...), err
}

// flight is a client's operation without a return yet, and the line that
// called it: a client does one thing at a time (a lock's background
// renewals and instants such as lost signals aside).
type flight struct {
	op   int64
	line int
}

// loader merges call and return lines into events, in file order.
type loader struct {
	name     string
	h        *History
	byID     opIndex
	inFlight flights
	nextID   int64 // past every id of the chunks read (ReadChunks)
	earlier  idSet // the ids of the chunks read (ReadChunks)
	// keys are the header's, when it lists them: an event on another key
	// is bad input (nil: an older header that does not say).
	keys    map[string]bool
	lastKey string // the last key found in keys: most lines repeat it
}

// newLoader starts a loader for the file name with its header read, its
// events sized for size.
func newLoader(name string, header Header, size int) *loader {
	ld := &loader{name: name, h: &History{Header: header, Events: make([]Event, 0, size)}}
	if len(header.Keys) > 0 {
		ld.keys = make(map[string]bool, len(header.Keys))
		for _, k := range header.Keys {
			ld.keys[k] = true
		}
	}
	return ld
}

// listKeys shows a header's keys in an error, the first few of many.
func listKeys(keys []string) string {
	if len(keys) > 5 {
		return fmt.Sprintf("%q and %d more", keys[:5], len(keys)-5)
	}
	return fmt.Sprintf("%q", keys)
}

// knownKey reports whether the header lists key (or lists none).
func (ld *loader) knownKey(key string) bool {
	if ld.keys == nil || key == "" || key == ld.lastKey {
		return true
	}
	if !ld.keys[key] {
		return false
	}
	ld.lastKey = key
	return true
}

func (ld *loader) bad(n int, format string, args ...any) error {
	return malformed(ld.name, n, format, args...)
}

// lineErr words an error of parseBlocks: a line's, with the file's name.
func (ld *loader) lineErr(err error) error {
	var le *lineError
	switch {
	case errors.As(err, &le):
		return ld.bad(le.n, "%s", le.msg)
	case errors.Is(err, ErrMalformed):
		return err
	}
	return fmt.Errorf("history: %s: %w", ld.name, err)
}

// closeOpen gives the operations with no return line the history's end.
func (ld *loader) closeOpen() {
	for i := range ld.h.Events {
		if ld.h.Events[i].Open {
			ld.h.Events[i].Return = ld.h.End
			ld.h.Events[i].Err = "no return recorded"
		}
	}
}

// malformed is an error at line n of the file name.
func malformed(name string, n int, format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrMalformed, name, n, fmt.Sprintf(format, args...))
}

// apply adds line n to the history.
func (ld *loader) apply(l *line, n int) error {
	if l.T < 0 {
		return ld.bad(n, "negative time %d", l.T)
	}
	if l.T > ld.h.End {
		ld.h.End = l.T
	}
	// Clients are numbered from 0; the header says how many (0: an older
	// history that does not say).
	if c := ld.h.Header.Clients; c > 0 && l.Client >= c {
		return ld.bad(n, "client %d out of range (the header says %d clients, numbered 0 to %d)", l.Client, c, c-1)
	}
	switch l.Phase {
	case phaseCall, phasePoint:
		return ld.applyCall(l, n)
	case phaseReturn:
		return ld.applyReturn(l, n)
	}
	return ld.bad(n, "unknown phase %q (want call, return or point)", l.Phase)
}

// applyCall adds the event a call or point line begins.
func (ld *loader) applyCall(l *line, n int) error {
	if _, dup := ld.byID.get(l.Op); dup || ld.earlier.has(l.Op) {
		return ld.bad(n, "op %d invoked twice", l.Op)
	}
	if !ld.knownKey(l.Key) {
		return ld.bad(n, "key %q is not one of the header's keys (%s)", l.Key, listKeys(ld.h.Header.Keys))
	}
	e := Event{ID: l.Op, Kind: l.Kind, Client: l.Client, Key: l.Key, Token: l.Token, Fence: l.Fence,
		Call: l.T, Return: l.T, Window: l.Window, Outcome: Indefinite, Open: true}
	if l.Value != nil {
		e.Value = *l.Value
	}
	if l.Phase == phasePoint {
		e.Open, e.Outcome, e.Err = false, l.Outcome, l.Err
		if e.Outcome == 0 {
			e.Outcome = Ok
		}
	}
	if err := ld.typed(&e, l); err != nil {
		return ld.bad(n, "op %d: %v", l.Op, err)
	}
	if err := e.Validate(); err != nil {
		return ld.bad(n, "op %d: %v", l.Op, err)
	}
	if foreground(e.Kind) && l.Phase == phaseCall {
		if f, busy := ld.inFlight.get(e.Client); busy {
			return ld.bad(n, "client %d calls op %d while its op %d (line %d) is still in flight: a client does "+
				"one operation at a time", e.Client, l.Op, f.op, f.line)
		}
		ld.inFlight.set(e.Client, flight{op: l.Op, line: n})
	}
	ld.byID.put(l.Op, len(ld.h.Events))
	ld.h.Events = append(ld.h.Events, e)
	return nil
}

// applyReturn completes the event a return line ends.
func (ld *loader) applyReturn(l *line, n int) error {
	i, ok := ld.byID.get(l.Op)
	if !ok {
		return ld.bad(n, "return for op %d that was never invoked", l.Op)
	}
	e := &ld.h.Events[i]
	if !e.Open {
		return ld.bad(n, "op %d returned twice", l.Op)
	}
	// A return line repeats its call's client (and names no other
	// key): one that differs was written for some other operation.
	if l.Client != e.Client {
		return ld.bad(n, "op %d returns on client %d, but client %d called it", l.Op, l.Client, e.Client)
	}
	if l.Key != "" && l.Key != e.Key {
		return ld.bad(n, "op %d returns on key %q, but was called on key %q", l.Op, l.Key, e.Key)
	}
	if f, ok := ld.inFlight.get(e.Client); ok && f.op == l.Op {
		ld.inFlight.end(e.Client)
	}
	e.Open, e.Return, e.Outcome, e.Err = false, l.T, l.Outcome, l.Err
	if l.Value != nil {
		e.Value = *l.Value
	}
	if l.Token != "" {
		e.Token = l.Token
	}
	if l.Fence != 0 {
		e.Fence = l.Fence
	}
	if err := e.Validate(); err != nil {
		return ld.bad(n, "op %d: %v", l.Op, err)
	}
	return nil
}

// typed gives e the typed payload of format 5: a line of formats 1 to 4
// has its strings read into it (legacy.go); one of format 5 must not
// carry them.
func (ld *loader) typed(e *Event, l *line) error {
	if ld.h.Header.Format > legacyFormat {
		if l.Targets != nil || l.Detail != "" {
			return fmt.Errorf("targets and detail are format %d's; format %d writes what a window hit as typed fields",
				legacyFormat, FormatVersion)
		}
		return nil
	}
	if e.Window != nil && (e.Window.Hit != nil || e.Window.Judgment != nil || e.Window.Probe != nil || e.Window.Witness != nil) {
		return fmt.Errorf("a format %d history with format %d's typed fields", ld.h.Header.Format, FormatVersion)
	}
	upgrade(e, l.fault(), l.Targets, l.Detail)
	return nil
}

// decodeStrict rejects unknown fields and trailing data, so a corrupted
// line is reported rather than half-read, and what encoding/json would
// let through in silence (invalid UTF-8, a name given twice: jsonl.Check).
func decodeStrict(b []byte, v any) error {
	if err := jsonl.Check(b); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// foreground kinds are what a client itself does, one at a time.
func foreground(k Kind) bool {
	return k == Acquire || k == Release || k == Read || k == Write
}

// idSet is a set of op ids: a bit each for the dense ids a recorder
// writes, a map for others.
type idSet struct {
	bits   []uint64
	sparse map[int64]bool
}

func (s *idSet) add(id int64) {
	if id >= 0 && id < 1<<36 {
		if w := int(id >> 6); w >= len(s.bits) {
			s.bits = append(s.bits, make([]uint64, w+1-len(s.bits))...)
		}
		s.bits[id>>6] |= 1 << (id & 63)
		return
	}
	if s.sparse == nil {
		s.sparse = map[int64]bool{}
	}
	s.sparse[id] = true
}

func (s *idSet) has(id int64) bool {
	if id >= 0 && id < 1<<36 {
		w := int(id >> 6)
		return w < len(s.bits) && s.bits[w]&(1<<(id&63)) != 0
	}
	return s.sparse[id]
}

// opIndex maps op ids to event positions. A recorder numbers ops from 0 in
// order, so a slice indexed by id serves almost every history at a tenth
// of a map's cost; ids far from dense (hand-written files) go to a map.
type opIndex struct {
	base   int64   // the id dense[0] stands for (a chunk's first)
	dense  []int32 // position+1, 0 when absent
	sparse map[int64]int
}

func (x *opIndex) get(id int64) (int, bool) {
	if d := id - x.base; d >= 0 && d < int64(len(x.dense)) && x.dense[d] != 0 {
		return int(x.dense[d]) - 1, true
	}
	i, ok := x.sparse[id]
	return i, ok
}

func (x *opIndex) put(id int64, pos int) {
	// Dense while ids stay within twice the events seen (and positions fit).
	if d := id - x.base; d >= 0 && d < 2*int64(pos)+1024 && pos < 1<<31-2 {
		if n := int(d) + 1 - len(x.dense); n > 0 {
			x.dense = append(x.dense, make([]int32, n)...)
		}
		x.dense[d] = int32(pos + 1)
		return
	}
	if x.sparse == nil {
		x.sparse = map[int64]int{}
	}
	x.sparse[id] = pos
}
