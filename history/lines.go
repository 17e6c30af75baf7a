package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
)

// appendLine appends l as json.Marshal encodes it (same fields, order,
// omissions and escaping; TestAppendLineIsJSONMarshal compares them), at
// a fraction of its cost: a cell writes a line per call and per return.
// ok false for what it leaves to json.Marshal: a kind or outcome with no
// name (Marshal's error).
func appendLine(b []byte, l line) (_ []byte, ok bool) {
	if l.Kind != 0 && !l.Kind.valid() || l.Outcome != 0 && !l.Outcome.valid() {
		return b, false
	}
	b = append(b, `{"op":`...)
	b = strconv.AppendInt(b, l.Op, 10)
	b = append(b, `,"phase":`...)
	b = appendString(b, l.Phase)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, l.T, 10)
	if l.Kind != 0 {
		b = append(b, `,"kind":`...)
		b = appendString(b, kindNames[l.Kind])
	}
	b = append(b, `,"client":`...)
	b = strconv.AppendInt(b, int64(l.Client), 10)
	b = appendField(b, `,"key":`, l.Key)
	b = appendField(b, `,"token":`, l.Token)
	if l.Fence != 0 {
		b = append(b, `,"fence":`...)
		b = strconv.AppendUint(b, l.Fence, 10)
	}
	if l.Value != nil {
		b = append(b, `,"value":`...)
		b = strconv.AppendInt(b, *l.Value, 10)
	}
	if l.Outcome != 0 {
		b = append(b, `,"outcome":`...)
		b = appendString(b, outcomeNames[l.Outcome])
	}
	b = appendField(b, `,"error":`, l.Err)
	b = appendField(b, `,"fault":`, l.Fault)
	if len(l.Targets) > 0 {
		b = append(b, `,"targets":[`...)
		for i, t := range l.Targets {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, t)
		}
		b = append(b, ']')
	}
	b = appendField(b, `,"detail":`, l.Detail)
	return append(b, '}'), true
}

// appendField appends a string field that omitempty leaves out when "".
func appendField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, name...), s)
}

// appendString appends s as a JSON string: as is when it is printable
// ASCII json.Marshal would not escape, else as json.Marshal writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// WriteFile writes a whole history (for example a generated or filtered
// one) in the same format a Recorder writes, so LoadFile reads it back.
func WriteFile(path string, h *History) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	hd := h.Header
	hd.Format = FormatVersion
	_ = enc.Encode(hd)
	type timed struct {
		t   int64
		ret bool
		l   line
	}
	var ls []timed
	for _, e := range h.Events {
		v := e.Value
		c := line{Op: e.ID, Phase: phaseCall, T: e.Call, Kind: e.Kind, Client: e.Client, Key: e.Key, Token: e.Token,
			Fence: e.Fence, Value: &v, Fault: e.Fault(), Targets: e.Targets(), Detail: e.Detail()}
		ls = append(ls, timed{e.Call, false, c})
		if !e.Open {
			rv := e.Value
			ls = append(ls, timed{e.Return, true, line{Op: e.ID, Phase: phaseReturn, T: e.Return, Client: e.Client,
				Outcome: e.Outcome, Value: &rv, Token: e.Token, Fence: e.Fence, Err: e.Err}})
		}
	}
	// Lines in time order (calls before returns at equal times), as a
	// recorder would have written them.
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].t != ls[j].t {
			return ls[i].t < ls[j].t
		}
		return !ls[i].ret && ls[j].ret
	})
	for _, l := range ls {
		_ = enc.Encode(l.l)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("history: %w", err)
	}
	return f.Close()
}
