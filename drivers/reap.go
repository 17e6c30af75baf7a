package drivers

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// No process of a driver outlives its pod, also one that left the
// driver's process group (setsid, a daemon's double fork) and so escapes
// the group's SIGKILL. The harness puts TagVar in the driver's
// environment, which every process it starts inherits; when the pod
// ends, every live process carrying the tag is killed, wherever it went
// (reparented to init, in a session of its own), and so is every process
// that descended from the driver when the pod began to end (one started
// with an environment of its own). A process that both replaced its
// environment and left the driver's tree before that escapes.
//
// A harness that dies by SIGKILL cannot do this; the parent-death signal
// still kills the driver itself. The next harness to start a driver
// sweeps what such a harness left: processes whose tag names a harness
// no longer running.
//
// Only Linux's /proc is read: no cgroup, no root.

// TagVar marks every process of one driver: "HARNESS_PID.HARNESS_START.N".
const TagVar = "LOCKCHAOS_DRIVER_TAG"

var (
	harnessTag = tagOf(os.Getpid())
	tags       atomic.Int64
	sweepOnce  sync.Once
)

func newTag() string { return harnessTag + "." + strconv.FormatInt(tags.Add(1), 10) }

// tagOf names a process by its pid and start time, which no later
// process of the same pid shares.
func tagOf(pid int) string {
	p, _ := readStat(pid)
	return strconv.Itoa(pid) + "." + strconv.FormatUint(p.start, 10)
}

// procInfo is one live process as /proc shows it.
type procInfo struct {
	pid, ppid int
	start     uint64 // clock ticks after boot
	tag       string // its TagVar, "" if none (or its environment is not ours to read)
}

// processes lists the live processes; zombies are dead and hold nothing.
// It reads the tags of those started at or after since (a driver's
// processes all start after it: reading every environment costs).
func processes(since uint64) []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ok := readStat(pid)
		if !ok {
			continue
		}
		if p.start >= since {
			env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
			p.tag = tagIn(env)
		}
		out = append(out, p)
	}
	return out
}

// readStat reads a live process's parent and start time.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid ... starttime is field 22; comm may hold
	// spaces and parentheses, so count from its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procInfo{pid: pid, ppid: ppid, start: start}, true
}

// tagIn finds TagVar's value in a NUL-separated environment.
func tagIn(env []byte) string {
	key := []byte(TagVar + "=")
	for len(env) > 0 {
		entry, rest, _ := bytes.Cut(env, []byte{0})
		if v, ok := bytes.CutPrefix(entry, key); ok {
			return string(v)
		}
		env = rest
	}
	return ""
}

// descendants lists the processes below pid.
func descendants(procs []procInfo, pid int) []procInfo {
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []procInfo
	for next := []int{pid}; len(next) > 0; {
		parent := next[0]
		next = next[1:]
		for _, c := range children[parent] {
			out = append(out, c)
			next = append(next, c.pid)
		}
	}
	return out
}

// reap kills every live process tagged tag, and each of tree still the
// same process, until none is left (one may fork while it is killed).
func reap(tag string, since uint64, tree []procInfo) {
	was := map[int]uint64{}
	for _, p := range tree {
		was[p.pid] = p.start
	}
	for round := range 50 {
		killed := 0
		for _, p := range processes(since) {
			if start, ok := was[p.pid]; p.tag == tag || (ok && start == p.start) {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
				killed++
			}
		}
		if killed == 0 {
			return
		}
		time.Sleep(time.Duration(round+1) * time.Millisecond) // a killed process takes a moment to be gone
	}
}

// sweepOrphans kills the tagged processes of harnesses that are gone.
func sweepOrphans() {
	procs := processes(0)
	alive := make(map[string]bool, len(procs))
	for _, p := range procs {
		alive[fmt.Sprintf("%d.%d", p.pid, p.start)] = true
	}
	for _, p := range procs {
		harness, ok := harnessOf(p.tag)
		if ok && harness != harnessTag && !alive[harness] {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// harnessOf is the harness part of a tag, "PID.START", if it is one.
func harnessOf(tag string) (string, bool) {
	f := strings.Split(tag, ".")
	if len(f) != 3 {
		return "", false
	}
	for _, n := range f {
		if _, err := strconv.ParseUint(n, 10, 64); err != nil {
			return "", false
		}
	}
	return f[0] + "." + f[1], true
}
