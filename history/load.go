package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxLine bounds one JSONL line; a longer one is reported, not buffered forever.
const maxLine = 1 << 20

// LoadFile reads a history written by a Recorder. Errors name the file and
// line: "run.jsonl:17: return for op 12 that was never invoked".
func LoadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	var hint int
	if st, err := f.Stat(); err == nil {
		// About two lines of ~100 bytes per event: growing a slice of a
		// million events by doubling would hold two copies at once.
		hint = int(st.Size() / 180)
	}
	return load(f, path, hint)
}

// Load reads a history from r; name is used in error messages.
func Load(r io.Reader, name string) (*History, error) { return load(r, name, 0) }

// load parses lines in parallel, in blocks, and applies them in file
// order: parsing is most of a load, applying is a few map-free steps.
func load(r io.Reader, name string, hint int) (*History, error) {
	ld := &loader{name: name, h: &History{Events: make([]Event, 0, min(hint, 1<<26))}, inFlight: map[int]flight{}}
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := readLine(br)
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, ld.bad(1, "line longer than %d bytes", br.Size())
	case err != nil && !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("history: %s: %w", name, err)
	case err != nil && len(head) == 0:
		return nil, fmt.Errorf("%w: %s: empty file (no header line)", ErrMalformed, name)
	}
	if err := decodeStrict(bytes.TrimSpace(head), &ld.h.Header); err != nil {
		return nil, ld.bad(1, "header: %v", err)
	}
	if f := ld.h.Header.Format; f != FormatVersion && f != 1 {
		return nil, ld.bad(1, "header: format %d, this lockchaos reads formats 1 and %d", f, FormatVersion)
	}
	if err := parseBlocks(br, 2, ld.apply); err != nil {
		var le *lineError
		switch {
		case errors.As(err, &le):
			return nil, ld.bad(le.n, "%s", le.msg)
		case errors.Is(err, ErrMalformed):
			return nil, err
		}
		return nil, fmt.Errorf("history: %s: %w", name, err)
	}
	for i := range ld.h.Events {
		if ld.h.Events[i].Open {
			ld.h.Events[i].Return = ld.h.End
			ld.h.Events[i].Err = "no return recorded"
		}
	}
	return ld.h, nil
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
	inFlight map[int]flight
	nextID   int64 // past every id of the chunks read (ReadChunks)
	earlier  idSet // the ids of the chunks read (ReadChunks)
}

func (ld *loader) bad(n int, format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", ErrMalformed, ld.name, n, fmt.Sprintf(format, args...))
}

// apply adds line n to the history.
func (ld *loader) apply(l *line, n int) error {
	if l.T < 0 {
		return ld.bad(n, "negative time %d", l.T)
	}
	if l.T > ld.h.End {
		ld.h.End = l.T
	}
	switch l.Phase {
	case phaseCall, phasePoint:
		if _, dup := ld.byID.get(l.Op); dup || ld.earlier.has(l.Op) {
			return ld.bad(n, "op %d invoked twice", l.Op)
		}
		e := Event{ID: l.Op, Kind: l.Kind, Client: l.Client, Key: l.Key, Token: l.Token, Fence: l.Fence,
			Call: l.T, Return: l.T, Window: NewWindow(l.Fault, l.Targets, l.Detail), Outcome: Indefinite, Open: true}
		if l.Value != nil {
			e.Value = *l.Value
		}
		if l.Phase == phasePoint {
			e.Open, e.Outcome, e.Err = false, l.Outcome, l.Err
			if e.Outcome == 0 {
				e.Outcome = Ok
			}
		}
		if err := e.Validate(); err != nil {
			return ld.bad(n, "op %d: %v", l.Op, err)
		}
		if foreground(e.Kind) && l.Phase == phaseCall {
			if f, busy := ld.inFlight[e.Client]; busy {
				return ld.bad(n, "client %d calls op %d while its op %d (line %d) is still in flight: a client does "+
					"one operation at a time", e.Client, l.Op, f.op, f.line)
			}
			ld.inFlight[e.Client] = flight{op: l.Op, line: n}
		}
		ld.byID.put(l.Op, len(ld.h.Events))
		ld.h.Events = append(ld.h.Events, e)
	case phaseReturn:
		i, ok := ld.byID.get(l.Op)
		if !ok {
			return ld.bad(n, "return for op %d that was never invoked", l.Op)
		}
		e := &ld.h.Events[i]
		if !e.Open {
			return ld.bad(n, "op %d returned twice", l.Op)
		}
		if f, ok := ld.inFlight[e.Client]; ok && f.op == l.Op {
			delete(ld.inFlight, e.Client)
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
	default:
		return ld.bad(n, "unknown phase %q (want call, return or point)", l.Phase)
	}
	return nil
}

// decodeStrict rejects unknown fields and trailing data, so a corrupted
// line is reported rather than half-read.
func decodeStrict(b []byte, v any) error {
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
