package process

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// PowerLoss implements backend.PowerLossNode: SIGKILL, then the file cut as a
// power cut would leave it. With everysec Redis fsyncs about once a
// second, so what it wrote in the current second is in the page cache
// only: the AOF's timestamp annotations mark each second, and the file is
// cut at the first mark of the current second (nothing when it has none).
// With always, every reply came after its fsync, and nothing more is lost.
// (SIGKILL alone can already lose an acknowledged everysec write: Redis
// postpones the write while a background fsync runs, and replies anyway.)
func (n *Node) PowerLoss() (int64, error) {
	if !n.cfg.Persistence {
		return 0, fmt.Errorf("%w: node %s has no append-only file (Persistence is off)", backend.ErrInvalidConfig, n.cfg.Name)
	}
	// The second the power went, read before anything else takes time.
	now := time.Now().Add(n.ClockOffset()).Unix()
	if err := n.Kill(); err != nil {
		return 0, err
	}
	if n.cfg.Fsync != "everysec" {
		return 0, nil
	}
	path, err := lastIncrAOF(filepath.Join(n.dir, "appendonlydir"))
	if err != nil || path == "" {
		return 0, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("process: node %s: %w", n.cfg.Name, err)
	}
	cut := firstMarkSince(b, now)
	if cut < 0 {
		return 0, nil
	}
	if err := os.Truncate(path, int64(cut)); err != nil {
		return 0, fmt.Errorf("process: node %s: %w", n.cfg.Name, err)
	}
	return int64(len(b) - cut), nil
}

// firstMarkSince returns the offset of the first "#TS:<sec>" line of an
// AOF with sec >= since, or -1.
func firstMarkSince(aof []byte, since int64) int {
	for off := 0; off < len(aof); {
		i := bytes.Index(aof[off:], []byte("#TS:"))
		if i < 0 {
			return -1
		}
		at := off + i
		end := bytes.IndexByte(aof[at:], '\r')
		if (at == 0 || aof[at-1] == '\n') && end > 0 {
			if sec, err := strconv.ParseInt(string(aof[at+4:at+end]), 10, 64); err == nil && sec >= since {
				return at
			}
		}
		off = at + 4
	}
	return -1
}

// lastIncrAOF returns the incremental AOF file the manifest lists last
// (Redis 7's multi-part AOF), or "" when there is none.
func lastIncrAOF(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "appendonly.aof.manifest"))
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("process: AOF manifest: %w", err)
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "file appendonly.aof.2.incr.aof seq 2 type i"
		fields := strings.Fields(sc.Text())
		if len(fields) >= 6 && fields[0] == "file" && fields[5] == "i" {
			last = fields[1]
		}
	}
	if last == "" {
		return "", sc.Err()
	}
	return filepath.Join(dir, last), sc.Err()
}

var _ backend.PowerLossNode = (*Node)(nil)
