package drivers

import (
	"encoding/json"
	"strconv"

	"github.com/lockchaos/lockchaos/internal/jsonl"
)

// The protocol's lines have a few fixed, flat shapes, and a cycle sends
// two requests and reads two answers: encoding/json's reflection costs
// microseconds per line, on the cores the proxies and the drivers need.
// Requests are built by hand, byte for byte what encoding/json writes for
// request; answers are read by a jsonl.Scanner for flat objects of known
// keys, which hands anything else (null, unknown or differently cased
// keys, a key given twice, numbers that are not plain integers, invalid
// UTF-8) to encoding/json, so every line means exactly what json.Unmarshal
// makes of it.

// appendRequest appends r as json.Marshal(r) does, and a newline.
func appendRequest(b []byte, r request) []byte {
	b = jsonl.Int(b, `{"id":`, r.ID)
	b = jsonl.String(b, `,"op":`, r.Op)
	b = jsonl.StringOmitEmpty(b, `,"key":`, r.Key)
	b = jsonl.IntOmitEmpty(b, `,"lease":`, r.Lease)
	b = jsonl.IntOmitEmpty(b, `,"timeout_ms":`, r.TimeoutMS)
	return append(b, '}', '\n')
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
// message's own, each once, with strings and integers. It reports false,
// leaving m to be reset, for anything else.
func fastMessage(line []byte, m *message) bool {
	*m = message{}
	var s jsonl.Scanner
	s.Reset(line)
	if !s.Eat('{') {
		return false
	}
	if s.Eat('}') {
		return s.End()
	}
	var seen uint16
	for {
		key, ok := s.Key()
		if !ok {
			return false
		}
		var bit uint16
		switch string(key) {
		case "hello":
			bit = 1 << 0
			m.Hello, ok = s.String()
		case "version":
			var n int64
			n, ok = s.Int(strconv.IntSize)
			bit, m.Version = 1<<1, int(n)
		case "name":
			bit = 1 << 2
			m.Name, ok = s.String()
		case "id":
			bit = 1 << 3
			m.ID, ok = intRef(&s)
		case "result":
			bit = 1 << 4
			m.Result, ok = s.String()
		case "lease":
			bit = 1 << 5
			m.Lease, ok = s.Int(64)
		case "token":
			bit = 1 << 6
			m.Token, ok = s.String()
		case "fence":
			bit = 1 << 7
			m.Fence, ok = s.Uint(64)
		case "error":
			bit = 1 << 8
			m.Error, ok = s.String()
		case "lost":
			bit = 1 << 9
			m.Lost, ok = intRef(&s)
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.Eat(',') {
			continue
		}
		return s.Eat('}') && s.End()
	}
}

// intRef reads an int64 for a field whose absence the message must tell
// apart from zero (an answer's id, a lost notice's lease).
func intRef(s *jsonl.Scanner) (*int64, bool) {
	n, ok := s.Int(64)
	return &n, ok
}
