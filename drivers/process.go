package drivers

import (
	"bufio"
	"context"
	"errors"
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
	"github.com/lockchaos/lockchaos/service"
)

// Timeouts of the protocol.
const (
	// answerGrace is how long past its own timeout a request may stay
	// unanswered (time the pod spends paused does not count) before the
	// driver counts as hung.
	answerGrace = 2 * time.Second
	exitGrace   = time.Second
)

// flushHint is the usual reason a driver seems mute: its stdout is a pipe,
// which most languages buffer.
const flushHint = "is its stdout buffered? A driver must flush stdout after every line " +
	"(Python print(..., flush=True), Ruby $stdout.sync = true, C fflush(stdout))"

// brokenError is a driver's failure, a lockimpl.ErrBroken. Its text names
// the driver and pod once, under this package's prefix alone.
type brokenError struct{ msg string }

func (e *brokenError) Error() string { return "drivers: " + e.msg }
func (e *brokenError) Unwrap() error { return lockimpl.ErrBroken }

func broken(d Driver, pod int, format string, args ...any) error {
	return &brokenError{fmt.Sprintf("driver %s (pod %d) ", d.Name, pod) + fmt.Sprintf(format, args...)}
}

// proc is one pod's driver process and the Locker over it.
type proc struct {
	d      Driver
	pod    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail
	tag    string        // the TagVar of every process of this driver
	start  uint64        // when the driver started, as /proc says (see reap)
	done   chan struct{} // closed when the reader has ended
	exited chan struct{} // closed when the process has been reaped

	mu      sync.Mutex
	nextID  int64
	pending map[int64]waiter
	leases  map[int64]*lease
	// lostEarly holds lost notices for leases not registered yet: a
	// driver may send {"lost"} right behind the "ok" that granted it.
	lostEarly map[int64]bool
	broken    error
	paused    bool
	resumed   time.Time
}

// waiter is a request waiting for its answer.
type waiter struct {
	op string
	ch chan message // buffered: a caller that gave up does not block the reader
}

// start runs the driver for one pod and waits for its hello.
func start(d Driver, env lockimpl.Env) (*proc, error) {
	sweepOnce.Do(sweepOrphans)
	p := &proc{d: d, pod: env.Pod, pending: map[int64]waiter{}, leases: map[int64]*lease{}, lostEarly: map[int64]bool{},
		tag: newTag(), done: make(chan struct{}), exited: make(chan struct{})}
	p.cmd = exec.Command("sh", "-c", shellLine(d.Command))
	p.cmd.Env = append(os.Environ(), TagVar+"="+p.tag,
		"LOCKCHAOS_PROTOCOL="+strconv.Itoa(Version),
		"LOCKCHAOS_POD="+strconv.Itoa(env.Pod),
		"LOCKCHAOS_ADDRS="+strings.Join(env.Addrs, ","),
		"LOCKCHAOS_SERVICE="+string(service.Name(d.Service).Or()),
		"LOCKCHAOS_TTL_MS="+strconv.FormatInt(env.TTL.Milliseconds(), 10),
		"LOCKCHAOS_CALL_TIMEOUT_MS="+strconv.FormatInt(max(env.CallTimeout, time.Millisecond).Milliseconds(), 10))
	if service.Name(d.Service) == service.Postgres {
		p.cmd.Env = append(p.cmd.Env, "LOCKCHAOS_POSTGRES_URLS="+strings.Join(lockimpl.PostgresURLs(env.Addrs, env.Postgres), ","),
			"LOCKCHAOS_POSTGRES_ADVISORY_CLASS="+strconv.Itoa(int(env.Postgres.Class())))
	}
	// Its own process group: a pause stops every process of the driver;
	// and it dies with the harness, however the harness dies.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var err error
	if p.stderr, err = newTail(env.Dir, stderrName(d.Name, env.Pod)); err != nil {
		return nil, broken(d, env.Pod, "stderr file: %v", err)
	}
	p.cmd.Stderr = p.stderr
	// A grandchild that keeps stderr open must not keep Wait (and so
	// Close) from returning.
	p.cmd.WaitDelay = exitGrace
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, broken(d, env.Pod, "stdin: %v", err)
	}
	// A pipe of our own, not StdoutPipe: Wait must not close it under the
	// reader, or the last lines of a driver that exits are lost.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, broken(d, env.Pod, "stdout: %v", err)
	}
	p.cmd.Stdout = w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		p.stderr.Close()
		return nil, broken(d, env.Pod, "did not start: %v", err)
	}
	if st, ok := readStat(p.cmd.Process.Pid); ok {
		p.start = st.start
	}
	go p.reap(stdout)
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 64<<10), maxLine)
	if err := p.hello(lines); err != nil {
		_ = p.stdin.Close()
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		reap(p.tag, p.start, nil)
		close(p.done) // no reader will run: stdout may be closed at once
		<-p.exited
		p.stderr.Close()
		return nil, err
	}
	go p.read(lines)
	if env.OnPause != nil {
		env.OnPause(p.stop, p.cont)
	}
	if env.OnCrash != nil {
		env.OnCrash(p.crash)
	}
	return p, nil
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
	p.pending[r.ID] = waiter{op: r.Op, ch: ch}
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
			// kept in p.broken for every caller
			_ = p.fail("did not answer request %d (%s %s) within %v; %s", r.ID, r.Op, r.Key, d, flushHint)
		}
	})
	return t
}

// fail records the first reason the lock is broken and returns the error.
func (p *proc) fail(format string, args ...any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken == nil {
		p.broken = broken(p.d, p.pod, "%s; its stderr: %s", fmt.Sprintf(format, args...), p.stderr.Last())
		for id, w := range p.pending {
			delete(p.pending, id)
			close(w.ch)
		}
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	return p.broken
}

func (p *proc) brokenErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken == nil {
		return broken(p.d, p.pod, "ended")
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

// reap waits for the driver's process, then closes stdout. Its stdout
// ends by itself once every process holding the write end is gone; it is
// closed under the reader only when something (a grandchild) keeps it
// open. Closed at once, it raced the reader, which then said "file already
// closed" instead of how the driver exited, and lost the driver's last
// lines.
func (p *proc) reap(stdout *os.File) {
	_ = p.cmd.Wait()
	close(p.exited)
	select {
	case <-p.done:
	case <-time.After(exitGrace):
	}
	stdout.Close()
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

// crash kills the driver as the kernel kills a crashed pod's processes:
// SIGKILL to its whole group and to every process it started (setsid ones
// too), no goodbye on stdin. Calls in flight, and every later one, fail.
func (p *proc) crash() {
	tree := descendants(processes(^uint64(0)), p.cmd.Process.Pid)
	_ = p.fail("killed: its pod crashed") // fail sends the group SIGKILL
	reap(p.tag, p.start, tree)
}

// Close ends the driver: stdin closed, a moment to exit, then the whole
// process group killed, and every other process of the driver (see reap).
// It is what a pod shutting down does.
func (p *proc) Close() error {
	tree := descendants(processes(^uint64(0)), p.cmd.Process.Pid)
	_ = p.stdin.Close()
	p.waitExit(exitGrace)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	reap(p.tag, p.start, tree)
	<-p.exited
	<-p.done
	return p.stderr.Close()
}

// waitExit waits up to d for the driver's own process to end; not for its
// stderr to close, which a process it left behind may hold.
func (p *proc) waitExit(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return
		case <-time.After(5 * time.Millisecond):
		}
		if errors.Is(p.cmd.Process.Signal(syscall.Signal(0)), os.ErrProcessDone) {
			return
		}
	}
}
