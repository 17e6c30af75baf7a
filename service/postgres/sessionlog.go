package postgres

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrLog means a server log could not be read.
var ErrLog = errors.New("postgres: server log")

// SessionCause is why a session ended, as the server's log says.
type SessionCause string

// Session causes, from the log lines before a session's disconnection line.
const (
	// CauseClient: the client closed the session (no other reason logged).
	CauseClient SessionCause = "client closed"
	// CauseClientLost: the connection broke (reset, EOF without goodbye).
	CauseClientLost SessionCause = "connection lost"
	// CauseTerminated: pg_terminate_backend ("administrator command").
	CauseTerminated SessionCause = "terminated by administrator"
	// CauseIdleInTransaction: idle_in_transaction_session_timeout.
	CauseIdleInTransaction SessionCause = "idle-in-transaction timeout"
	// CauseIdleSession: idle_session_timeout.
	CauseIdleSession SessionCause = "idle-session timeout"
	// CauseServer: the server ended it for another reason (shutdown, a
	// crash of another backend); Detail has the line.
	CauseServer SessionCause = "ended by the server"
)

// SessionEnd is one session's end as the server logged it.
type SessionEnd struct {
	PID int32
	// Time is when the server logged the first reason for the end (or the
	// disconnection itself, for a client that closed), to the millisecond.
	Time  time.Time
	Cause SessionCause
	// Detail is the log message that gave the cause ("" for CauseClient).
	Detail string
}

// logLine is a log line's prefix (log_line_prefix '%m [%p] ', UTC), level
// and message.
var logLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+) \[(\d+)\] (\w+):\s+(.*)$`)

// causes maps a message's beginning to its cause, most specific first.
var causes = []struct {
	prefix string
	cause  SessionCause
}{
	{"terminating connection due to administrator command", CauseTerminated},
	{"terminating connection due to idle-in-transaction timeout", CauseIdleInTransaction},
	{"terminating connection due to idle-session timeout", CauseIdleSession},
	{"terminating connection", CauseServer},
	{"could not receive data from client", CauseClientLost},
	{"could not send data to client", CauseClientLost},
	{"unexpected EOF on client connection", CauseClientLost},
	{"connection to client lost", CauseClientLost},
}

// SessionEnds reads a node's server.log (Node.LogPath) and returns every
// session that ended there, in the log's order: its backend pid, when,
// and why. A session still open, or ended by a kill of the server (which
// logs nothing), is not listed.
func SessionEnds(logPath string) ([]SessionEnd, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLog, err)
	}
	defer f.Close()
	pending := map[int32]SessionEnd{} // a cause seen, the disconnection not yet
	var ends []SessionEnd
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m := logLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue // a continuation line, or not ours
		}
		at, err := time.Parse("2006-01-02 15:04:05.000 MST", m[1])
		if err != nil {
			continue
		}
		pid64, _ := strconv.ParseInt(m[2], 10, 32)
		pid, msg := int32(pid64), m[4]
		if strings.HasPrefix(msg, "disconnection:") {
			end, ok := pending[pid]
			if !ok {
				end = SessionEnd{PID: pid, Time: at, Cause: CauseClient}
			}
			delete(pending, pid)
			ends = append(ends, end)
			continue
		}
		if _, seen := pending[pid]; seen {
			continue // the first reason is the one
		}
		for _, c := range causes {
			if strings.HasPrefix(msg, c.prefix) {
				pending[pid] = SessionEnd{PID: pid, Time: at, Cause: c.cause, Detail: msg}
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLog, logPath, err)
	}
	return ends, nil
}
