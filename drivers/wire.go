package drivers

import (
	"encoding/json"
	"strconv"
)

// The protocol's lines have a few fixed, flat shapes, and a cycle sends
// two requests and reads two answers: encoding/json's reflection costs
// microseconds per line, on the cores the proxies and the drivers need.
// Requests are built by hand, byte for byte what encoding/json writes for
// request; answers are read by a scanner for flat objects of known keys,
// which hands anything else (escapes, non-ASCII, null, unknown or
// differently cased keys, numbers that are not plain integers) to
// encoding/json, so every line means exactly what json.Unmarshal makes
// of it.

// appendRequest appends r as json.Marshal(r) does, and a newline.
func appendRequest(b []byte, r request) []byte {
	b = strconv.AppendInt(append(b, `{"id":`...), r.ID, 10)
	b = appendString(append(b, `,"op":`...), r.Op)
	if r.Key != "" {
		b = appendString(append(b, `,"key":`...), r.Key)
	}
	if r.Lease != 0 {
		b = strconv.AppendInt(append(b, `,"lease":`...), r.Lease, 10)
	}
	if r.TimeoutMS != 0 {
		b = strconv.AppendInt(append(b, `,"timeout_ms":`...), r.TimeoutMS, 10)
	}
	return append(b, '}', '\n')
}

// appendString appends s as encoding/json does: as it is when no byte
// needs escaping, else through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plain(s[i]) {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// plain reports a byte that stands for itself inside a JSON string, in
// both directions: printable ASCII that encoding/json neither escapes
// (<, > and & it does) nor must unescape.
func plain(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// decodeMessage reads one line into m as json.Unmarshal does.
func decodeMessage(line []byte, m *message) error {
	if fastMessage(line, m) {
		return nil
	}
	*m = message{}
	return json.Unmarshal(line, m)
}

// fastMessage decodes the common shapes: a flat object whose keys are
// message's own, each once, with plain strings and integers. It reports
// false, leaving m to be reset, for anything else.
func fastMessage(line []byte, m *message) bool {
	*m = message{}
	s := scanner{b: line}
	if !s.byte('{') {
		return false
	}
	var seen uint16
	if s.byte('}') {
		return s.end()
	}
	for {
		key, ok := s.str()
		if !ok || !s.byte(':') {
			return false
		}
		var bit uint16
		switch key {
		case "hello":
			bit, ok = 1<<0, s.strInto(&m.Hello)
		case "version":
			var n int64
			n, ok = s.int(strconv.IntSize)
			bit, m.Version = 1<<1, int(n)
		case "name":
			bit, ok = 1<<2, s.strInto(&m.Name)
		case "id":
			bit = 1 << 3
			m.ID, ok = s.intRef()
		case "result":
			bit, ok = 1<<4, s.strInto(&m.Result)
		case "lease":
			bit = 1 << 5
			m.Lease, ok = s.int(64)
		case "token":
			bit, ok = 1<<6, s.strInto(&m.Token)
		case "fence":
			bit = 1 << 7
			m.Fence, ok = s.uint()
		case "error":
			bit, ok = 1<<8, s.strInto(&m.Error)
		case "lost":
			bit = 1 << 9
			m.Lost, ok = s.intRef()
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.byte(',') {
			continue
		}
		return s.byte('}') && s.end()
	}
}

// scanner walks a line; every method skips the whitespace before what it
// reads.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// byte consumes c if it comes next.
func (s *scanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// intRef reads an int64 for a field whose absence the message must tell
// apart from zero (an answer's id, a lost notice's lease).
func (s *scanner) intRef() (*int64, bool) {
	n, ok := s.int(64)
	return &n, ok
}

// end reports whether nothing but whitespace is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// str reads a string of plain bytes (no escapes), without copying.
func (s *scanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) && s.b[s.i] != '"' {
		if c := s.b[s.i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
		s.i++
	}
	if s.i == len(s.b) {
		return "", false
	}
	s.i++
	return string(s.b[start : s.i-1]), true
}

func (s *scanner) strInto(v *string) bool {
	str, ok := s.str()
	*v = str
	return ok
}

// digits reads a JSON integer's text: an optional minus, then 0 or a
// digit 1-9 and more digits; no fraction or exponent.
func (s *scanner) digits(minus bool) ([]byte, bool) {
	s.space()
	start := s.i
	if minus && s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	first := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - first
	if n == 0 || (n > 1 && s.b[first] == '0') {
		return nil, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *scanner) int(bits int) (int64, bool) {
	d, ok := s.digits(true)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(d), 10, bits)
	return n, err == nil
}

func (s *scanner) uint() (uint64, bool) {
	d, ok := s.digits(false)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d), 10, 64)
	return n, err == nil
}
