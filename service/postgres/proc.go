package postgres

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A postmaster's children (backends, checkpointer, walwriter, ...) each
// call setsid() when forked, so they are not in the postmaster's process
// group: one signal to the group reaches the postmaster alone. These
// helpers find and signal them through /proc.

// procStat returns a process's state letter and parent pid from
// /proc/<pid>/stat ("" when the process is gone).
func procStat(pid int) (state string, ppid int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0
	}
	s := string(b)
	// After "(comm)", which may hold spaces: state, ppid, ...
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return "", 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid := procStat(c); ppid == pid && state != "Z" {
			out = append(out, c)
		}
	}
	return out
}

// signalServer sends sig to the postmaster pm and all its children. It
// stops the postmaster first, so it forks no new child in between (and
// continues it last for SIGCONT, after the backends).
func signalServer(pm int, sig syscall.Signal) []int {
	if sig == syscall.SIGCONT {
		kids := children(pm)
		for _, c := range kids {
			_ = syscall.Kill(c, sig)
		}
		_ = syscall.Kill(pm, sig)
		return kids
	}
	_ = syscall.Kill(pm, syscall.SIGSTOP)
	// Only a postmaster really stopped forks nothing while its children
	// are listed (a signal lands a moment after kill returns).
	waitStopped([]int{pm}, time.Second)
	kids := children(pm)
	for _, c := range kids {
		_ = syscall.Kill(c, sig)
	}
	_ = syscall.Kill(pm, sig)
	if sig == syscall.SIGSTOP {
		// A signal lands a moment after kill returns; Pause returns
		// once the server really is frozen.
		waitStopped(append(kids, pm), time.Second)
	}
	return kids
}

// waitStopped waits (up to timeout) until each of pids is stopped (or gone).
func waitStopped(pids []int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, p := range pids {
		for {
			if state, _ := procStat(p); state == "" || state == "T" || state == "Z" || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// waitGone waits (up to timeout) until each of pids has died: gone, or a
// zombie, which holds no shared memory.
func waitGone(pids []int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, p := range pids {
		for {
			if state, _ := procStat(p); state == "" || state == "Z" || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}
