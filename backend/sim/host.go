package sim

import (
	"flag"
	"io"
	"os"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Host runs body with a Backend that makes synctest bubbles in a program
// that is not a test (the lockchaos command), and returns body's result.
//
// Since Go 1.25 a bubble can only be made by synctest.Test, which needs a
// *testing.T, and the experimental synctest.Run is gone. Host gets one the
// way a test binary does: testing.MainStart with a testDeps of its own
// (its methods are exported; see testing/internal/testdeps) and a single
// test whose body is body. Every cell's bubble is a synctest.Test on that
// T, from as many goroutines as run cells. The testing framework's own
// output is kept out of the way: its flags are parsed from an empty list
// (never from the command line, which is the program's), its -v is off so
// no "=== RUN" lines are written, and its closing "PASS" goes to
// /dev/null.
//
// testing.MainStart "is not meant to be called directly and is not
// subject to the Go 1 compatibility document": a Go release may change
// its signature, and this file then stops compiling (loudly, never
// silently), as do the tests that use it.
//
// Host may be called once per process (the testing package keeps state
// from one run).
func Host(body func(b Backend) int) int {
	var code int
	var mu sync.Mutex // the test goroutine writes code; Host reads it
	tests := []testing.InternalTest{{Name: "lockchaos-sim", F: func(t *testing.T) {
		b := New(func(f func()) { synctest.Test(t, func(*testing.T) { f() }) })
		c := body(b)
		mu.Lock()
		code = c
		mu.Unlock()
		hideStdout()
	}}}
	m := testing.MainStart(deps{}, tests, nil, nil, nil)
	if !flag.Parsed() {
		// MainStart registered testing's flags on the default set; give
		// them their defaults rather than let m.Run parse os.Args.
		_ = flag.CommandLine.Parse(nil)
	}
	defer restoreStdout()
	defer quietTestFlags()()
	m.Run()
	mu.Lock()
	defer mu.Unlock()
	return code
}

// quietTestFlags turns off, until the returned func restores them, the
// testing flags a test binary was given that make a run write files or
// repeat itself, and returns the restore. Host inside a test binary (the
// CLI's tests run the simulated backend in process) would otherwise make
// its second testing run act on the outer test's flags: recreate and close
// go test's -test.testlogfile under it (the outer run then fails with
// "can't write testlog.txt: file already closed"), rewrite its profiles,
// run the body -count times, arm a second -timeout.
func quietTestFlags() (restore func()) {
	quiet := map[string]string{
		"test.testlogfile": "", "test.cpuprofile": "", "test.memprofile": "", "test.blockprofile": "",
		"test.mutexprofile": "", "test.trace": "", "test.coverprofile": "", "test.count": "1",
		"test.timeout": "0", "test.shuffle": "off", "test.failfast": "false", "test.fullpath": "false",
	}
	saved := map[string]string{}
	for name, v := range quiet {
		if f := flag.Lookup(name); f != nil && f.Value.String() != v {
			saved[name] = f.Value.String()
			_ = flag.Set(name, v)
		}
	}
	return func() {
		for name, v := range saved {
			_ = flag.Set(name, v)
		}
	}
}

var stdout struct {
	sync.Mutex
	saved *os.File
}

// hideStdout points os.Stdout at /dev/null until restoreStdout, for the
// one line testing writes after the test (its "PASS"). The program's own
// writers took os.Stdout before Host was called.
func hideStdout() {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	stdout.Lock()
	defer stdout.Unlock()
	stdout.saved = os.Stdout
	os.Stdout = null
}

func restoreStdout() {
	stdout.Lock()
	defer stdout.Unlock()
	if stdout.saved != nil {
		_ = os.Stdout.Close()
		os.Stdout = stdout.saved
		stdout.saved = nil
	}
}

// deps is the testDeps testing.MainStart needs: no matching (the one test
// always runs), no profiles, no fuzzing, no coverage.
type deps struct{}

// corpusEntry is the testing package's corpus entry type (an alias of this
// unnamed struct type there, so the methods below match its interface).
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

func (deps) ImportPath() string                          { return "" }
func (deps) ModulePath() string                          { return "" }
func (deps) MatchString(pat, str string) (bool, error)   { return true, nil }
func (deps) SetPanicOnExit0(bool)                        {}
func (deps) StartCPUProfile(io.Writer) error             { return nil }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return nil }
func (deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return nil
}
func (deps) RunFuzzWorker(func(corpusEntry) error) error              { return nil }
func (deps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) { return nil, nil }
func (deps) CheckCorpus([]any, []reflect.Type) error                  { return nil }
func (deps) ResetCoverage()                                           {}
func (deps) SnapshotCoverage()                                        {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
