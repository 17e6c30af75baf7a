package history

import (
	"errors"
	"strconv"

	"github.com/lockchaos/lockchaos/internal/jsonl"
)

// errSlowPath sends a line to encoding/json: anything the fast parser
// does not expect (an unknown or repeated field, an odd value) is decoded
// strictly there, which also words the error.
var errSlowPath = errors.New("history: not a plain line")

// lineParser decodes history lines without reflection: the loader's hot
// path (a million-event history is two million lines). It accepts exactly
// the shape a Recorder writes: one flat object of known fields, each at
// most once, read by jsonl.Scanner. Anything else returns errSlowPath, and
// the strict decoder decides. One parser serves one goroutine.
type lineParser struct {
	s jsonl.Scanner
	// interned holds the strings that repeat on every line (kinds,
	// phases, outcomes, keys), so a million lines share a few copies.
	interned map[string]string
	last     string // the string common read last
	values   []int64
}

// newValue returns a pointer to a copy of n, from a slab of them: a
// line's value is a pointer (absent and null differ), and one allocation
// per value would be one per line.
func (p *lineParser) newValue(n int64) *int64 {
	if len(p.values) == cap(p.values) {
		p.values = make([]int64, 0, 1024)
	}
	p.values = append(p.values, n)
	return &p.values[len(p.values)-1]
}

func newLineParser() *lineParser { return &lineParser{interned: map[string]string{}} }

// parse decodes one line into l.
func (p *lineParser) parse(b []byte, l *line) error {
	*l = line{}
	s := &p.s
	s.Reset(b)
	if !s.Object(func(name []byte) (uint64, bool) { return p.field(name, l) }) {
		return errSlowPath
	}
	return p.end()
}

func (p *lineParser) end() error {
	if !p.s.End() {
		return errSlowPath
	}
	return nil
}

// intern returns s's shared copy (looking up a []byte converted in the
// index expression allocates nothing).
func (p *lineParser) intern(b []byte) string { return p.internUpTo(b, 4096) }

// internUpTo interns b while the table has fewer than limit strings:
// error texts, which can be unique (ports, addresses), take at most half
// the table, so they never crowd out the kinds and keys.
func (p *lineParser) internUpTo(b []byte, limit int) string {
	if v, ok := p.interned[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(p.interned) < limit {
		p.interned[v] = v
	}
	return v
}

// common reads a string that repeats across lines, interned: the key,
// mostly the last line's (no lookup then).
func (p *lineParser) common() (string, bool) {
	b, ok := p.s.Bytes()
	if !ok {
		return "", false
	}
	if string(b) != p.last {
		p.last = p.intern(b)
	}
	return p.last, true
}

// phase reads a line's phase: one of three constants on every line, so
// no lookup in the table.
func (p *lineParser) phase() (string, bool) {
	b, ok := p.s.Bytes()
	switch {
	case !ok:
		return "", false
	case string(b) == phaseCall:
		return phaseCall, true
	case string(b) == phaseReturn:
		return phaseReturn, true
	case string(b) == phasePoint:
		return phasePoint, true
	}
	return p.intern(b), true // the loader words the error
}

// errText reads an error text, interned: a few repeat on every other line.
func (p *lineParser) errText() (string, bool) {
	b, ok := p.s.Bytes()
	if !ok {
		return "", false
	}
	return p.internUpTo(b, 2048), true
}

// field reads the value of the field named name into l, and returns the
// field's bit (0 for a name it does not know, with ok false).
func (p *lineParser) field(name []byte, l *line) (bit uint64, ok bool) {
	s := &p.s
	switch string(name) {
	case "op":
		l.Op, ok = s.Int(64)
		return 1 << 0, ok
	case "phase":
		l.Phase, ok = p.phase()
		return 1 << 1, ok
	case "t":
		l.T, ok = s.Int(64)
		return 1 << 2, ok
	case "kind":
		var k []byte
		if k, ok = s.Bytes(); ok {
			l.Kind, ok = ParseKind(string(k)) // on the stack: no copy kept
		}
		return 1 << 3, ok
	case "client":
		var n int64
		n, ok = s.Int(strconv.IntSize)
		l.Client = int(n)
		return 1 << 4, ok
	case "key":
		l.Key, ok = p.common()
		return 1 << 5, ok
	case "token":
		l.Token, ok = s.String()
		return 1 << 6, ok
	case "fence":
		l.Fence, ok = s.Uint(64)
		return 1 << 7, ok
	case "value":
		if s.Null() {
			return 1 << 8, true
		}
		var n int64
		if n, ok = s.Int(64); ok {
			l.Value = p.newValue(n)
		}
		return 1 << 8, ok
	case "outcome":
		var o []byte
		if o, ok = s.Bytes(); ok {
			l.Outcome, ok = ParseOutcome(string(o))
		}
		return 1 << 9, ok
	case "error":
		l.Err, ok = p.errText()
		return 1 << 10, ok
	}
	return p.windowField(name, l)
}

// windowField reads the fields of a window's payload (window.go), and
// those formats 1 to 4 wrote it in (legacy.go).
func (p *lineParser) windowField(name []byte, l *line) (bit uint64, ok bool) {
	s := &p.s
	switch string(name) {
	case "fault":
		l.win().Fault, ok = p.common()
		return 1 << 11, ok
	case "hit":
		return 1 << 12, payload(p, &l.win().Hit, p.hitField)
	case "judgment":
		return 1 << 13, payload(p, &l.win().Judgment, p.judgedField)
	case "probe":
		return 1 << 14, payload(p, &l.win().Probe, p.probedField)
	case "witness":
		return 1 << 15, payload(p, &l.win().Witness, p.actField)
	case "targets":
		return 1 << 16, p.strings(&l.Targets)
	case "detail":
		l.Detail, ok = s.String()
		return 1 << 17, ok
	}
	return 0, false
}

// payload reads one of a window's payloads, or null (none).
func payload[T any](p *lineParser, into **T, field func(name []byte, v *T) (uint64, bool)) bool {
	if p.s.Null() {
		return true
	}
	v := new(T)
	*into = v
	return p.s.Object(func(name []byte) (uint64, bool) { return field(name, v) })
}

// strings reads a list of strings that repeat across lines, or null (nil,
// where [] is empty, as encoding/json has them).
func (p *lineParser) strings(into *[]string) bool {
	if p.s.Null() {
		return true
	}
	*into = []string{}
	return p.s.Array(func() bool {
		v, ok := p.common()
		*into = append(*into, v)
		return ok
	})
}
