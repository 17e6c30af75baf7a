package backend

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Listens reports whether the process pid has a TCP socket listening on
// port (IPv4 or IPv6), read from /proc: the socket's inode in
// /proc/net/tcp{,6} among the process's open files. A process that has
// exited (its files gone) listens on nothing. known is false only when
// /proc cannot tell (no /proc/net/tcp): the caller then trusts what it
// saw before.
//
// A node that starts again on a port it held before (a restart after a
// kill) finds the port free only as long as nobody else took it while
// it was down; a dial that connects may reach the stranger while the
// node's own process is still failing to bind (an etcd member's
// restart: every status call to it timed out for 20 s).
func Listens(pid, port int) (listens, known bool) {
	inodes, known := listeningInodes(port)
	if !known || len(inodes) == 0 || pid <= 0 {
		return false, known
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		// Gone, or a zombie not yet reaped: an etcd member that could not
		// bind exits at once, sooner than its waiter hears of it (1 in 20
		// runs of the test).
		return false, true
	}
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true, true
		}
	}
	return false, true
}

// listeningInodes are the inodes of the sockets listening on port; known
// is false when neither /proc/net/tcp nor tcp6 could be read.
func listeningInodes(port int) (map[string]bool, bool) {
	out, known := map[string]bool{}, false
	hexPort := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(hexPort) < 4 {
		hexPort = "0" + hexPort
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		known = true
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			// sl local_address rem_address st ... uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			if _, p, ok := strings.Cut(fs[1], ":"); ok && p == hexPort {
				out[fs[9]] = true
			}
		}
		file.Close()
	}
	return out, known
}

// WaitStopped waits (up to timeout) until every thread of process pid is
// stopped: a SIGSTOP is delivered asynchronously, and a thread running on
// another core went on serving for a moment after kill(2) returned (a
// paused etcd member answered a read sent just after its pause, 2 in 15
// runs under -race). It returns at once where /proc cannot tell.
func WaitStopped(pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/stat")
		if err != nil || len(tasks) == 0 {
			return
		}
		stopped := true
		for _, t := range tasks {
			f := statFields(t)
			if len(f) > 0 && f[0] != "T" && f[0] != "t" { // none: a thread gone meanwhile
				stopped = false
				break
			}
		}
		if stopped {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// ProcessGroup is a process's group, from /proc/PID/stat; false when /proc
// cannot tell (no such process, no /proc).
func ProcessGroup(pid int) (int, bool) {
	if pid <= 0 {
		return 0, false
	}
	f := statFields("/proc/" + strconv.Itoa(pid) + "/stat")
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, err == nil
}

// statFields are a stat file's fields after "(comm)", which may hold
// spaces: state, ppid, pgrp, ... (nil when it cannot be read).
func statFields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}
