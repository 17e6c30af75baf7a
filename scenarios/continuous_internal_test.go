package scenarios

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

// TestContinuousPartWithNoEventsIsUnknown: a continuous part whose
// history stays a header (its pods never started) is checked by the rules
// of every reader of a history (verify.Reader): nothing was checked, so
// nothing passed.
func TestContinuousPartWithNoEventsIsUnknown(t *testing.T) {
	part := Part{Continuous: true, History: filepath.Join(t.TempDir(), "history.jsonl")}
	p := &Plan{Scenario: Scenario{Name: "baseline", TTL: time.Second}, Budget: time.Second}
	rec, err := history.NewRecorder(part.History, history.Header{Scenario: "baseline", Lock: "token", Clients: 2,
		TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := startStreamer(context.Background(), p, part, rec)
	if err != nil {
		t.Fatal(err)
	}
	s.judgeRest()
	if _, err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rep, sum, _, err := s.finish()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Events != 0 || rep.Verdict != checker.Unknown || rep.Evidence.Enough ||
		rep.Result(checker.MutualExclusion).Status != checker.Unknown {
		t.Fatalf("%d events: %s, enough %v, mutual exclusion %s", sum.Events, rep.Verdict, rep.Evidence.Enough,
			rep.Result(checker.MutualExclusion).Status)
	}
}
