package drivers

import (
	"bufio"
	"errors"
	"fmt"
	"time"
)

// Reading the driver's stdout: its hello, then answers handed to the
// requests waiting for them and lost notices, until it ends; anything
// else breaks the lock.

// helloTimeout is how long a driver has to write its hello line.
var helloTimeout = 10 * time.Second

// maxLine bounds one line from a driver: no protocol message comes near
// it, and a driver past it is broken, not slow.
const maxLine = 1 << 20

// hello reads the handshake line, within helloTimeout.
func (p *proc) hello(lines *bufio.Scanner) error {
	got := make(chan error, 1)
	go func() {
		if !lines.Scan() {
			got <- p.stopped(lines, true)
			return
		}
		var m message
		if err := decodeMessage(lines.Bytes(), &m); err != nil || m.Hello != "lockchaos-driver" {
			got <- p.fail(`first line is not a hello ({"hello": "lockchaos-driver", "version": %d}): %q`, Version, clip(lines.Text()))
			return
		}
		if m.Version != Version {
			got <- p.fail("speaks protocol version %d, this lockchaos speaks %d", m.Version, Version)
			return
		}
		got <- nil
	}()
	select {
	case err := <-got:
		return err
	case <-time.After(helloTimeout):
		return p.fail("sent no hello line within %v; %s", helloTimeout, flushHint)
	}
}

// read dispatches the driver's lines until it ends; anything it does not
// understand breaks the lock.
func (p *proc) read(lines *bufio.Scanner) {
	defer close(p.done)
	for lines.Scan() {
		var m message
		err := decodeMessage(lines.Bytes(), &m)
		if what := whatIsWrong(lines.Bytes(), &m, err); what != "" {
			// kept in p.broken for every caller
			_ = p.fail("wrote a line that is not a protocol message (%s): %q", what, clip(lines.Text()))
			return
		}
		if m.Lost != nil {
			p.lose(*m.Lost)
			continue
		}
		if what := p.deliver(m); what != "" {
			_ = p.fail("%s: %q", what, clip(lines.Text())) // kept in p.broken for every caller
			return
		}
	}
	_ = p.stopped(lines, false) // kept in p.broken for every caller
}

// stopped breaks the lock when the driver's stdout can be read no further,
// saying why: a line over maxLine (the driver lives on, and is killed), a
// failed read, or its end (the driver exited, or closed stdout). hello:
// this was to be its hello line.
func (p *proc) stopped(lines *bufio.Scanner, hello bool) error {
	first, before := "", ""
	if hello {
		first, before = " as its first line", " before its hello line"
	}
	switch err := lines.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return p.fail("sent a line over %d bytes (the protocol's limit for one line)%s; it was killed", maxLine, first)
	case err != nil:
		return p.fail("could not be read%s: %v", before, err)
	}
	return p.fail("exited%s (%s)", before, p.exitStatus())
}

// lose ends the lease a {"lost"} notice names, or remembers the notice
// for a lease whose grant is still on its way to the caller.
func (p *proc) lose(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.leases[id]; l != nil {
		l.lose()
	} else {
		p.lostEarly[id] = true
	}
}

// deliver hands an answer to the request waiting for it, or says what is
// wrong with it: no request waits for its id, or it is no answer to it.
func (p *proc) deliver(m message) string {
	p.mu.Lock()
	id := *m.ID
	w, waiting := p.pending[id]
	what := ""
	switch {
	case !waiting && id >= 1 && id <= p.nextID:
		what = fmt.Sprintf("answered request %d twice", id)
	case !waiting:
		what = fmt.Sprintf("answered request %d, which it was never sent", id)
	case m.Result != resultOK && m.Result != resultRefused && m.Result != resultError:
		what = fmt.Sprintf("answered %s request %d with result %q (want ok, refused or error)", w.op, id, m.Result)
	case w.op == opAcquire && m.Result == resultOK && m.Lease == nil:
		what = fmt.Sprintf("granted an acquire without a lease (request %d)", id)
	case w.op == opAcquire && m.Result == resultOK && p.leases[*m.Lease] != nil:
		what = fmt.Sprintf("granted lease %d again before its release (request %d)", *m.Lease, id)
	default:
		delete(p.pending, id)
	}
	p.mu.Unlock()
	if what == "" {
		w.ch <- m
	}
	return what
}
