package lockchaostest_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGoGuide = flag.Bool("update-go-guide", false, "rewrite docs/go.md's code blocks from the files they show")

// docsBlockRE finds the code between "// docs:begin NAME" and
// "// docs:end NAME" in a Go file.
var docsBlockRE = regexp.MustCompile(`(?ms)^// docs:begin (\w+)\n(.*?\n)// docs:end (\w+)\n`)

// guideBlockRE finds a block of docs/go.md marked as a copy of one:
// "<!-- code: lockchaostest/FILE NAME -->" then a go block.
var guideBlockRE = regexp.MustCompile("(?s)<!-- code: lockchaostest/(\\S+) (\\w+) -->\n```go\n(.*?)```\n")

// TestGoGuideShowsTestedCode holds docs/go.md to the code go test builds
// and runs: each marked block is, word for word, the code between
// "docs:begin NAME" and "docs:end NAME" in the file it names (a driver in
// testdata included). -update-go-guide rewrites the guide's blocks.
func TestGoGuideShowsTestedCode(t *testing.T) {
	guidePath := filepath.Join("..", "docs", "go.md")
	guide, err := os.ReadFile(guidePath)
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	var stale []string
	updated := guideBlockRE.ReplaceAllStringFunc(string(guide), func(block string) string {
		m := guideBlockRE.FindStringSubmatch(block)
		file, name, got := m[1], m[2], m[3]
		blocks++
		want, err := docsBlock(file, name)
		if err != nil {
			t.Error(err)
			return block
		}
		if got != want {
			stale = append(stale, file+" "+name)
		}
		return strings.Replace(block, "```go\n"+got, "```go\n"+want, 1)
	})
	if blocks == 0 {
		t.Fatal("docs/go.md shows no <!-- code: lockchaostest/FILE NAME --> blocks")
	}
	if len(stale) == 0 {
		return
	}
	if *updateGoGuide {
		if err := os.WriteFile(guidePath, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("docs/go.md: rewrote blocks %v", stale)
		return
	}
	t.Errorf("docs/go.md's blocks %v differ from the code; go test ./lockchaostest -run TestGoGuideShowsTestedCode -update-go-guide rewrites them", stale)
}

// docsBlock is the code file marks as block name.
func docsBlock(file, name string) (string, error) {
	src, err := os.ReadFile(filepath.FromSlash(file))
	if err != nil {
		return "", err
	}
	for _, m := range docsBlockRE.FindAllStringSubmatch(string(src), -1) {
		if m[1] == name && m[3] == name {
			return strings.TrimRight(m[2], "\n") + "\n", nil
		}
	}
	return "", &os.PathError{Op: "docs block " + name, Path: file, Err: os.ErrNotExist}
}
