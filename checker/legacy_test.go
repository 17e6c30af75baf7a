package checker_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// Histories of formats 1 to 4 (testdata, and testdata/formats: recorded
// by the lockchaos of their day, windows and judgments as words) load into format 5's typed
// fields, and mean the same once written as format 5: the events read
// back equal, and the checker's report is the same, word for word.
func TestOldFormatsCheckTheSameAsFormat5(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	older, _ := filepath.Glob("testdata/formats/*.jsonl")
	files = append(files, older...)
	formats := map[int]bool{}
	elapsed := regexp.MustCompile(`"elapsed_ns":\d+`)
	for _, f := range files {
		old := load(t, strings.TrimPrefix(filepath.ToSlash(f), "testdata/"))
		formats[old.Header.Format] = true
		path := filepath.Join(t.TempDir(), "h.jsonl")
		if err := history.WriteFile(path, old); err != nil {
			t.Fatal(err)
		}
		now, err := history.LoadFile(path)
		if err != nil {
			t.Fatalf("%s as format %d: %v", f, history.FormatVersion, err)
		}
		if now.Header.Format != history.FormatVersion || !reflect.DeepEqual(old.Events, now.Events) {
			t.Errorf("%s: format %d, events differ once written as format %d", f, now.Header.Format, history.FormatVersion)
		}
		a, _ := json.Marshal(check(t, old))
		b, _ := json.Marshal(check(t, now))
		if x, y := elapsed.ReplaceAll(a, nil), elapsed.ReplaceAll(b, nil); string(x) != string(y) {
			t.Errorf("%s: the report differs once written as format %d:\n%s\n%s", f, history.FormatVersion, x, y)
		}
	}
	for v := 1; v < history.FormatVersion; v++ {
		if !formats[v] {
			t.Errorf("no testdata history of format %d", v)
		}
	}
}

// What formats 1 to 4 wrote as words reads back typed.
func TestOldWordsReadBackTyped(t *testing.T) {
	ms := time.Millisecond
	obs := history.LeaseObserved
	for _, c := range []struct {
		file      string
		hit       history.Hit
		exercised bool
		lease     string
	}{
		{"formats/format3-pod-crash.jsonl", history.Hit{Pods: []int{5}, StopsHolder: true, Abandons: true, Restart: 200 * ms}, true, ""},
		{"formats/format4-pod-crash.jsonl", history.Hit{Pods: []int{5}, StopsHolder: true, Abandons: true, Restart: 200 * ms}, true, obs},
		{"formats/format4-abandoned-fenced.jsonl", history.Hit{Pods: []int{4}, StopsHolder: true, Abandons: true}, true, obs},
		{"formats/format4-client-partition.jsonl", history.Hit{Pods: []int{0}, Direction: "both", StopsHolder: true, Links: []string{"client0->node0"}}, true, obs},
		{"formats/format4-clock-jump.jsonl", history.Hit{Nodes: []string{"node2"}, Jump: 600 * ms, BareMajority: true}, false, obs},
		{"formats/format4-minority-partition.jsonl", history.Hit{Nodes: []string{"node2"}, Direction: "both", Down: []string{"node2"}}, true, ""},
		{"formats/format4-failover.jsonl", history.Hit{Nodes: []string{"primary", "replica"}}, true, history.LeaseAssumed},
		{"formats/format4-slow-reply.jsonl", history.Hit{Delay: 450 * ms, Links: []string{"client0->node0", "client1->node0"}}, true, obs},
	} {
		h := load(t, c.file)
		var w, j *history.Event
		for i := range h.Events {
			switch e := &h.Events[i]; {
			case e.Kind == history.Fault && w == nil:
				w = e
			case e.Kind == history.Exercised && w != nil && e.Judged().Window == w.ID:
				j = e
			case e.Kind == history.Witness && (e.Node() == "" || e.Value != 0):
				t.Errorf("%s: witness op %d: node %q, value %d", c.file, e.ID, e.Node(), e.Value)
			}
		}
		if w == nil || !reflect.DeepEqual(w.Hit(), c.hit) {
			t.Fatalf("%s: window %+v, want %+v", c.file, w, c.hit)
		}
		if j == nil || j.Judged().Exercised != c.exercised || j.Judged().Lease != c.lease || j.Value != 0 || j.Fault() != w.Fault() ||
			!reflect.DeepEqual(j.Hit(), c.hit) || j.Outcome != history.Ok {
			t.Errorf("%s: judgment of op %d: %+v %+v", c.file, w.ID, j, j.Judged())
		}
	}
	h := load(t, "formats/format4-failover.jsonl")
	for _, e := range h.Events {
		if e.Kind == history.Probe && (e.Probed() != history.Probed{Node: "replica"} || e.Value != 0) {
			t.Errorf("the probe of the promoted replica: %+v, value %d", e.Probed(), e.Value)
		}
	}
	h = load(t, "formats/format4-abandoned-fenced.jsonl")
	for _, e := range h.Events {
		if e.Kind == history.Witness && e.Token == "1" && e.ServerOp() == history.ServerSet {
			if a := e.ServerAct(); a.Node != "node0" || a.ServerKey != "order:1:fence" || a.Deadline != 86400000210773 {
				t.Errorf("the fence key's write: %+v", a)
			}
			return
		}
	}
	t.Error("no witness event for the fence key")
}
