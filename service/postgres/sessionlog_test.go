package postgres

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSessionEndsCauses(t *testing.T) {
	log := `2026-12-03 16:45:01.100 UTC [10] LOG:  disconnection: session time: 0:00:00.010 user=lockchaos database=lockchaos host=127.0.0.1 port=4000
2026-12-03 16:45:01.200 UTC [11] FATAL:  terminating connection due to idle-in-transaction timeout
2026-12-03 16:45:01.201 UTC [11] LOG:  disconnection: session time: 0:00:01.000 user=lockchaos database=lockchaos host=127.0.0.1 port=4001
2026-12-03 16:45:01.300 UTC [12] FATAL:  terminating connection due to idle-session timeout
2026-12-03 16:45:01.301 UTC [12] LOG:  disconnection: session time: 0:00:01.000 user=lockchaos database=lockchaos host=127.0.0.1 port=4002
2026-12-03 16:45:01.400 UTC [13] LOG:  could not receive data from client: Connection reset by peer
2026-12-03 16:45:01.401 UTC [13] LOG:  unexpected EOF on client connection with an open transaction
2026-12-03 16:45:01.402 UTC [13] LOG:  disconnection: session time: 0:00:01.000 user=lockchaos database=lockchaos host=127.0.0.1 port=4003
2026-12-03 16:45:01.500 UTC [14] ERROR:  canceling statement due to lock timeout
2026-12-03 16:45:01.501 UTC [14] STATEMENT:  SELECT 1
2026-12-03 16:45:01.600 UTC [15] FATAL:  terminating connection due to administrator command
2026-12-03 16:45:01.601 UTC [15] LOG:  disconnection: session time: 0:00:01.000 user=lockchaos database=lockchaos host=127.0.0.1 port=4005
`
	path := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	ends, err := SessionEnds(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		pid   int32
		cause SessionCause
		ms    int
	}{{10, CauseClient, 100}, {11, CauseIdleInTransaction, 200}, {12, CauseIdleSession, 300},
		{13, CauseClientLost, 400}, {15, CauseTerminated, 600}}
	if len(ends) != len(want) {
		t.Fatalf("got %d ends, want %d: %+v", len(ends), len(want), ends)
	}
	for i, w := range want {
		at := time.Date(2026, 12, 3, 16, 45, 1, w.ms*int(time.Millisecond), time.UTC)
		if e := ends[i]; e.PID != w.pid || e.Cause != w.cause || !e.Time.Equal(at) {
			t.Errorf("end %d: %+v, want pid %d %q at %v", i, e, w.pid, w.cause, at)
		}
	}
	if _, err := SessionEnds(filepath.Join(t.TempDir(), "none.log")); !errors.Is(err, ErrLog) {
		t.Fatalf("a missing log: %v, want ErrLog", err)
	}
}
