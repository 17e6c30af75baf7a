package backend

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// Listens reports whether the process pid has a TCP socket listening on
// port (IPv4 or IPv6), read from /proc: the socket's inode in
// /proc/net/tcp{,6} among the process's open files. known is false when
// /proc cannot tell (no /proc, no such listener at all, files not
// readable): the caller then trusts what it saw before.
//
// A node that starts again on a port it held before (a restart after a
// kill) finds the port free only as long as nobody else took it while
// it was down; a dial that connects may reach the stranger while the
// node's own process is still failing to bind (an etcd member's
// restart: every status call to it timed out for 20 s).
func Listens(pid, port int) (listens, known bool) {
	inodes := listeningInodes(port)
	if len(inodes) == 0 || pid <= 0 {
		return false, false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, false
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

// listeningInodes are the inodes of the sockets listening on port.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	hexPort := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(hexPort) < 4 {
		hexPort = "0" + hexPort
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
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
	return out
}
