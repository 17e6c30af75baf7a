package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// ProxiesConfig configures the embedded toxiproxy. The zero value is usable.
type ProxiesConfig struct {
	// APIAddr, when set, serves toxiproxy's HTTP API there so a long run can
	// be poked with toxiproxy-cli. It must be a loopback address; port 0
	// picks a free one (see Proxies.APIAddr). Default "": no API.
	APIAddr string
}

// Validate reports a config that cannot work.
func (c ProxiesConfig) Validate() error {
	if c.APIAddr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.APIAddr)
	if err != nil {
		return fmt.Errorf("%w: toxiproxy API address %q: %v", ErrInvalidConfig, c.APIAddr, err)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%w: toxiproxy API address %q is not loopback", ErrInvalidConfig, c.APIAddr)
	}
	return nil
}

// Proxies is an embedded toxiproxy server: no separate binary, no log noise.
type Proxies struct {
	srv *toxiproxy.ApiServer

	mu     sync.Mutex
	links  map[string]*Link
	closed bool

	api     *http.Server
	apiAddr string
	apiDone chan struct{}
}

var quietOnce sync.Once

// NewProxies starts an embedded toxiproxy server (and its HTTP API when asked).
func NewProxies(cfg ProxiesConfig) (*Proxies, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// toxiproxy logs through zerolog, partly through loggers it builds from
	// contexts; silencing the global level is the only switch that reaches
	// all of them. The harness has nothing else that logs through zerolog.
	quietOnce.Do(func() { zerolog.SetGlobalLevel(zerolog.Disabled) })
	p := &Proxies{
		srv:   toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		links: map[string]*Link{},
	}
	if cfg.APIAddr != "" {
		l, err := net.Listen("tcp", cfg.APIAddr)
		if err != nil {
			return nil, fmt.Errorf("faults: toxiproxy API on %s: %w", cfg.APIAddr, err)
		}
		p.apiAddr = l.Addr().String()
		p.api = &http.Server{Handler: p.srv.Routes(), ReadHeaderTimeout: 5 * time.Second}
		p.apiDone = make(chan struct{})
		go func() {
			defer close(p.apiDone)
			_ = p.api.Serve(l)
		}()
	}
	return p, nil
}

// APIAddr returns where the toxiproxy HTTP API listens, or "" (also on a
// nil *Proxies: a cell whose links are not toxiproxy's has no API).
func (p *Proxies) APIAddr() string {
	if p == nil {
		return ""
	}
	return p.apiAddr
}

// NewLink starts a proxy on a free loopback port that forwards to upstream.
func (p *Proxies) NewLink(name, upstream string) (*Link, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("link %s: %w", name, ErrClosed)
	}
	if _, dup := p.links[name]; dup {
		return nil, fmt.Errorf("%w: link %q already exists", ErrInvalidConfig, name)
	}
	px := toxiproxy.NewProxy(p.srv, name, "127.0.0.1:0", upstream)
	if err := p.srv.Collection.Add(px, true); err != nil {
		return nil, fmt.Errorf("faults: link %s -> %s: %w", name, upstream, err)
	}
	l := NewLink(name, px.Listen, upstream, proxyWire{px})
	p.links[name] = l
	return l, nil
}

// Links returns every link, in no particular order.
func (p *Proxies) Links() []*Link {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*Link, 0, len(p.links))
	for _, l := range p.links {
		out = append(out, l)
	}
	return out
}

// Close stops every proxy (closing their connections) and the HTTP API.
func (p *Proxies) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	links := make([]*Link, 0, len(p.links))
	for _, l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	// Remove the toxics before stopping: a latency toxic still holding data
	// when its connection is closed can strand toxiproxy's link goroutines.
	for _, l := range links {
		l.wire.ResetToxics()
	}
	var errs []error
	if err := p.srv.Collection.Clear(); err != nil {
		errs = append(errs, err)
	}
	if p.api != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := p.api.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		<-p.apiDone
	}
	return errors.Join(errs...)
}

// Direction says which way a toxic acts on a link.
type Direction string

// Directions. Upstream is client to Redis (requests), Downstream is Redis to
// client (replies).
const (
	Upstream   Direction = "upstream"
	Downstream Direction = "downstream"
	Both       Direction = "both"
)

func (d Direction) streams() ([]string, error) {
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

// Toxic is one fault on one stream of a link, in toxiproxy's vocabulary:
// "latency" (Latency ± Jitter per chunk), "timeout" (data dropped
// silently: the quiet partition) or "reset_peer" (the connection is reset
// when data arrives).
type Toxic struct {
	Kind            string
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
	return l.setToxic(Toxic{Kind: "latency", Latency: latency, Jitter: jitter}, dir)
}

// Blackhole silently drops data in the given direction: connections stay
// open and calls hang until their own timeouts (a `timeout` toxic with 0).
// This is the quiet partition: nobody is told.
func (l *Link) Blackhole(dir Direction) error {
	return l.setToxic(Toxic{Kind: "timeout"}, dir)
}

// Reset makes every connection that sends data get a TCP RST, until Heal.
func (l *Link) Reset() error {
	return l.setToxic(Toxic{Kind: "reset_peer"}, Upstream)
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
		return fmt.Errorf("faults: link %s: enable: %w", l.name, err)
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
		return fmt.Errorf("faults: link %s: repoint to %s: %w", l.name, upstream, err)
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
	streams, err := dir.streams()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range streams {
		t.Stream = Direction(s)
		name := t.Kind + "_" + s
		if old, ok := l.toxics[name]; ok && old == t {
			// Already so: removing and re-adding would flush the data a
			// latency toxic holds back.
			continue
		}
		// Replace rather than stack: a second Latency call means "now this much".
		l.wire.RemoveToxic(name)
		delete(l.toxics, name)
		if err := l.wire.AddToxic(name, t); err != nil {
			return fmt.Errorf("faults: link %s: add %s: %w", l.name, name, err)
		}
		l.toxics[name] = t
	}
	return nil
}

// proxyWire is a Link's wire on a real network: an embedded toxiproxy proxy.
type proxyWire struct{ px *toxiproxy.Proxy }

func (w proxyWire) AddToxic(name string, t Toxic) error {
	var attrs string
	switch t.Kind {
	case "latency":
		attrs = fmt.Sprintf(`{"latency":%d,"jitter":%d}`, t.Latency.Milliseconds(), t.Jitter.Milliseconds())
	default: // timeout and reset_peer: at once, for good
		attrs = `{"timeout":0}`
	}
	body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, t.Kind, string(t.Stream), attrs)
	_, err := w.px.Toxics.AddToxicJson(strings.NewReader(body))
	return err
}

func (w proxyWire) RemoveToxic(name string) {
	_ = w.px.Toxics.RemoveToxic(context.Background(), name)
}

func (w proxyWire) ResetToxics() { w.px.Toxics.ResetToxics(context.Background()) }

func (w proxyWire) Stop() { w.px.Stop() }

func (w proxyWire) Start() error { return w.px.Start() }

func (w proxyWire) Repoint(upstream string) error {
	// The proxy stops and listens again on the same address; on a busy
	// machine the old listener can still hold it for a moment (measured:
	// 1 of 340 failovers). Try again for up to a second.
	var err error
	for try := 0; try < 50; try++ {
		if err = w.px.Update(&toxiproxy.Proxy{Listen: w.px.Listen, Upstream: upstream, Enabled: w.px.Enabled}); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
