package checker_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockchaos/lockchaos/history"
)

// BenchmarkCheckCLI is the end-to-end figure of the target:
// `lockchaos check` of a 1M-event serial history, under 1 s and 256 MiB.
// It builds the lockchaos binary and runs `lockchaos check FILE` on the
// generated history, so every pass the command runs is in the figure
// (reading, the judgments filled in, every property and liveness, the
// server's view, stats, the printed report), in a process of its own: the
// wall time is the command's, from exec to exit, and the peak RSS its
// maximum resident set (rusage). The history is generated in another
// helper process: Go starts a child with vfork, so the child's maximum
// resident set starts at this process's, which must stay small.
//
//	go test -run '^$' -bench BenchmarkCheckCLI -benchtime 1x ./checker/
//
// LOCKCHAOS_BENCH_KEEP=DIR keeps the generated histories in DIR (for
// profiling the same file by hand).
func BenchmarkCheckCLI(b *testing.B) {
	bin := buildLockchaos(b)
	for _, keys := range []int{1, 10} {
		b.Run(fmt.Sprintf("serial/keys=%d", keys), func(b *testing.B) {
			dir := b.TempDir()
			if keep := os.Getenv("LOCKCHAOS_BENCH_KEEP"); keep != "" {
				dir = keep
			}
			path := filepath.Join(dir, fmt.Sprintf("serial-1m-keys%d.jsonl", keys))
			writeInHelper(b, path, keys)
			b.ResetTimer()
			var wall, cpu time.Duration
			var rssKiB int64
			for range b.N {
				w, c, rss := checkWithCLI(b, bin, path)
				wall, cpu, rssKiB = max(wall, w), max(cpu, c), max(rssKiB, rss)
			}
			b.ReportMetric(wall.Seconds(), "wall-s")
			b.ReportMetric(cpu.Seconds(), "cpu-s")
			b.ReportMetric(float64(rssKiB)/1024, "peak-RSS-MiB")
		})
	}
}

const writeHelperEnv = "LOCKCHAOS_WRITE_HELPER_FILE"

// writeInHelper has a helper process write the serial history of 1M
// events over keys keys to path.
func writeInHelper(b *testing.B, path string, keys int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWriteSerialHelper$", "-test.count", "1")
	cmd.Env = append(os.Environ(), writeHelperEnv+"="+path, fmt.Sprintf("LOCKCHAOS_WRITE_HELPER_KEYS=%d", keys))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("helper: %v\n%s", err, out)
	}
}

// TestWriteSerialHelper is BenchmarkCheckCLI's writer process.
func TestWriteSerialHelper(t *testing.T) {
	path := os.Getenv(writeHelperEnv)
	if path == "" {
		t.Skip("runs only as the helper process of BenchmarkCheckCLI")
	}
	keys, err := strconv.Atoi(os.Getenv("LOCKCHAOS_WRITE_HELPER_KEYS"))
	if err != nil {
		t.Fatal(err)
	}
	if err := history.WriteFile(path, shaped(1_000_000, keys, shapes[1])); err != nil {
		t.Fatal(err)
	}
}

// buildLockchaos builds cmd/lockchaos into a temporary directory.
func buildLockchaos(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "lockchaos")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/lockchaos/lockchaos/cmd/lockchaos").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// checkWithCLI runs `lockchaos check path` and returns its wall time, CPU
// time (user and system: on a shared machine it moves less than wall
// time) and peak RSS in KiB. The generated history passes (its header records no
// evidence floor, so a pass is exit 0).
func checkWithCLI(b *testing.B, bin, path string) (wall, cpu time.Duration, rssKiB int64) {
	b.Helper()
	cmd := exec.Command(bin, "check", path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall = time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		b.Fatal(err)
	}
	if err != nil || !strings.Contains(stdout.String(), "\nverdict: pass\n") {
		b.Fatalf("lockchaos check should pass the generated history: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage for the check process")
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return wall, cpu, ru.Maxrss // KiB on Linux
}
