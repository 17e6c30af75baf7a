package history

import (
	"errors"
	"strconv"
)

// errSlowPath sends a line to encoding/json: anything the fast scanner
// does not expect (an unknown field, an odd value) is decoded strictly
// there, which also words the error.
var errSlowPath = errors.New("history: not a plain line")

// parseLine decodes one history line without reflection: the loader's hot
// path (a million-event history is two million lines). It accepts exactly
// the shape a Recorder writes: one flat object of known fields. Anything
// else returns errSlowPath, and the strict decoder decides.
func parseLine(b []byte, l *line, interned map[string]string) error {
	*l = line{}
	p := scanner{b: b, interned: interned}
	p.space()
	if !p.eat('{') {
		return errSlowPath
	}
	p.space()
	if p.eat('}') {
		return p.end()
	}
	for {
		p.space()
		key, ok := p.str()
		if !ok {
			return errSlowPath
		}
		p.space()
		if !p.eat(':') {
			return errSlowPath
		}
		p.space()
		if !p.field(key, l) {
			return errSlowPath
		}
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return p.end()
		}
		return errSlowPath
	}
}

type scanner struct {
	b []byte
	i int
	// interned holds the strings that repeat on every line (kinds,
	// phases, outcomes, keys), so a million lines share a few copies.
	interned map[string]string
}

// intern returns s's shared copy (looking up a []byte converted in the
// index expression allocates nothing).
func (p *scanner) intern(b []byte) string { return p.internUpTo(b, 4096) }

// internUpTo interns b while the table has fewer than limit strings:
// error texts, which can be unique (ports, addresses), take at most half
// the table, so they never crowd out the kinds and keys.
func (p *scanner) internUpTo(b []byte, limit int) string {
	if v, ok := p.interned[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(p.interned) < limit {
		p.interned[v] = v
	}
	return v
}

// errText reads an error text, interned: a few repeat on every other line.
func (p *scanner) errText() (string, bool) {
	save := p.i
	if b, ok := p.rawStr(); ok {
		return p.internUpTo(b, 2048), true
	}
	p.i = save
	return p.str()
}

// rawStr reads a JSON string without escapes as bytes (ok false if it
// has escapes or is not a string).
func (p *scanner) rawStr() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// common reads a string that repeats across lines, interned.
func (p *scanner) common() (string, bool) {
	save := p.i
	if b, ok := p.rawStr(); ok {
		return p.intern(b), true
	}
	p.i = save
	return p.str()
}

func (p *scanner) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\r' || p.b[p.i] == '\n') {
		p.i++
	}
}

func (p *scanner) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *scanner) end() error {
	p.space()
	if p.i != len(p.b) {
		return errSlowPath
	}
	return nil
}

// str reads a JSON string; escapes go through strconv.Unquote, which reads
// JSON's escapes (\uXXXX included) as Go's.
func (p *scanner) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start, escaped := p.i, false
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '\\':
			escaped = true
			p.i += 2
			continue
		case c == '"':
			raw := p.b[start:p.i]
			p.i++
			if !escaped {
				return string(raw), true
			}
			s, err := strconv.Unquote(`"` + string(raw) + `"`)
			return s, err == nil
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

func (p *scanner) int() (int64, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return n, err == nil
}

func (p *scanner) null() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// field reads the value of one known field into l.
func (p *scanner) field(key string, l *line) bool {
	var ok bool
	switch key {
	case "op":
		l.Op, ok = p.int()
	case "t":
		l.T, ok = p.int()
	case "client":
		var n int64
		n, ok = p.int()
		l.Client = int(n)
	case "fence":
		var n int64
		n, ok = p.int()
		ok = ok && n >= 0
		l.Fence = uint64(n)
	case "value":
		if p.null() {
			return true
		}
		var n int64
		if n, ok = p.int(); ok {
			l.Value = &n
		}
	case "phase":
		l.Phase, ok = p.common()
	case "kind":
		var s string
		if s, ok = p.common(); ok {
			l.Kind, ok = ParseKind(s)
		}
	case "key":
		l.Key, ok = p.common()
	case "token":
		l.Token, ok = p.str()
	case "outcome":
		var s string
		if s, ok = p.common(); ok {
			l.Outcome, ok = ParseOutcome(s)
		}
	case "error":
		l.Err, ok = p.errText()
	case "fault":
		l.Fault, ok = p.common()
	case "detail":
		l.Detail, ok = p.str()
	case "targets":
		if p.null() {
			return true
		}
		if !p.eat('[') {
			return false
		}
		p.space()
		if p.eat(']') {
			return true
		}
		for {
			p.space()
			s, ok := p.str()
			if !ok {
				return false
			}
			l.Targets = append(l.Targets, s)
			p.space()
			if p.eat(']') {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	}
	return ok
}
