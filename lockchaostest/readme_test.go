package lockchaostest_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the README's Go blocks from example_test.go")

// exampleBlockRE finds the code between "// readme:begin NAME" and
// "// readme:end NAME" in example_test.go.
var exampleBlockRE = regexp.MustCompile(`(?ms)^// readme:begin (\w+)\n(.*?\n)// readme:end (\w+)\n`)

// readmeBlockRE finds a README code block marked as a copy of one.
var readmeBlockRE = regexp.MustCompile("(?s)<!-- readme: lockchaostest/example_test.go (\\w+) -->\n```go\n(.*?)```\n")

// TestREADMEShowsTheExample holds the README's "Testing your own lock
// from Go" to the code go test runs: each block marked
// "<!-- readme: lockchaostest/example_test.go NAME -->" is the code between
// "readme:begin NAME" and "readme:end NAME" in example_test.go, word for
// word, and every such piece is in the README once. After a change to the
// example, -update-readme rewrites the README's blocks.
func TestREADMEShowsTheExample(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readmePath := filepath.Join("..", "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	code := map[string]string{}
	for _, m := range exampleBlockRE.FindAllStringSubmatch(string(src), -1) {
		if m[1] != m[3] {
			t.Fatalf("example_test.go: readme:begin %s ends with readme:end %s", m[1], m[3])
		}
		code[m[1]] = strings.TrimRight(m[2], "\n") + "\n"
	}
	if len(code) == 0 {
		t.Fatal("example_test.go has no readme:begin/readme:end blocks")
	}
	shown := map[string]int{}
	var stale []string
	updated := readmeBlockRE.ReplaceAllStringFunc(string(readme), func(block string) string {
		m := readmeBlockRE.FindStringSubmatch(block)
		name, got := m[1], m[2]
		shown[name]++
		want, ok := code[name]
		if !ok {
			t.Errorf("README.md shows block %q, which example_test.go does not mark", name)
			return block
		}
		if got != want {
			stale = append(stale, name)
		}
		return strings.Replace(block, "```go\n"+got, "```go\n"+want, 1)
	})
	for name := range code {
		if shown[name] != 1 {
			t.Errorf("README.md shows example_test.go's block %q %d times, want once", name, shown[name])
		}
	}
	if len(stale) == 0 {
		return
	}
	if *updateREADME {
		if err := os.WriteFile(readmePath, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("README.md: rewrote blocks %v", stale)
		return
	}
	t.Errorf("README.md's blocks %v differ from example_test.go's code; "+
		"go test ./lockchaostest -run TestREADMEShowsTheExample -update-readme rewrites them", stale)
}
