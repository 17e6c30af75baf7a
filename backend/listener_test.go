package backend_test

import (
	"net"
	"os"
	"os/exec"
	"testing"

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
	l.Close()
	if _, known := backend.Listens(os.Getpid(), port); known {
		t.Fatal("a port nobody listens on cannot be told")
	}
}
