package lockchaostest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// outputDir is the cell's output folder and whether it outlives the test:
//
//   - Options.OutDir: that folder, kept whatever the outcome (a CI job
//     that archives every history);
//   - go test -artifacts: the test's artifact folder (t.ArtifactDir, under
//     -outputdir, by default the package's folder), kept;
//   - otherwise a temp folder, removed after a passing test, kept (and
//     logged) after a failing one.
func outputDir(t testing.TB, o Options) string {
	t.Helper()
	switch {
	case o.OutDir != "":
		dir, err := filepath.Abs(o.OutDir)
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			t.Fatalf("lockchaostest: Options.OutDir: %v", err)
		}
		logKept(t, dir)
		return dir
	case artifactsKept():
		dir := t.ArtifactDir()
		logKept(t, dir)
		return dir
	}
	return keptOnFailure(t)
}

// artifactsKept says go test ran with -artifacts: t.ArtifactDir is then
// kept under -outputdir, not removed with the test.
func artifactsKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// logKept says, once the test ends (so the line follows the verdict),
// where its cells' files stay.
func logKept(t testing.TB, dir string) {
	t.Cleanup(func() { t.Logf("lockchaostest: history and report kept in %s", dir) })
}

// keptOnFailure makes the cell's output folder: removed after a passing
// test, kept (and logged) after a failing one.
func keptOnFailure(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lockchaostest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("lockchaostest: history and report kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}
