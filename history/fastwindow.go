package history

import (
	"strconv"
	"time"

	"github.com/lockchaos/lockchaos/internal/jsonl"
)

// The fast parser's readers of a window's payloads (window.go): the
// fields each payload's JSON tags name, each read as encoding/json reads
// it; anything else goes to the strict decoder.

func (p *lineParser) hitField(name []byte, h *Hit) (bit uint64, ok bool) {
	s := &p.s
	switch string(name) {
	case "pods":
		if s.Null() {
			return 1 << 0, true
		}
		h.Pods = []int{}
		return 1 << 0, s.Array(func() bool {
			n, ok := s.Int(strconv.IntSize)
			h.Pods = append(h.Pods, int(n))
			return ok
		})
	case "nodes":
		return 1 << 1, p.strings(&h.Nodes)
	case "direction":
		h.Direction, ok = p.common()
		return 1 << 2, ok
	case "stops_holder":
		h.StopsHolder, ok = s.Bool()
		return 1 << 3, ok
	case "abandons":
		h.Abandons, ok = s.Bool()
		return 1 << 4, ok
	case "delay_ns":
		return 1 << 5, p.duration(&h.Delay)
	case "jump_ns":
		return 1 << 6, p.duration(&h.Jump)
	case "bare_majority":
		h.BareMajority, ok = s.Bool()
		return 1 << 7, ok
	case "restart_ns":
		return 1 << 8, p.duration(&h.Restart)
	case "down":
		return 1 << 9, p.strings(&h.Down)
	case "links":
		return 1 << 10, p.strings(&h.Links)
	}
	return 0, false
}

func (p *lineParser) duration(d *time.Duration) bool {
	n, ok := p.s.Int(64)
	*d = time.Duration(n)
	return ok
}

func (p *lineParser) judgedField(name []byte, j *Judged) (bit uint64, ok bool) {
	s := &p.s
	switch string(name) {
	case "window":
		j.Window, ok = s.Int(64)
		return 1 << 0, ok
	case "exercised":
		j.Exercised, ok = s.Bool()
		return 1 << 1, ok
	case "lease":
		j.Lease, ok = p.common()
		return 1 << 2, ok
	case "detail":
		j.Detail, ok = s.String()
		return 1 << 3, ok
	}
	return 0, false
}

func (p *lineParser) probedField(name []byte, o *Probed) (bit uint64, ok bool) {
	s := &p.s
	switch string(name) {
	case "node":
		o.Node, ok = p.common()
		return 1 << 0, ok
	case "exists":
		o.Exists, ok = s.Bool()
		return 1 << 1, ok
	case "value":
		o.Value, ok = s.String()
		return 1 << 2, ok
	}
	return 0, false
}

func (p *lineParser) actField(name []byte, a *ServerAct) (bit uint64, ok bool) {
	s := &p.s
	switch string(name) {
	case "node":
		a.Node, ok = p.common()
		return 1 << 0, ok
	case "server_key":
		a.ServerKey, ok = p.common()
		return 1 << 1, ok
	case "act":
		a.Act, ok = p.common()
		return 1 << 2, ok
	case "deadline":
		a.Deadline, ok = s.Int(64)
		return 1 << 3, ok
	case "revision":
		a.Revision, ok = s.Int(64)
		return 1 << 4, ok
	case "lease":
		a.Lease, ok = p.common()
		return 1 << 5, ok
	}
	return 0, false
}

// appendWindow appends l's payload as json.Marshal writes it (the fields
// in the order of their structs, empty ones left out).
func appendWindow(b []byte, w *Window) []byte {
	if w == nil {
		return b
	}
	b = jsonl.StringOmitEmpty(b, `,"fault":`, w.Fault)
	if h := w.Hit; h != nil {
		b = append(b, `,"hit":{`...)
		n := len(b)
		b = jsonl.Ints(b, `,"pods":`, h.Pods)
		b = jsonl.Strings(b, `,"nodes":`, h.Nodes)
		b = jsonl.StringOmitEmpty(b, `,"direction":`, h.Direction)
		b = jsonl.BoolOmitEmpty(b, `,"stops_holder":`, h.StopsHolder)
		b = jsonl.BoolOmitEmpty(b, `,"abandons":`, h.Abandons)
		b = jsonl.IntOmitEmpty(b, `,"delay_ns":`, int64(h.Delay))
		b = jsonl.IntOmitEmpty(b, `,"jump_ns":`, int64(h.Jump))
		b = jsonl.BoolOmitEmpty(b, `,"bare_majority":`, h.BareMajority)
		b = jsonl.IntOmitEmpty(b, `,"restart_ns":`, int64(h.Restart))
		b = jsonl.Strings(b, `,"down":`, h.Down)
		b = jsonl.Strings(b, `,"links":`, h.Links)
		b = closeObject(b, n)
	}
	if j := w.Judgment; j != nil {
		b = jsonl.Int(b, `,"judgment":{"window":`, j.Window)
		b = jsonl.BoolOmitEmpty(b, `,"exercised":`, j.Exercised)
		b = jsonl.StringOmitEmpty(b, `,"lease":`, j.Lease)
		b = append(jsonl.StringOmitEmpty(b, `,"detail":`, j.Detail), '}')
	}
	if o := w.Probe; o != nil {
		b = jsonl.String(b, `,"probe":{"node":`, o.Node)
		b = jsonl.BoolOmitEmpty(b, `,"exists":`, o.Exists)
		b = append(jsonl.StringOmitEmpty(b, `,"value":`, o.Value), '}')
	}
	if a := w.Witness; a != nil {
		b = jsonl.String(b, `,"witness":{"node":`, a.Node)
		b = jsonl.StringOmitEmpty(b, `,"server_key":`, a.ServerKey)
		b = jsonl.String(b, `,"act":`, a.Act)
		b = jsonl.IntOmitEmpty(b, `,"deadline":`, a.Deadline)
		b = jsonl.IntOmitEmpty(b, `,"revision":`, a.Revision)
		b = append(jsonl.StringOmitEmpty(b, `,"lease":`, a.Lease), '}')
	}
	return b
}

// closeObject ends an object whose fields were appended from n on, each
// after a comma: the first comma goes.
func closeObject(b []byte, n int) []byte {
	if len(b) > n {
		b = append(b[:n], b[n+1:]...)
	}
	return append(b, '}')
}
