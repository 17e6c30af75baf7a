package sim

import (
	"flag"
	"testing"
)

// Host's own testing run must not act on the flags go test gave the
// binary it runs in: a -test.testlogfile recreated and closed under the
// outer run failed every cacheable `go test` of the CLI that ran a
// simulated cell ("can't write testlog.txt: file already closed").
func TestQuietTestFlagsTurnsOffAndRestores(t *testing.T) {
	count := flag.Lookup("test.count").Value.String()
	_ = flag.Set("test.testlogfile", "/tmp/outer-testlog.txt")
	defer func() { _ = flag.Set("test.testlogfile", "") }()
	_ = flag.Set("test.count", "3")
	defer func() { _ = flag.Set("test.count", count) }()

	restore := quietTestFlags()
	if v := flag.Lookup("test.testlogfile").Value.String(); v != "" {
		t.Errorf("inside Host: testlogfile = %q, want it off", v)
	}
	if v := flag.Lookup("test.count").Value.String(); v != "1" {
		t.Errorf("inside Host: count = %q, want 1", v)
	}
	restore()
	if v := flag.Lookup("test.testlogfile").Value.String(); v != "/tmp/outer-testlog.txt" {
		t.Errorf("after Host: testlogfile = %q, want the outer run's back", v)
	}
	if v := flag.Lookup("test.count").Value.String(); v != "3" {
		t.Errorf("after Host: count = %q, want 3", v)
	}
}
