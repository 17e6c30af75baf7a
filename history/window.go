package history

import (
	"fmt"
	"slices"
	"time"
)

// Window is the part of an event only fault windows, judgments, probes
// and witness events carry; nil on operations, so a million of them do
// not each carry its bytes. It is a tagged union: the event's Kind says
// which payload is set, and each payload has typed fields, so nothing
// reads a prefix out of a string. A new fault kind or lock service that
// must say more adds a field to its payload (or a payload of its own
// here), never a word convention in a string.
type Window struct {
	// Fault is the fault kind's name (Fault and Exercised events).
	Fault string `json:"fault,omitempty"`
	// Hit is what a fault window hit (Fault events; an Exercised event
	// repeats its window's).
	Hit *Hit `json:"hit,omitempty"`
	// Judgment is an Exercised event's verdict on its window.
	Judgment *Judged `json:"judgment,omitempty"`
	// Probe is what a fault observed on a node (Probe events).
	Probe *Probed `json:"probe,omitempty"`
	// Witness is what a server did to a lock key (Witness events).
	Witness *ServerAct `json:"witness,omitempty"`
}

// Hit is what one fault window hit and how: the pods, nodes and links it
// acted on, what it means for the lock's liveness, and the magnitudes a
// dangerous moment or a report reads. Every field is optional; a kind
// fills in what it did.
type Hit struct {
	// Pods are the pods it acted on.
	Pods []int `json:"pods,omitempty"`
	// Nodes are the nodes it acted on, the one it aimed at first (a
	// failover: the old primary, then the replica it promoted).
	Nodes []string `json:"nodes,omitempty"`
	// Direction is a partition's direction (netfault.Direction's word).
	Direction string `json:"direction,omitempty"`
	// StopsHolder says that after the window's start its pod (Pods[0])
	// can no longer release the lock it held then (a crash, a hung
	// worker, a partition): deadlock-free is judged from the window's
	// start.
	StopsHolder bool `json:"stops_holder,omitempty"`
	// Abandons says a StopsHolder window stops its pod through an Abandon
	// event (a crash, a hang): deadlock-free is judged from that event,
	// for the hold it abandoned, which may begin after the window opened.
	Abandons bool `json:"abandons,omitempty"`
	// Delay is how long replies were held back (slow-reply).
	Delay time.Duration `json:"delay_ns,omitempty"`
	// Jump is how far a node's clock moved (clock faults).
	Jump time.Duration `json:"jump_ns,omitempty"`
	// BareMajority says the jumped node was one of a holder's bare
	// majority of a quorum lock's nodes.
	BareMajority bool `json:"bare_majority,omitempty"`
	// Restart is how long a crashed pod stayed dead before it restarted
	// (0: it did not).
	Restart time.Duration `json:"restart_ns,omitempty"`
	// Down are the lock nodes taken from every pod for the window
	// (killed, or cut off from all): fault-tolerant is judged while a
	// majority of the lock's nodes is still up.
	Down []string `json:"down,omitempty"`
	// Links are the links it acted on, by name ("client0->node1").
	Links []string `json:"links,omitempty"`
}

// Words says what a window hit as a list a person reads ("client1",
// "stops-holder", "restart=1s", "down=node0", ...): the words formats 1
// to 4 stored, for reports and sentences.
func (h Hit) Words() []string {
	var out []string
	for _, p := range h.Pods {
		out = append(out, fmt.Sprintf("client%d", p))
	}
	out = append(out, h.Nodes...)
	if h.Direction != "" {
		out = append(out, "direction="+h.Direction)
	}
	if h.StopsHolder {
		out = append(out, wordStopsHolder)
	}
	if h.Abandons {
		out = append(out, wordAbandons)
	}
	if h.Delay != 0 {
		out = append(out, wordDelay+h.Delay.String())
	}
	if h.Jump != 0 {
		out = append(out, wordJump+h.Jump.String())
	}
	if h.BareMajority {
		out = append(out, wordBareMajority)
	}
	if h.Restart != 0 {
		out = append(out, wordRestart+h.Restart.String())
	}
	for _, n := range h.Down {
		out = append(out, wordDown+n)
	}
	return append(out, h.Links...)
}

// Node is the node a window aimed at ("" when it aimed at none).
func (h Hit) Node() string {
	if len(h.Nodes) == 0 {
		return ""
	}
	return h.Nodes[0]
}

func (h Hit) empty() bool {
	return len(h.Pods) == 0 && len(h.Nodes) == 0 && h.Direction == "" && !h.StopsHolder && !h.Abandons &&
		h.Delay == 0 && h.Jump == 0 && !h.BareMajority && h.Restart == 0 && len(h.Down) == 0 && len(h.Links) == 0
}

