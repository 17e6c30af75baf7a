package netfault

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Direction says which way a toxic acts on a link.
type Direction string

// Directions. Upstream is client to Redis (requests), Downstream is Redis to
// client (replies).
const (
	Upstream   Direction = "upstream"
	Downstream Direction = "downstream"
	Both       Direction = "both"
)

// Streams returns the streams d covers ("" and Both: both), or an error
// naming the valid directions.
func (d Direction) Streams() ([]string, error) {
	switch d {
	case Upstream, Downstream:
		return []string{string(d)}, nil
	case Both, "":
		return []string{string(Upstream), string(Downstream)}, nil
	}
	return nil, fmt.Errorf("%w: direction %q (valid: upstream, downstream, both)", ErrInvalidConfig, string(d))
}

// Link is one path from one client to one node (or a replica's path to its
// primary) and the faults on it. Every fault on it is undone by Heal. What
// carries the bytes is its Wire: an embedded toxiproxy proxy on a real
// network, an in-memory pipe in the simulation; the fault vocabulary is
// the same for both.
type Link struct {
	name string
	wire Wire
	addr string

	mu       sync.Mutex
	upstream string
	enabled  bool
	toxics   map[string]Toxic // name -> toxic, as set
}

// Wire carries a link's bytes and applies its toxics. Toxics apply to open
// connections too; removing a silent one (timeout) closes the connections
// it held, as toxiproxy does.
type Wire interface {
	AddToxic(name string, t Toxic) error
	RemoveToxic(name string)
	ResetToxics()
	// Stop closes every open connection and refuses new ones; Start
	// accepts them again on the same address.
	Stop()
	Start() error
	// Repoint forwards to a new upstream; open connections close.
	Repoint(upstream string) error
}

// ToxicKind is a kind of toxic, in toxiproxy's vocabulary (its type
// names): a wire switches on these, never on strings.
type ToxicKind string

// The toxic kinds a link sets.
const (
	// LatencyToxic delays each chunk by Latency ± Jitter.
	LatencyToxic ToxicKind = "latency"
	// TimeoutToxic drops data silently: the quiet partition.
	TimeoutToxic ToxicKind = "timeout"
	// ResetPeerToxic resets the connection when data arrives.
	ResetPeerToxic ToxicKind = "reset_peer"
)

// ToxicName is the name a link gives the toxic of kind k on stream s (as
// Toxics lists it): one per kind and stream, so a second one replaces it.
func ToxicName(k ToxicKind, s Direction) string { return string(k) + "_" + string(s) }

// Toxic is one fault on one stream of a link.
type Toxic struct {
	Kind            ToxicKind
	Stream          Direction // Upstream or Downstream
	Latency, Jitter time.Duration
}

// NewLink returns a link named name that clients reach at addr, carried by
// w to upstream. Networks call it; the link starts enabled and healthy.
func NewLink(name, addr, upstream string, w Wire) *Link {
	return &Link{name: name, wire: w, addr: addr, upstream: upstream, enabled: true, toxics: map[string]Toxic{}}
}

// Name returns the link's name, e.g. "client3->node1".
func (l *Link) Name() string { return l.name }

// Addr returns the link's address: what clients dial.
func (l *Link) Addr() string { return l.addr }

// Upstream returns the address the link forwards to.
func (l *Link) Upstream() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.upstream
}

// Latency delays data in the given direction by latency ± jitter. It applies
// to open connections too. Calling it again replaces the earlier latency.
func (l *Link) Latency(dir Direction, latency, jitter time.Duration) error {
	if latency < 0 || jitter < 0 {
		return fmt.Errorf("%w: negative latency %v or jitter %v", ErrInvalidConfig, latency, jitter)
	}
	return l.setToxic(Toxic{Kind: LatencyToxic, Latency: latency, Jitter: jitter}, dir)
}

// Blackhole silently drops data in the given direction: connections stay
// open and calls hang until their own timeouts (a `timeout` toxic with 0).
// This is the quiet partition: nobody is told.
func (l *Link) Blackhole(dir Direction) error {
	return l.setToxic(Toxic{Kind: TimeoutToxic}, dir)
}

// Reset makes every connection that sends data get a TCP RST, until Heal.
func (l *Link) Reset() error {
	return l.setToxic(Toxic{Kind: ResetPeerToxic}, Upstream)
}

// Disable stops the link: open connections are closed and new ones are
// refused. This is the loud partition: clients see errors at once.
func (l *Link) Disable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wire.Stop()
	l.enabled = false
	return nil
}

// Enable starts a disabled link again on the same address.
func (l *Link) Enable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.enabled {
		return nil
	}
	if err := l.wire.Start(); err != nil {
		return fmt.Errorf("netfault: link %s: enable: %w", l.name, err)
	}
	l.enabled = true
	return nil
}

// Heal removes every toxic and re-enables the link. Removing a blackhole
// closes the connections it held (toxiproxy's timeout toxic does so on
// cleanup); clients then reconnect.
func (l *Link) Heal() error {
	l.wire.ResetToxics()
	l.mu.Lock()
	clear(l.toxics)
	l.mu.Unlock()
	return l.Enable()
}

// Repoint makes the link forward to a new upstream (a failover moving the
// service address to the promoted replica). Open connections are closed, as
// when a virtual IP moves.
func (l *Link) Repoint(upstream string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.wire.Repoint(upstream); err != nil {
		return fmt.Errorf("netfault: link %s: repoint to %s: %w", l.name, upstream, err)
	}
	l.upstream = upstream
	return nil
}

// Toxics lists the names of the toxics active on the link, sorted.
func (l *Link) Toxics() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.toxics))
	for name := range l.toxics {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func (l *Link) setToxic(t Toxic, dir Direction) error {
	streams, err := dir.Streams()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range streams {
		t.Stream = Direction(s)
		name := ToxicName(t.Kind, t.Stream)
		if old, ok := l.toxics[name]; ok && old == t {
			// Already so: removing and re-adding would flush the data a
			// latency toxic holds back.
			continue
		}
		// Replace rather than stack: a second Latency call means "now this much".
		l.wire.RemoveToxic(name)
		delete(l.toxics, name)
		if err := l.wire.AddToxic(name, t); err != nil {
			return fmt.Errorf("netfault: link %s: add %s: %w", l.name, name, err)
		}
		l.toxics[name] = t
	}
	return nil
}
