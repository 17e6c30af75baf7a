package backend_test

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// TestListensTellsWhoseListenerAPortIs: this process's listener is its
// own; another process's is not.
func TestListensTellsWhoseListenerAPortIs(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if listens, known := backend.Listens(os.Getpid(), port); !known || !listens {
		t.Fatalf("our own listener on %d: listens %v known %v", port, listens, known)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	if listens, known := backend.Listens(other.Process.Pid, port); !known || listens {
		t.Fatalf("another process on our port %d: listens %v known %v", port, listens, known)
	}
	if err := other.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if listens, known := backend.Listens(other.Process.Pid, port); !known || listens {
		t.Fatalf("a process that has exited: listens %v known %v", listens, known)
	}
	l.Close()
	if listens, known := backend.Listens(os.Getpid(), port); !known || listens {
		t.Fatalf("a port nobody listens on: listens %v known %v", listens, known)
	}
}

// TestWaitStoppedReturnsOnceTheProcessIsStopped: after a SIGSTOP,
// WaitStopped returns with the process stopped.
func TestWaitStoppedReturnsOnceTheProcessIsStopped(t *testing.T) {
	p := exec.Command("sleep", "30")
	if err := p.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = p.Process.Kill(); _ = p.Wait() }()
	if err := p.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	backend.WaitStopped(p.Process.Pid, 5*time.Second)
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Process.Pid) + "/stat")
	if err != nil {
		t.Skip(err)
	}
	s := string(b)
	if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); f[0] != "T" {
		t.Fatalf("state %s after WaitStopped, want T", f[0])
	}
}
