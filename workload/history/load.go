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
	return Load(f, path)
}

// Load reads a history from r; name is used in error messages.
func Load(r io.Reader, name string) (*History, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	bad := func(n int, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrMalformed, name, n, fmt.Sprintf(format, args...))
	}
	h := &History{}
	byID := map[int64]int{}
	// inFlight is each client's operation without a return yet, and the
	// line that called it: a client does one thing at a time (a lock's
	// background renewals and instants such as lost signals aside).
	type flight struct {
		op   int64
		line int
	}
	inFlight := map[int]flight{}
	var l line
	interned := map[string]string{}
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			if err := decodeStrict(raw, &h.Header); err != nil {
				return nil, bad(n, "header: %v", err)
			}
			if h.Header.Format != FormatVersion && h.Header.Format != 1 {
				return nil, bad(n, "header: format %d, this lockchaos reads formats 1 and %d", h.Header.Format, FormatVersion)
			}
			continue
		}
		if len(raw) == 0 {
			continue
		}
		if err := parseLine(raw, &l, interned); err != nil {
			if err := decodeStrict(raw, &l); err != nil {
				return nil, bad(n, "%v", err)
			}
		}
		if l.T < 0 {
			return nil, bad(n, "negative time %d", l.T)
		}
		if l.T > h.End {
			h.End = l.T
		}
		switch l.Phase {
		case phaseCall, phasePoint:
			if _, dup := byID[l.Op]; dup {
				return nil, bad(n, "op %d invoked twice", l.Op)
			}
			e := Event{ID: l.Op, Kind: l.Kind, Client: l.Client, Key: l.Key, Token: l.Token, Fence: l.Fence,
				Call: l.T, Return: l.T, Fault: l.Fault, Targets: l.Targets, Detail: l.Detail, Outcome: Indefinite, Open: true}
			if l.Value != nil {
				e.Value = *l.Value
			}
			if l.Phase == phasePoint {
				e.Open, e.Outcome, e.Err = false, l.Outcome, l.Err
				if e.Outcome == "" {
					e.Outcome = Ok
				}
			}
			if err := e.Validate(); err != nil {
				return nil, bad(n, "op %d: %v", l.Op, err)
			}
			if foreground(e.Kind) && l.Phase == phaseCall {
				if f, busy := inFlight[e.Client]; busy {
					return nil, bad(n, "client %d calls op %d while its op %d (line %d) is still in flight: a client does one operation at a time", e.Client, l.Op, f.op, f.line)
				}
				inFlight[e.Client] = flight{op: l.Op, line: n}
			}
			byID[l.Op] = len(h.Events)
			h.Events = append(h.Events, e)
		case phaseReturn:
			i, ok := byID[l.Op]
			if !ok {
				return nil, bad(n, "return for op %d that was never invoked", l.Op)
			}
			e := &h.Events[i]
			if !e.Open {
				return nil, bad(n, "op %d returned twice", l.Op)
			}
			if f, ok := inFlight[e.Client]; ok && f.op == l.Op {
				delete(inFlight, e.Client)
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
				return nil, bad(n, "op %d: %v", l.Op, err)
			}
		default:
			return nil, bad(n, "unknown phase %q (want call, return or point)", l.Phase)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, bad(n+1, "line longer than %d bytes", maxLine)
		}
		return nil, fmt.Errorf("history: %s: %w", name, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: %s: empty file (no header line)", ErrMalformed, name)
	}
	for i := range h.Events {
		if h.Events[i].Open {
			h.Events[i].Return = h.End
			h.Events[i].Err = "no return recorded"
		}
	}
	return h, nil
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
