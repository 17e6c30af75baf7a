package checker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lockchaos/lockchaos/history"
)

// The op sources answer Key, Call and Return for an index exactly as the
// operation Build makes for it, and segment the same way as the built
// operations do: the checker reads the first to cut and the second to
// check, so a mismatch would check other operations than it cut.
func TestOpSourcesAgreeWithWhatTheyBuild(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no testdata histories")
	}
	for _, f := range files {
		h, err := history.LoadFile(f)
		if err != nil {
			if _, statErr := os.Stat(f); statErr == nil {
				continue // a deliberately broken history
			}
			t.Fatal(err)
		}
		evs := sortedEvents(h)
		for name, src := range map[string]opSource{"lock": newLockOps(holdsOf(evs)), "counter": newCounterOps(evs)} {
			built := src.Build(allOf(src))
			for i, op := range built {
				if src.Key(i) != op.Metadata.(*keyed).key || src.Call(i) != op.Call || src.Return(i) != op.Return {
					t.Errorf("%s %s op %d: source says %s %d..%d, built %s %d..%d", f, name, i,
						src.Key(i), src.Call(i), src.Return(i), op.Metadata.(*keyed).key, op.Call, op.Return)
				}
			}
			sm := lockSegmented
			if name == "counter" {
				sm = counterSegmented
			}
			var a, b []int
			sm.eachSegment(src, nil, func(s segment) { a = append(a, len(s.ops)) })
			sm.eachSegment(opSlice(built), nil, func(s segment) { b = append(b, len(s.ops)) })
			if len(a) != len(b) {
				t.Errorf("%s %s: %d segments from the source, %d from the built operations", f, name, len(a), len(b))
				continue
			}
			for i := range a {
				if a[i] != b[i] {
					t.Errorf("%s %s segment %d: %d ops from the source, %d built", f, name, i, a[i], b[i])
				}
			}
		}
	}
}
