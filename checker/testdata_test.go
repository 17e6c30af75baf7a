package checker_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/history"
)

func load(t testing.TB, name string) *history.History {
	t.Helper()
	h, err := history.LoadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func check(t testing.TB, h *history.History) *checker.Report {
	t.Helper()
	return checker.Check(context.Background(), h, checker.Options{Budget: 10 * time.Second, InfoLimit: 1000})
}

// want is the expected status and violation count of each property.
type want struct {
	verdict      checker.Status
	me, res, fr  checker.Status
	nME, nRes    int
	nFR          int
	meDecisive   bool
	sentenceBits []string
}

func TestHandMadeHistories(t *testing.T) {
	P, F := checker.Pass, checker.Fail
	cases := map[string]want{
		"pass.jsonl":                    {verdict: P, me: P, res: P, fr: P, meDecisive: true},
		"overlap.jsonl":                 {verdict: F, me: F, res: P, fr: P, nME: 1, meDecisive: true, sentenceBits: []string{"client 0 held order:1 from 0.001 s to 0.050 s while client 1 held it from 0.031 s (overlap 19.0 ms)"}},
		"lost-update.jsonl":             {verdict: F, me: F, res: F, fr: P, nME: 1, nRes: 1, meDecisive: true, sentenceBits: []string{"both read 0 and wrote 1: one increment lost"}},
		"stale-fence-rejected.jsonl":    {verdict: P, me: F, res: P, fr: P, nME: 1, meDecisive: false},
		"stale-fence-writes-only.jsonl": {verdict: F, me: F, res: F, fr: P, nME: 1, nRes: 1, meDecisive: false, sentenceBits: []string{"one increment lost"}},
		"indefinite-write.jsonl":        {verdict: P, me: P, res: P, fr: P, meDecisive: true},
		"foreign-release.jsonl":         {verdict: F, me: F, res: P, fr: F, nME: 2, nFR: 1, meDecisive: true, sentenceBits: []string{"client 0's release of order:1 at 0.050 s removed a lock it no longer held: client 1 had acquired order:1 at 0.041 s"}},
		"crashed.jsonl":                 {verdict: P, me: P, res: P, fr: P, meDecisive: true},
		"crashed-write-seen.jsonl":      {verdict: F, me: F, res: P, fr: P, nME: 1, meDecisive: true},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			rep := check(t, load(t, name))
			me, res, fr := rep.Result(checker.MutualExclusion), rep.Result(checker.ResourceLinearizable), rep.Result(checker.ForeignRelease)
			if rep.Verdict != w.verdict {
				t.Errorf("verdict %s, want %s", rep.Verdict, w.verdict)
			}
			for _, c := range []struct {
				r      *checker.Result
				status checker.Status
				n      int
			}{{me, w.me, w.nME}, {res, w.res, w.nRes}, {fr, w.fr, w.nFR}} {
				if c.r.Status != c.status || c.r.ViolationCount != c.n {
					t.Errorf("%s: %s with %d violation(s), want %s with %d (%s) %v", c.r.Property, c.r.Status, c.r.ViolationCount, c.status, c.n, c.r.Note, c.r.Violations)
				}
			}
			if me.Decisive != w.meDecisive {
				t.Errorf("mutual-exclusion decisive = %v, want %v", me.Decisive, w.meDecisive)
			}
			all := ""
			for _, r := range rep.Results {
				for _, v := range r.Violations {
					all += v.Summary + "\n"
				}
			}
			for _, bit := range w.sentenceBits {
				if !strings.Contains(all, bit) {
					t.Errorf("no violation says %q; got:\n%s", bit, all)
				}
			}
			if rep.Verdict == checker.Fail && rep.Stats.FirstViolation < 0 {
				t.Error("failing history without a time to first violation")
			}
		})
	}
}

func TestCrashedHistoryWarnsAboutOpenOperations(t *testing.T) {
	rep := check(t, load(t, "crashed.jsonl"))
	if len(rep.Warnings) == 0 || !strings.Contains(rep.Warnings[0], "1 operation(s) have no recorded return") {
		t.Fatalf("warnings %v", rep.Warnings)
	}
}

