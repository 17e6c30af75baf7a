package postgres

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

const childEnv = "LOCKCHAOS_PGNODE_TEST_CHILD"

// TestHarnessKilledLeavesNothing runs a harness (this test binary again)
// that starts a node, SIGKILLs it, and checks that the server and the
// run folder go: Pdeathsig and the janitor.
func TestHarnessKilledLeavesNothing(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		n, err := Start(context.Background(), backend.NodeConfig{Name: "orphan"})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		parent, _ := parentDir()
		fmt.Println(n.PID(), parent)
		time.Sleep(time.Minute)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHarnessKilledLeavesNothing$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var pm int
	var dir string
	if _, serr := fmt.Sscan(line, &pm, &dir); err != nil || serr != nil || pm == 0 {
		t.Fatalf("child said %q: %v %v", line, err, serr)
	}
	kids := children(pm)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	waitPidsGone(t, append(kids, pm))
	// The killed server's System V segment outlives it; the next run's
	// sweep (here, called as the first node of a run calls it) removes it.
	if segmentsOf(pm) == 0 {
		t.Errorf("no System V segment of the killed postmaster %d found: the sweep below proves nothing", pm)
	}
	uid := uint32(os.Geteuid())
	if cred, err := serverUser(); err == nil && cred != nil {
		uid = cred.Uid
	}
	// Its last backends detach as they exit, a moment after the postmaster.
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		sweepSegments(uid)
		if n := segmentsOf(pm); n == 0 {
			break
		} else if time.Now().After(end) {
			t.Errorf("%d System V segment(s) of the killed postmaster %d left after the sweep", n, pm)
			break
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run folder %s still there 10 s after the harness was killed", dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestFixedPort(t *testing.T) {
	port, err := backend.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, backend.NodeConfig{Name: "fixed", Port: port})
	if n.Addr() != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("Addr %s, want port %d", n.Addr(), port)
	}
	_, err = Start(context.Background(), backend.NodeConfig{Name: "clash", Port: port})
	if !errors.Is(err, backend.ErrNodeStart) || !strings.Contains(err.Error(), "server.log") {
		t.Fatalf("a second node on port %d: %v, want ErrNodeStart with the log", port, err)
	}
}

func TestNoServerUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the server's user only matters as root")
	}
	t.Setenv(UserEnv, "no-such-user-lockchaos")
	_, err := serverUser()
	if !errors.Is(err, ErrNoServerUser) || !strings.Contains(err.Error(), "refuses to run as root") {
		t.Fatalf("serverUser: %v", err)
	}
}

func TestCheck(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatalf("Check on a machine with PostgreSQL: %v", err)
	}
	t.Setenv(BinEnv, "/nonexistent")
	if err := Check(); !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("Check with a bad %s: %v", BinEnv, err)
	}
}

// segmentsOf counts the System V segments whose creator was pid.
func segmentsOf(pid int) int {
	b, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if fs := strings.Fields(line); len(fs) > 4 && fs[4] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}
