package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
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

// APIAddr returns where the toxiproxy HTTP API listens, or "".
func (p *Proxies) APIAddr() string { return p.apiAddr }

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
	l := &Link{name: name, px: px, addr: px.Listen, upstream: upstream, enabled: true, toxics: map[string]string{}}
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
		l.px.Toxics.ResetToxics(context.Background())
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

// Link is one proxy: the path from one client to one node, or a replica's
// path to its primary. Every fault on it is undone by Heal.
type Link struct {
	name string
	px   *toxiproxy.Proxy
	addr string

	mu       sync.Mutex
	upstream string
	enabled  bool
	toxics   map[string]string // name -> attributes, as set
}

// Name returns the link's name, e.g. "client3->node1".
func (l *Link) Name() string { return l.name }

// Addr returns the proxy's listen address: what clients dial.
func (l *Link) Addr() string { return l.addr }

// Upstream returns the address the proxy forwards to.
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
	return l.setToxic("latency", dir, fmt.Sprintf(`{"latency":%d,"jitter":%d}`, latency.Milliseconds(), jitter.Milliseconds()))
}

// Blackhole silently drops data in the given direction: connections stay
// open and calls hang until their own timeouts (a `timeout` toxic with 0).
// This is the quiet partition: nobody is told.
func (l *Link) Blackhole(dir Direction) error {
	return l.setToxic("timeout", dir, `{"timeout":0}`)
}

// Reset makes every connection that sends data get a TCP RST, until Heal.
func (l *Link) Reset() error {
	return l.setToxic("reset_peer", Upstream, `{"timeout":0}`)
}

// Disable stops the proxy: open connections are closed and new ones are
// refused. This is the loud partition: clients see errors at once.
func (l *Link) Disable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.px.Stop()
	l.enabled = false
	return nil
}

// Enable starts a disabled proxy again on the same address.
func (l *Link) Enable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.enabled {
		return nil
	}
	if err := l.px.Start(); err != nil {
		return fmt.Errorf("faults: link %s: enable: %w", l.name, err)
	}
	l.enabled = true
	return nil
}

// Heal removes every toxic and re-enables the proxy. Removing a blackhole
// closes the connections it held (toxiproxy's timeout toxic does so on
// cleanup); clients then reconnect.
func (l *Link) Heal() error {
	l.px.Toxics.ResetToxics(context.Background())
	l.mu.Lock()
	clear(l.toxics)
	l.mu.Unlock()
	return l.Enable()
}

// Repoint makes the proxy forward to a new upstream (a failover moving the
// service address to the promoted replica). Open connections are closed, as
// when a virtual IP moves.
func (l *Link) Repoint(upstream string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The proxy stops and listens again on the same address; on a busy
	// machine the old listener can still hold it for a moment (measured:
	// 1 of 340 failovers). Try again for up to a second.
	var err error
	for try := 0; try < 50; try++ {
		if err = l.px.Update(&toxiproxy.Proxy{Listen: l.addr, Upstream: upstream, Enabled: l.enabled}); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("faults: link %s: repoint to %s: %w", l.name, upstream, err)
	}
	l.upstream = upstream
	return nil
}

// Toxics lists the names of the toxics active on the link.
func (l *Link) Toxics() []string {
	var out []string
	for _, t := range l.px.Toxics.GetToxicArray() {
		if w, ok := t.(*toxics.ToxicWrapper); ok {
			out = append(out, w.Name)
		}
	}
	return out
}

func (l *Link) setToxic(kind string, dir Direction, attrs string) error {
	streams, err := dir.streams()
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range streams {
		name := kind + "_" + s
		if l.toxics[name] == attrs {
			// Already so: removing and re-adding would flush the data a
			// latency toxic holds back.
			continue
		}
		// Replace rather than stack: a second Latency call means "now this much".
		_ = l.px.Toxics.RemoveToxic(context.Background(), name)
		delete(l.toxics, name)
		body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, kind, s, attrs)
		if _, err := l.px.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("faults: link %s: add %s: %w", l.name, name, err)
		}
		l.toxics[name] = attrs
	}
	return nil
}