// Judged is an Exercised event's verdict on one fault window (the
// history.Judgment it was written from, less what the event holds).
type Judged struct {
	// Window is the judged fault window's op id.
	Window int64 `json:"window"`
	// Exercised says the window reached its kind's dangerous moment.
	Exercised bool `json:"exercised,omitempty"`
	// Lease says where the lease end the verdict rests on came from:
	// LeaseObserved, LeaseAssumed, or "" (no lease's end mattered).
	Lease string `json:"lease,omitempty"`
	// Detail says what happened, in words.
	Detail string `json:"detail,omitempty"`
}

// Probed is what a fault observed on a node: whether the event's key
// exists there, and its value.
type Probed struct {
	Node   string `json:"node"`
	Exists bool   `json:"exists,omitempty"`
	Value  string `json:"value,omitempty"`
}

// ServerAct is what a server did to a lock key, as the witness on its
// node saw it; the event's Key is the workload's key and its Token the
// value on the server.
type ServerAct struct {
	Node string `json:"node"`
	// ServerKey is the server's own name for the key, when it is not the
	// workload's (a prefix, a hash tag, a library's numbering).
	ServerKey string `json:"server_key,omitempty"`
	// Act is the server's act (ServerSet, ...), what the witness found on
	// connecting (ServerPresent, ServerAbsent) or its own sight of the
	// node (WitnessBlind, WitnessWatches).
	Act string `json:"act"`
	// Deadline is the key's deadline on the history's clock (0: none).
	Deadline int64 `json:"deadline,omitempty"`
	// Revision is the store's revision of the act (etcd: every write has
	// one, in the order the members applied them; 0: Redis has none).
	Revision int64 `json:"revision,omitempty"`
	// Lease is the etcd lease the key was written with, in hex ("" none).
	Lease string `json:"lease,omitempty"`
}

// FaultWindow returns the payload of a fault window of kind fault.
func FaultWindow(fault string, hit Hit) *Window {
	w := &Window{Fault: fault}
	if !hit.empty() {
		w.Hit = &hit
	}
	return w
}

// ProbeWindow returns the payload of a probe of node.
func ProbeWindow(node string, exists bool, value string) *Window {
	return &Window{Probe: &Probed{Node: node, Exists: exists, Value: value}}
}

// WitnessWindow returns the payload of a witness event.
func WitnessWindow(a ServerAct) *Window { return &Window{Witness: &a} }

// Fault is the fault's name ("" for operations).
func (e Event) Fault() string {
	if e.Window == nil {
		return ""
	}
	return e.Window.Fault
}

// Hit is what a fault window (or the window a judgment judged) hit; zero
// for other events.
func (e Event) Hit() Hit {
	if e.Window == nil || e.Window.Hit == nil {
		return Hit{}
	}
	return *e.Window.Hit
}

// Judged is an Exercised event's verdict; zero for other events.
func (e Event) Judged() Judged {
	if e.Window == nil || e.Window.Judgment == nil {
		return Judged{}
	}
	return *e.Window.Judgment
}

// Probed is a probe's observation; zero for other events.
func (e Event) Probed() Probed {
	if e.Window == nil || e.Window.Probe == nil {
		return Probed{}
	}
	return *e.Window.Probe
}

// ServerAct is a witness event's act; zero for other events.
func (e Event) ServerAct() ServerAct {
	if e.Window == nil || e.Window.Witness == nil {
		return ServerAct{}
	}
	return *e.Window.Witness
}

// Detail is a judgment's sentence ("" for other events).
func (e Event) Detail() string { return e.Judged().Detail }

// StoppedHolder returns the pod a StopsHolder window stopped.
func (e Event) StoppedHolder() (int, bool) {
	if e.Kind != Fault || e.Window == nil || e.Window.Hit == nil {
		return 0, false
	}
	if h := e.Window.Hit; h.StopsHolder && len(h.Pods) > 0 {
		return h.Pods[0], true
	}
	return 0, false
}

// DownNodes returns the lock nodes a window took from every pod.
func (e Event) DownNodes() []string { return e.Hit().Down }

// Clone is a deep copy of w, for a caller that keeps an event past the
// chunk a reader may reuse.
func (w *Window) Clone() *Window {
	if w == nil {
		return nil
	}
	c := *w
	if w.Hit != nil {
		h := *w.Hit
		h.Pods, h.Nodes = slices.Clone(h.Pods), slices.Clone(h.Nodes)
		h.Down, h.Links = slices.Clone(h.Down), slices.Clone(h.Links)
		c.Hit = &h
	}
	if w.Judgment != nil {
		j := *w.Judgment
		c.Judgment = &j
	}
	if w.Probe != nil {
		p := *w.Probe
		c.Probe = &p
	}
	if w.Witness != nil {
		a := *w.Witness
		c.Witness = &a
	}
	return &c
}
