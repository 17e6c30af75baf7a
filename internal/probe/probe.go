// Package probe runs a short-lived external program the harness asks
// something of (redis-server --version, the C compiler building the clock
// shim) so that it cannot outlive its question: bounded by a time limit
// and by the caller's context (an interrupt ends it), in a process group
// of its own that is killed whole when it ends, so a wrapper script's
// children go with it.
package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTimeout means the program did not finish within its limit.
var ErrTimeout = errors.New("probe: no answer in time")

// waitDelay bounds how long a finished program's pipes may stay open: a
// descendant that left the group (setsid) and holds stdout must not hold
// the caller.
const waitDelay = time.Second

// Error is a program that did not answer as asked. Its text names the
// program the way the user knows it (Who: a path, or VAR=path).
type Error struct {
	Who   string
	Args  []string
	Limit time.Duration
	Out   []byte // what it wrote before it ended, for the message
	Err   error  // ErrTimeout, the context's error, or the exec error
}

func (e *Error) Error() string {
	asked := strings.Join(e.Args, " ")
	killed := " (it and every process it started were killed)"
	switch {
	case errors.Is(e.Err, ErrTimeout):
		return fmt.Sprintf("%s did not answer %s within %v%s", e.Who, asked, e.Limit, killed)
	case errors.Is(e.Err, context.Canceled):
		return fmt.Sprintf("%s %s: interrupted%s", e.Who, asked, killed)
	case errors.Is(e.Err, context.DeadlineExceeded):
		return fmt.Sprintf("%s %s: the caller's deadline passed%s", e.Who, asked, killed)
	}
	msg := fmt.Sprintf("%s %s: %v", e.Who, asked, e.Err)
	if out := strings.TrimSpace(string(e.Out)); out != "" {
		msg += ": " + clip(out)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Output runs name with args and returns its standard output (stderr is
// kept for the error). It ends within limit, or when ctx ends, whatever
// the program does; who names it in errors.
func Output(ctx context.Context, limit time.Duration, who, name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	if e := run(ctx, limit, who, name, args, &stdout, &stderr); e != nil {
		e.Out = stderr.Bytes()
		return stdout.Bytes(), e
	}
	return stdout.Bytes(), nil
}

// CombinedOutput is Output with stderr and stdout together, as a
// compiler's diagnostics are read.
func CombinedOutput(ctx context.Context, limit time.Duration, who, name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if e := run(ctx, limit, who, name, args, &out, &out); e != nil {
		e.Out = out.Bytes()
		return out.Bytes(), e
	}
	return out.Bytes(), nil
}

// run starts the program in a group of its own and kills the group when
// the program ends, its limit passes or ctx ends: killed before it is
// reaped, so the group's id is still the program's own (a reaped pid can
// be reused; an unreaped one cannot). It returns nil when the program
// answered.
func run(ctx context.Context, limit time.Duration, who, name string, args []string, stdout, stderr *bytes.Buffer) *Error {
	fail := func(err error) *Error { return &Error{Who: who, Args: args, Limit: limit, Err: err} }
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Own group: a terminal's Ctrl-C reaches the harness only, which ends
	// the program itself; Pdeathsig: a harness killed outright takes it along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		waitUnreaped(pid)
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var why error
	select {
	case <-exited:
	case <-timer.C:
		why = ErrTimeout
	case <-ctx.Done():
		why = ctx.Err()
	}
	// The whole group, also after a normal exit: what the program left
	// running in the background is no answer, and must not outlive it.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-exited
	err := cmd.Wait()
	if why != nil {
		return fail(why)
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fail(err)
	}
	return nil
}

// waitUnreaped waits until process pid has ended, leaving it to be reaped
// (by cmd.Wait): until then its pid, which is its group's id, stays ours.
func waitUnreaped(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// clip keeps an error's quoted output to its first lines.
func clip(s string) string {
	const most = 400
	if len(s) > most {
		return s[:most] + " ..."
	}
	return s
}
