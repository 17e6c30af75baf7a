package drivers

import (
	"encoding/json"
	"errors"
	"fmt"
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

// The requests' ops and the answers' results.
const (
	opAcquire     = "acquire"
	opRelease     = "release"
	resultOK      = "ok"
	resultRefused = "refused"
	resultError   = "error"
)

// request is a line the harness writes. A release always carries its
// lease, 0 included; an acquire never does.
type request struct {
	ID        int64  `json:"id"`
	Op        string `json:"op"`
	Key       string `json:"key,omitempty"`
	Lease     *int64 `json:"lease,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
}

// message is any line a driver writes. ID, Lease and Lost are pointers:
// their absence is not 0.
type message struct {
	Hello   string `json:"hello"`
	Version int    `json:"version"`
	Name    string `json:"name"`
	ID      *int64 `json:"id"`
	Result  string `json:"result"`
	Lease   *int64 `json:"lease"`
	Token   string `json:"token"`
	Fence   uint64 `json:"fence"`
	Error   string `json:"error"`
	Lost    *int64 `json:"lost"`
}

// appendRequest appends r as json.Marshal(r) does, and a newline.
func appendRequest(b []byte, r request) []byte {
	b = jsonl.Int(b, `{"id":`, r.ID)
	b = jsonl.String(b, `,"op":`, r.Op)
	b = jsonl.StringOmitEmpty(b, `,"key":`, r.Key)
	if r.Lease != nil {
		b = jsonl.Int(b, `,"lease":`, *r.Lease)
	}
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
	return s.Object(func(key []byte) (bit uint64, ok bool) { return messageField(&s, key, m) }) && s.End()
}

// messageField reads the value of m's field named key and returns its bit
// (0: not one of message's).
func messageField(s *jsonl.Scanner, key []byte, m *message) (bit uint64, ok bool) {
	switch string(key) {
	case "hello":
		m.Hello, ok = s.String()
		return 1 << 0, ok
	case "version":
		var n int64
		n, ok = s.Int(strconv.IntSize)
		m.Version = int(n)
		return 1 << 1, ok
	case "name":
		m.Name, ok = s.String()
		return 1 << 2, ok
	case "id":
		m.ID, ok = intRef(s)
		return 1 << 3, ok
	case "result":
		m.Result, ok = s.String()
		return 1 << 4, ok
	case "lease":
		m.Lease, ok = intRef(s)
		return 1 << 5, ok
	case "token":
		m.Token, ok = s.String()
		return 1 << 6, ok
	case "fence":
		m.Fence, ok = s.Uint(64)
		return 1 << 7, ok
	case "error":
		m.Error, ok = s.String()
		return 1 << 8, ok
	case "lost":
		m.Lost, ok = intRef(s)
		return 1 << 9, ok
	}
	return 0, false
}

// intRef reads an int64 for a field whose absence the message must tell
// apart from zero (an answer's id and lease, a lost notice's lease).
func intRef(s *jsonl.Scanner) (*int64, bool) {
	n, ok := s.Int(64)
	return &n, ok
}

// whatIsWrong says why line, which decodeMessage made m of (or failed to,
// with err), is no protocol message: not JSON, a field of the wrong type,
// a missing or null id.
func whatIsWrong(line []byte, m *message, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax) || (err != nil && !json.Valid(line)):
		return fmt.Sprintf("it is not JSON: %v", err)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("it is a JSON %s, want an object", typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("its %q is a JSON %s, want %s", typ.Field, typ.Value, wantType(typ.Field))
	case err != nil:
		return err.Error()
	case m.ID != nil || m.Lost != nil:
		return ""
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(line, &fields)
	if v, ok := fields["id"]; ok && string(v) == "null" {
		return "its id is null; an answer carries the id of the request it answers"
	}
	return `it has no id, which an answer carries, and is no {"lost": LEASE} notice`
}

func wantType(field string) string {
	switch field {
	case "id", "lease", "lost", "version":
		return "an integer"
	case "fence":
		return "an integer from 0 to 2^64-1"
	}
	return "a string"
}