func TestStatsOnHandMadeHistory(t *testing.T) {
	rep := check(t, load(t, "pass.jsonl"))
	s := rep.Stats
	if s.AcquireOK != 6 || s.AcquireRefused != 6 || s.Cycles != 6 || s.Writes != 6 || s.Reads != 6 {
		t.Fatalf("stats %+v", s)
	}
	if s.AcquireP50 != int64(time.Millisecond) {
		t.Fatalf("acquire p50 %d, want 1ms", s.AcquireP50)
	}
	// Client (c+1)%3 starts trying at t+0.5 (refused) and keeps trying
	// until its acquire of the next cycle returns at t+9; the hold between
	// ends at the release call at t+6: free while trying from t+6 to t+9.
	if s.LongestFree != int64(3*time.Millisecond) {
		t.Fatalf("longest free while trying %d, want 3ms", s.LongestFree)
	}
}

func TestLinearizationInfoKeptForReports(t *testing.T) {
	rep := check(t, load(t, "lost-update.jsonl"))
	res := rep.Result(checker.ResourceLinearizable)
	if res.Info == nil || res.Model == nil {
		t.Fatal("no linearization info for the report")
	}
	if parts := res.Info.PartialLinearizations(); len(parts) != 1 {
		t.Fatalf("%d partitions, want 1 (one key)", len(parts))
	}
}

func TestResultErr(t *testing.T) {
	rep := check(t, load(t, "lost-update.jsonl"))
	if err := rep.Result(checker.ResourceLinearizable).Err(); err == nil || !strings.Contains(err.Error(), "1 violation") {
		t.Fatalf("Err() = %v", err)
	}
	if err := rep.Result(checker.ForeignRelease).Err(); err != nil {
		t.Fatalf("passing result Err() = %v", err)
	}
}

// TestRulesReadTheHeaderNotTheLockName: what the history records about the
// resource and the lock decides the rules, whatever the lock is called.
func TestRulesReadTheHeaderNotTheLockName(t *testing.T) {
	h := load(t, "stale-fence-rejected.jsonl") // overlapping holds, fences checked
	if rep := check(t, h); rep.Verdict != checker.Pass || rep.Stats.Overlaps == 0 {
		t.Fatalf("fenced history: %s with %d overlaps, want pass with some", rep.Verdict, rep.Stats.Overlaps)
	}
	renamed := *h
	renamed.Header.Lock = "my-own-fencing-lock"
	if rep := check(t, &renamed); rep.Verdict != checker.Pass {
		t.Fatalf("same history under another lock name: %s, want pass", rep.Verdict)
	}
	unchecked := *h
	unchecked.Header.Fencing = "off" // a fencing lock whose resource checks nothing
	rep := check(t, &unchecked)
	if me := rep.Result(checker.MutualExclusion); !me.Decisive || rep.Verdict != checker.Fail {
		t.Fatalf("fences unchecked: mutual-exclusion decisive %v, verdict %s; want decisive and fail", me.Decisive, rep.Verdict)
	}

	fr := load(t, "foreign-release.jsonl")
	if rep := check(t, fr); rep.Result(checker.ForeignRelease).Status != checker.Fail {
		t.Fatal("foreign-release.jsonl: the foreign release was not found")
	}
	inProc := *fr
	inProc.Header.InProcess = true
	if r := check(t, &inProc).Result(checker.ForeignRelease); r.Status != checker.Pass || !strings.Contains(r.Note, "not applicable") {
		t.Fatalf("in-process lock: %s (%s), want a not-applicable pass", r.Status, r.Note)
	}
}

// Windows in quick succession: the violation after both is put down to the
// one that reached its dangerous moment, not the later one that harmed
// nobody.
func TestIncidentFollowsTheExercisedWindowNotMerelyTheLatest(t *testing.T) {
	rep := check(t, load(t, "two-windows.jsonl"))
	if len(rep.Incidents) != 1 {
		t.Fatalf("incidents %+v, want one", rep.Incidents)
	}
	in := rep.Incidents[0]
	if in.Window != 10 || !strings.Contains(in.Cause, "client 0 was paused under its lease") {
		t.Fatalf("incident put down to window %d (%q), want window 10 and its moment", in.Window, in.Cause)
	}
}
