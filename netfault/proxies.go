package netfault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
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
		return fmt.Errorf("%w: toxiproxy API address %q: %w", ErrInvalidConfig, c.APIAddr, err)
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

// NewProxies starts an embedded toxiproxy server (and its HTTP API when asked).
func NewProxies(cfg ProxiesConfig) (*Proxies, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// toxiproxy logs through the server's logger (Nop here) and through
	// zerolog.Ctx of the contexts it is handed (quiet, below). Nothing is
	// silenced process-wide: zerolog's global level stays the user's
	// (TestProxiesLeaveZerologAlone).
	p := &Proxies{
		srv:   toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		links: map[string]*Link{},
	}
	if cfg.APIAddr != "" {
		l, err := net.Listen("tcp", cfg.APIAddr)
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w: the toxiproxy API address %s is taken (another program, or another cell, "+
				"listens there): choose another port, or port 0 for a free one: %w", ErrAddrInUse, cfg.APIAddr, err)
		}
		if err != nil {
			return nil, fmt.Errorf("netfault: toxiproxy API on %s: %w", cfg.APIAddr, err)
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
		return nil, fmt.Errorf("netfault: link %s -> %s: %w", name, upstream, err)
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
// A nil *Proxies (one that never started) has nothing to close.
func (p *Proxies) Close() error {
	if p == nil {
		return nil
	}
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

// proxyWire is a Link's wire on a real network: an embedded toxiproxy proxy.
type proxyWire struct{ px *toxiproxy.Proxy }

func (w proxyWire) AddToxic(name string, t Toxic) error {
	var attrs string
	switch t.Kind {
	case LatencyToxic:
		attrs = fmt.Sprintf(`{"latency":%d,"jitter":%d}`, t.Latency.Milliseconds(), t.Jitter.Milliseconds())
	default: // timeout and reset_peer: at once, for good
		attrs = `{"timeout":0}`
	}
	body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, t.Kind, string(t.Stream), attrs)
	_, err := w.px.Toxics.AddToxicJson(strings.NewReader(body))
	return err
}

// quiet is the context toxiproxy's toxic calls get: its logger writes
// nothing (only panics pass its level, to io.Discard). Without one,
// toxiproxy logs through zerolog.Ctx, which falls back to the process's
// zerolog.DefaultContextLogger: a user's, to be left alone.
var quiet = func() context.Context {
	l := zerolog.New(io.Discard).Level(zerolog.PanicLevel)
	return l.WithContext(context.Background())
}()

func (w proxyWire) RemoveToxic(name string) {
	// An absent toxic is what removing one means to leave: not an error.
	_ = w.px.Toxics.RemoveToxic(quiet, name)
}

func (w proxyWire) ResetToxics() { w.px.Toxics.ResetToxics(quiet) }

func (w proxyWire) Stop() { w.px.Stop() }

func (w proxyWire) Start() error { return whileAddrBusy(w.px.Start) }

func (w proxyWire) Repoint(upstream string) error {
	return whileAddrBusy(func() error {
		return w.px.Update(&toxiproxy.Proxy{Listen: w.px.Listen, Upstream: upstream, Enabled: w.px.Enabled})
	})
}

// whileAddrBusy runs listen, which listens again on a proxy's own
// address, until the address is free: on a busy machine the old listener
// can still hold it for a moment (measured: 1 of 340 failovers). It tries
// for up to a second.
func whileAddrBusy(listen func() error) error {
	var err error
	for try := 0; try < 50; try++ {
		if err = listen(); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
