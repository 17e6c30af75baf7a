package drivers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockchaos/lockchaos/lockimpl"
)

// Timeouts of the protocol.
const (
	helloTimeout = 10 * time.Second
	// answerGrace is how long past its own timeout a request may stay
	// unanswered (time the pod spends paused does not count) before the
	// driver counts as hung.
	answerGrace = 2 * time.Second
	exitGrace   = time.Second
)

type request struct {
	ID        int64  `json:"id"`
	Op        string `json:"op"`
	Key       string `json:"key,omitempty"`
	Lease     int64  `json:"lease,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
}

// message is any line a driver writes.
type message struct {
	Hello   string `json:"hello"`
	Version int    `json:"version"`
	Name    string `json:"name"`
	ID      *int64 `json:"id"`
	Result  string `json:"result"`
	Lease   int64  `json:"lease"`
	Token   string `json:"token"`
	Fence   uint64 `json:"fence"`
	Error   string `json:"error"`
	Lost    *int64 `json:"lost"`
}

// proc is one pod's driver process and the Locker over it.
type proc struct {
	d      Driver
	pod    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail
	done   chan struct{} // closed when the reader has ended
	exited chan struct{} // closed when the process has been reaped

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan message
	leases  map[int64]*lease
	// lostEarly holds lost notices for leases not registered yet: a
	// driver may send {"lost"} right behind the "ok" that granted it.
	lostEarly map[int64]bool
	broken    error
	paused    bool
	resumed   time.Time
}

// start runs the driver for one pod and waits for its hello.
func start(d Driver, env lockimpl.Env) (*proc, error) {
	p := &proc{d: d, pod: env.Pod, pending: map[int64]chan message{}, leases: map[int64]*lease{}, lostEarly: map[int64]bool{},
		done: make(chan struct{}), exited: make(chan struct{})}
	p.cmd = exec.Command("sh", "-c", shellLine(d.Command))
	p.cmd.Env = append(os.Environ(),
		"LOCKCHAOS_PROTOCOL="+strconv.Itoa(Version),
		"LOCKCHAOS_POD="+strconv.Itoa(env.Pod),
		"LOCKCHAOS_ADDRS="+strings.Join(env.Addrs, ","),
		"LOCKCHAOS_TTL_MS="+strconv.FormatInt(env.TTL.Milliseconds(), 10),
		"LOCKCHAOS_CALL_TIMEOUT_MS="+strconv.FormatInt(max(env.CallTimeout, time.Millisecond).Milliseconds(), 10))
	// Its own process group: a pause stops every process of the driver;
	// and it dies with the harness, however the harness dies.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var err error
	if p.stderr, err = newTail(env.Dir, fmt.Sprintf("driver-%s-pod%d.stderr", d.Name, env.Pod)); err != nil {
		return nil, err
	}
	p.cmd.Stderr = p.stderr
	// A grandchild that keeps stderr open must not keep Wait (and so
	// Close) from returning.
	p.cmd.WaitDelay = exitGrace
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	// A pipe of our own, not StdoutPipe: Wait must not close it under the
	// reader, or the last lines of a driver that exits are lost.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout = w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		p.stderr.Close()
		return nil, fmt.Errorf("%w: driver %s: %w", lockimpl.ErrBroken, d.Name, err)
	}
	go func() { _ = p.cmd.Wait(); stdout.Close(); close(p.exited) }()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	if err := p.hello(lines); err != nil {
		_ = p.stdin.Close()
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		p.stderr.Close()
		return nil, err
	}
	go p.read(lines)
	if env.OnPause != nil {
		env.OnPause(p.stop, p.cont)
	}
	return p, nil
}

// hello reads the handshake line, within helloTimeout.
func (p *proc) hello(lines *bufio.Scanner) error {
	got := make(chan error, 1)
	go func() {
		if !lines.Scan() {
			got <- p.fail("exited before its hello line (%s)", p.exitStatus())
			return
		}
		var m message
		if err := decodeMessage(lines.Bytes(), &m); err != nil || m.Hello != "lockchaos-driver" {
			got <- p.fail("first line is not a hello: %q", clip(lines.Text()))
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
		return p.fail("sent no hello line within %v", helloTimeout)
	}
}

// read dispatches the driver's lines until it ends; anything it does not
// understand breaks the lock.
func (p *proc) read(lines *bufio.Scanner) {
	defer close(p.done)
	for lines.Scan() {
		var m message
		if err := decodeMessage(lines.Bytes(), &m); err != nil || (m.ID == nil && m.Lost == nil) {
			_ = p.fail("wrote a line that is not a protocol message: %q", clip(lines.Text())) // kept in p.broken for every caller
			return
		}
		p.mu.Lock()
		if m.Lost != nil {
			if l := p.leases[*m.Lost]; l != nil {
				l.lose()
			} else {
				p.lostEarly[*m.Lost] = true
			}
			p.mu.Unlock()
			continue
		}
		ch := p.pending[*m.ID]
		delete(p.pending, *m.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- m // buffered: a caller that gave up does not block the reader
		}
	}
	_ = p.fail("exited (%s)", p.exitStatus()) // kept in p.broken for every caller
}

// call sends one request and waits for its answer, the caller's context,
// or the driver's failure. A request unanswered past its timeout plus
// answerGrace (paused time aside) breaks the lock: a hung driver.
func (p *proc) call(ctx context.Context, r request) (message, error) {
	if dl, ok := ctx.Deadline(); ok {
		r.TimeoutMS = max(time.Until(dl).Milliseconds(), 1)
	}
	p.mu.Lock()
	if p.broken != nil {
		p.mu.Unlock()
		return message{}, p.broken
	}
	p.nextID++
	r.ID = p.nextID
	ch := make(chan message, 1)
	p.pending[r.ID] = ch
	hang := p.watchHang(r, time.Duration(r.TimeoutMS)*time.Millisecond+answerGrace)
	p.mu.Unlock()
	if _, err := p.stdin.Write(appendRequest(make([]byte, 0, 128), r)); err != nil {
		return message{}, p.fail("stdin closed: %v", err)
	}
	select {
	case m, ok := <-ch:
		hang.Stop()
		if !ok {
			return message{}, p.brokenErr()
		}
		return m, nil
	case <-ctx.Done():
		return message{}, fmt.Errorf("drivers: %s %s: %w", r.Op, r.Key, ctx.Err())
	case <-p.done:
		select { // an answer that came just before the end still counts
		case m, ok := <-ch:
			if ok {
				return m, nil
			}
		default:
		}
		return message{}, p.brokenErr()
	}
}

// watchHang breaks the lock if request r is still unanswered after d of
// unpaused time. The caller holds p.mu, and stops the timer when the
// answer comes (a request its caller gave up on stays watched): one left
// running per answered request would fire seconds later, a goroutine
// each, thousands a second in a busy cell.
func (p *proc) watchHang(r request, d time.Duration) *time.Timer {
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		p.mu.Lock()
		_, waiting := p.pending[r.ID]
		excused := p.paused || time.Since(p.resumed) < d
		if waiting && excused {
			t.Reset(d)
		}
		p.mu.Unlock()
		if waiting && !excused {
			_ = p.fail("did not answer request %d (%s %s) within %v", r.ID, r.Op, r.Key, d) // kept in p.broken for every caller
		}
	})
	return t
}

// fail records the first reason the lock is broken and returns the error.
func (p *proc) fail(format string, args ...any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken == nil {
		p.broken = fmt.Errorf("%w: driver %s (pod %d) %s; its stderr: %s", lockimpl.ErrBroken, p.d.Name, p.pod,
			fmt.Sprintf(format, args...), p.stderr.Last())
		for id, ch := range p.pending {
			delete(p.pending, id)
			close(ch)
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	return p.broken
}

func (p *proc) brokenErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken == nil {
		return fmt.Errorf("%w: driver %s (pod %d) ended", lockimpl.ErrBroken, p.d.Name, p.pod)
	}
	return p.broken
}

// exitStatus says how the process ended, waiting a moment for it.
func (p *proc) exitStatus() string {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.String()
	case <-time.After(exitGrace):
		return "its stdout closed"
	}
}

// stop and cont freeze and thaw the driver's whole process group.
func (p *proc) stop() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGSTOP)
}

func (p *proc) cont() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
	p.mu.Lock()
	p.paused, p.resumed = false, time.Now()
	p.mu.Unlock()
}

// Close ends the driver: stdin closed, a moment to exit, then the whole
// process group killed. It is what a pod shutting down does.
func (p *proc) Close() error {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(exitGrace):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	<-p.done
	return p.stderr.Close()
}

// Acquire implements lockimpl.Locker.
func (p *proc) Acquire(ctx context.Context, key string) (lockimpl.Lease, error) {
	m, err := p.call(ctx, request{Op: "acquire", Key: key})
	if err != nil {
		return nil, err
	}
	switch m.Result {
	case "ok":
		l := &lease{p: p, id: m.Lease, token: m.Token, fence: m.Fence, key: key, lost: make(chan struct{})}
		p.mu.Lock()
		p.leases[m.Lease] = l
		if p.lostEarly[m.Lease] {
			delete(p.lostEarly, m.Lease)
			l.lose()
		}
		p.mu.Unlock()
		return l, nil
	case "refused":
		return nil, lockimpl.ErrNotAcquired
	case "error":
		return nil, fmt.Errorf("drivers: %s acquire %s: %s", p.d.Name, key, m.Error)
	}
	return nil, p.fail("answered an acquire with result %q (want ok, refused or error)", m.Result)
}

type lease struct {
	p          *proc
	id         int64
	key, token string
	fence      uint64
	lost       chan struct{}
	lostOnce   sync.Once
}

func (l *lease) Token() string { return l.token }
func (l *lease) Fence() uint64 { return l.fence }
func (l *lease) Lost() <-chan struct{} {
	if !l.p.d.SignalsLoss {
		return nil
	}
	return l.lost
}
func (l *lease) lose() { l.lostOnce.Do(func() { close(l.lost) }) }

// Release implements lockimpl.Lease.
func (l *lease) Release(ctx context.Context) error {
	m, err := l.p.call(ctx, request{Op: "release", Key: l.key, Lease: l.id})
	l.p.mu.Lock()
	delete(l.p.leases, l.id)
	l.p.mu.Unlock()
	if err != nil {
		return err
	}
	switch m.Result {
	case "ok":
		return nil
	case "refused":
		return lockimpl.ErrNotHeld
	case "error":
		return fmt.Errorf("drivers: %s release %s: %s", l.p.d.Name, l.key, m.Error)
	}
	return l.p.fail("answered a release with result %q (want ok, refused or error)", m.Result)
}
