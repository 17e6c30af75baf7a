package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/lockchaos/lockchaos/internal/jsonl"
	"github.com/lockchaos/lockchaos/internal/safefile"
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
	b = jsonl.Int(b, `{"op":`, l.Op)
	b = jsonl.String(b, `,"phase":`, l.Phase)
	b = jsonl.Int(b, `,"t":`, l.T)
	if l.Kind != 0 {
		b = jsonl.String(b, `,"kind":`, kindNames[l.Kind])
	}
	b = jsonl.Int(b, `,"client":`, int64(l.Client))
	b = jsonl.StringOmitEmpty(b, `,"key":`, l.Key)
	b = jsonl.StringOmitEmpty(b, `,"token":`, l.Token)
	b = jsonl.UintOmitEmpty(b, `,"fence":`, l.Fence)
	if l.Value != nil {
		b = jsonl.Int(b, `,"value":`, *l.Value)
	}
	if l.Outcome != 0 {
		b = jsonl.String(b, `,"outcome":`, outcomeNames[l.Outcome])
	}
	b = jsonl.StringOmitEmpty(b, `,"error":`, l.Err)
	b = appendWindow(b, l.Window)
	b = jsonl.Strings(b, `,"targets":`, l.Targets)
	b = jsonl.StringOmitEmpty(b, `,"detail":`, l.Detail)
	return append(b, '}'), true
}

// WriteFile writes a whole history (for example a generated or filtered
// one) in the same format a Recorder writes, so LoadFile reads it back.
func WriteFile(path string, h *History) error {
	f, err := safefile.Create(path)
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
		ls = append(ls, timed{e.Call, false, callLine(&e, phaseCall)})
		if !e.Open {
			r := line{Op: e.ID, Phase: phaseReturn, T: e.Return, Client: e.Client, Outcome: e.Outcome, Token: e.Token,
				Fence: e.Fence, Err: e.Err}
			r.Value = callLine(&e, phaseReturn).Value
			ls = append(ls, timed{e.Return, true, r})
		}
	}
	// Lines in time order, as a recorder would have written them; at
	// equal times in the order of the events' ids (a client's return
	// before its next call, each call before its own return): in virtual
	// time a return and the next call often share their instant.
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].t < ls[j].t })
	for _, l := range ls {
		_ = enc.Encode(l.l)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("history: %w", err)
	}
	return f.Close()
}
