package deployment

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// How a consensus relay knows who calls: the sender's member id on each
// raft request, else the process that opened the connection.

// peerSender reads the head of the first HTTP request on a peer
// connection and returns the calling member's id in hex: its
// X-Server-From, or, for a request that names none (a follower's
// forwarded lease renewal, /leases; a probe), the member whose process
// holds the connection's other end; "" when neither tells. The reader
// gives back every byte read.
func (st *consensusState) peerSender(c net.Conn) (string, io.Reader, error) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	br := bufio.NewReaderSize(c, 4096)
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if err != nil {
			return "", nil, fmt.Errorf("peer request head: %w", err)
		}
		if len(line) <= 2 { // the blank line ends the head
			break
		}
		if len(head) > 64<<10 {
			return "", nil, errors.New("peer request head over 64 KiB")
		}
	}
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(string(head))))
	if err != nil {
		return "", nil, err
	}
	rd := io.MultiReader(strings.NewReader(string(head)), br)
	if from := req.Header.Get("X-Server-From"); from != "" {
		return from, rd, nil
	}
	if i, ok := st.owner(c); ok {
		st.mu.Lock()
		defer st.mu.Unlock()
		return strconv.FormatUint(st.ids[i], 16), rd, nil
	}
	return "", rd, nil
}

// pidNode is a member whose process the harness runs (process backend).
type pidNode interface{ PID() int }

// owner finds the member whose process opened c: the socket whose local
// port is c's remote one, from /proc/net/tcp, then the member holding
// that socket among its open files. Linux, and members this process
// runs; false otherwise.
func (st *consensusState) owner(c net.Conn) (int, bool) {
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return -1, false
	}
	inode, ok := socketInode(remote.Port, local.Port)
	if !ok {
		return -1, false
	}
	st.mu.Lock()
	nodes := st.nodes
	st.mu.Unlock()
	want := "socket:[" + inode + "]"
	for i, n := range nodes {
		p, ok := n.(pidNode)
		if !ok || p.PID() == 0 {
			continue
		}
		dir := "/proc/" + strconv.Itoa(p.PID()) + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == want {
				return i, true
			}
		}
	}
	return -1, false
}

// socketInode is the inode of the IPv4 TCP socket from local port lport
// to remote port rport, from /proc/net/tcp.
func socketInode(lport, rport int) (string, bool) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return "", false
	}
	lsuf, rsuf := fmt.Sprintf(":%04X", lport), fmt.Sprintf(":%04X", rport)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], lsuf) && strings.HasSuffix(f[2], rsuf) {
			return f[9], true
		}
	}
	return "", false
}
