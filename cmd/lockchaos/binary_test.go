package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The tests that run lockchaos as a user does share one build of it and
// of the Go driver, made on first use: each used to build its own (eight
// builds of one binary in one package run). The tests of this package run
// one at a time (none is parallel), so one binary serves them all.
var built struct {
	once     sync.Once
	dir      string
	bin, drv string
	err      error
	out      []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// binaries returns the built lockchaos and lockchaos-driver, building
// them once for the package's tests.
func binaries(t *testing.T) (bin, driver string) {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "lockchaos-test-bin-"); built.err != nil {
			return
		}
		built.bin, built.drv = filepath.Join(built.dir, "lockchaos"), filepath.Join(built.dir, "lockchaos-driver")
		for target, pkg := range map[string]string{built.bin: ".", built.drv: "../lockchaos-driver"} {
			if built.out, built.err = exec.Command("go", "build", "-o", target, pkg).CombinedOutput(); built.err != nil {
				return
			}
		}
	})
	if built.err != nil {
		t.Fatalf("build: %v\n%s", built.err, built.out)
	}
	return built.bin, built.drv
}

// lockchaosBinary is the built lockchaos.
func lockchaosBinary(t *testing.T) string {
	t.Helper()
	bin, _ := binaries(t)
	return bin
}
