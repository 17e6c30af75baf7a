// Package etcd is the etcd server as lockchaos runs it: one etcd process
// per member on loopback ports (a client port, a peer port), in a folder
// of its own under a run folder a janitor removes. A *Node is a
// backend.RedisNode (kill, start, pause, close); the deployment forms the
// members into one cluster (deployment/consensus.go), and what a lock or
// a fault asks of the cluster (who leads, is it healthy) is in
// cluster.go.
package etcd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/internal/probe"
)

// ErrNoEtcd means no usable etcd server binary was found; the error says
// how to get one.
var ErrNoEtcd = errors.New("etcd: no etcd server found")

// BinEnv names the environment variable that points at the etcd binary.
const BinEnv = "LOCKCHAOS_ETCD"

const howToGet = "install it (Debian/Ubuntu: apt-get install etcd-server) or set " + BinEnv +
	" to an etcd binary (3.4 or newer)"

// found caches Find's answer per LOCKCHAOS_ETCD and PATH (etcd
// --version takes tens of milliseconds, and every cell asks).
var found struct {
	sync.Mutex
	m map[string]foundBin
}

type foundBin struct {
	bin string
	err error
}

// Find returns the etcd binary to run: LOCKCHAOS_ETCD when set (an
// explicit choice beats a guess, and a wrong one is an error), else the
// one on PATH. It must say it is 3.4 or newer (concurrency.Mutex's
// TryLock and the lease semantics the catalog's reasons assume).
func Find() (string, error) {
	k := os.Getenv(BinEnv) + "\x00" + os.Getenv("PATH")
	found.Lock()
	defer found.Unlock()
	if f, ok := found.m[k]; ok {
		return f.bin, f.err
	}
	bin, err := find()
	if found.m == nil {
		found.m = map[string]foundBin{}
	}
	found.m[k] = foundBin{bin, err}
	return bin, err
}

// Check reports whether etcd can run here, with how to get it if not.
func Check() error {
	_, err := Find()
	return err
}

func find() (string, error) {
	bin := os.Getenv(BinEnv)
	if bin == "" {
		p, err := exec.LookPath("etcd")
		if err != nil {
			return "", fmt.Errorf("%w: not on PATH and %s unset: %s", ErrNoEtcd, BinEnv, howToGet)
		}
		bin = p
	}
	out, err := probe.CombinedOutput(context.Background(), 10*time.Second, "etcd", bin, "--version")
	if err != nil {
		return "", fmt.Errorf("%w: %s --version: %w: %s", ErrNoEtcd, bin, err, howToGet)
	}
	major, minor, ok := Version(string(out))
	if !ok {
		return "", fmt.Errorf("%w: %s --version said %q, not an etcd version: %s", ErrNoEtcd, bin, firstLine(out), howToGet)
	}
	if major < 3 || (major == 3 && minor < 4) {
		return "", fmt.Errorf("%w: %s is etcd %d.%d; lockchaos needs 3.4 or newer: %s", ErrNoEtcd, bin, major, minor, howToGet)
	}
	return bin, nil
}

var versionRE = regexp.MustCompile(`(?m)^etcd Version: (\d+)\.(\d+)\.`)

// Version reads "etcd Version: 3.4.23" from etcd --version's output.
func Version(out string) (major, minor int, ok bool) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, false
	}
	major, _ = strconv.Atoi(m[1])
	minor, _ = strconv.Atoi(m[2])
	return major, minor, true
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
