package backend

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// What a harness leaves behind when it is killed outright (SIGKILL, power
// loss) carries its owner, so the next run can tell a dead run's leftovers
// from a live one's: containers (backend/docker) and keys on someone
// else's Redis (backend/external). A process is named by its pid and its
// start time, which survive neither pid reuse nor a reboot unnoticed; pids
// only compare within one pid namespace of one machine, which PIDSpace and
// BootID name.

// ProcessID names this process: "pid/starttime" (the start time in clock
// ticks since boot, field 22 of /proc/PID/stat).
func ProcessID() string { return fmt.Sprintf("%d/%s", os.Getpid(), procStart(os.Getpid())) }

// ProcessAlive reports whether the process id (a ProcessID of this pid
// namespace) still runs: its pid exists (another user's counts) with the
// same start time. One whose start time cannot be read (/proc mounted
// with hidepid) counts as alive: a leftover is only removed when its owner
// is certainly gone.
func ProcessAlive(id string) bool {
	pidS, start, ok := strings.Cut(id, "/")
	pid, err := strconv.Atoi(pidS)
	if !ok || err != nil || pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM { //nolint:errorlint // a bare Errno
		return false
	}
	s := procStart(pid)
	return s == start || s == ""
}

func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 19 {
			return f[19] // field 22 of stat: starttime
		}
	}
	return ""
}

// PIDSpace names where this process's pids mean something: the host name
// and the pid namespace ("vm/pid:[4026531836]"). It stays the same across
// a reboot of the machine (the initial namespace keeps its number), so it
// suits leftovers that outlive one (stopped containers); two containers
// of one host differ in both.
func PIDSpace() string {
	host, _ := os.Hostname()
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return host + "/" + ns
}

// BootID names this machine since its last boot (the kernel's random
// boot_id) and the pid namespace: two machines with the same host name
// differ in it. "" where it cannot be read.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return strings.TrimSpace(string(b)) + "/" + ns
}
