package lockchaostest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the docs' marked Go blocks from the files they show")

// repoRoot is where the README and docs/ are, seen from this package.
const repoRoot = ".."

// docsBlockRE finds the code between "// docs:begin NAME" and
// "// docs:end NAME" in a Go file.
var docsBlockRE = regexp.MustCompile(`(?ms)^// docs:begin (\w+)\n(.*?\n)// docs:end (\w+)\n`)

// markedBlockRE finds a block of a doc marked as a copy of one:
// "<!-- code: PATH NAME -->" (PATH from the repository's root) then a go block.
var markedBlockRE = regexp.MustCompile("(?s)<!-- code: (\\S+) (\\w+) -->\n```go\n(.*?)```\n")

// goBlockRE finds every go block of a doc, marked or not.
var goBlockRE = regexp.MustCompile("(?s)```go\n.*?```\n")

// userDocs are the pages a user reads: the README and docs/*.md, less
// docs/architecture.md, whose recipes sketch code inside the packages
// (a fault kind's init) that no test can build on its own.
func userDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = slices.DeleteFunc(docs, func(p string) bool { return filepath.Base(p) == "architecture.md" })
	return append([]string{filepath.Join(repoRoot, "README.md")}, docs...)
}

// TestDocsShowTestedCode holds the docs' Go to the code go test builds
// and runs: every go block of a user doc is marked
// "<!-- code: PATH NAME -->" and is, word for word, the code between
// "docs:begin NAME" and "docs:end NAME" in PATH; and every block a cited
// file marks is shown somewhere, so a piece of the example cannot drop out
// of the docs unnoticed. -update-docs rewrites stale blocks.
func TestDocsShowTestedCode(t *testing.T) {
	shown := map[string]int{} // "PATH NAME"
	cited := map[string]bool{}
	for _, doc := range userDocs(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if all, marked := len(goBlockRE.FindAllString(text, -1)), len(markedBlockRE.FindAllString(text, -1)); all != marked {
			t.Errorf("%s: %d go block(s), %d marked <!-- code: PATH NAME -->: every Go block on a user's page is a copy of tested code", doc, all, marked)
		}
		var stale []string
		updated := markedBlockRE.ReplaceAllStringFunc(text, func(block string) string {
			m := markedBlockRE.FindStringSubmatch(block)
			file, name, got := m[1], m[2], m[3]
			shown[file+" "+name]++
			cited[file] = true
			want, err := docsBlock(file, name)
			if err != nil {
				t.Errorf("%s: %v", doc, err)
				return block
			}
			if got != want {
				stale = append(stale, file+" "+name)
			}
			return strings.Replace(block, "```go\n"+got, "```go\n"+want, 1)
		})
		if len(stale) == 0 {
			continue
		}
		if *updateDocs {
			if err := os.WriteFile(doc, []byte(updated), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: rewrote blocks %v", doc, stale)
			continue
		}
		t.Errorf("%s: blocks %v differ from the code; go test ./lockchaostest -run TestDocsShowTestedCode -update-docs rewrites them", doc, stale)
	}
	if len(shown) == 0 {
		t.Fatal("no doc shows a <!-- code: PATH NAME --> block")
	}
	for file := range cited {
		for _, name := range docsBlockNames(t, file) {
			if shown[file+" "+name] == 0 {
				t.Errorf("%s marks block %q, which no doc shows", file, name)
			}
		}
	}
}

// docsBlock is the code file (from the repository's root) marks as block name.
func docsBlock(file, name string) (string, error) {
	src, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	if err != nil {
		return "", err
	}
	for _, m := range docsBlockRE.FindAllStringSubmatch(string(src), -1) {
		if m[1] == name && m[3] == name {
			return strings.TrimRight(m[2], "\n") + "\n", nil
		}
	}
	return "", fmt.Errorf("%s marks no block %q (// docs:begin %s ... // docs:end %s)", file, name, name, name)
}

// docsBlockNames are the blocks file marks; a begin whose end names another
// block is an error.
func docsBlockNames(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range docsBlockRE.FindAllStringSubmatch(string(src), -1) {
		if m[1] != m[3] {
			t.Errorf("%s: docs:begin %s ends with docs:end %s", file, m[1], m[3])
		}
		names = append(names, m[1])
	}
	return names
}

// codeRE finds what the docs show as code: fenced blocks and inline spans
// (which may wrap a line).
var codeRE = regexp.MustCompile("(?s)```.*?```|`[^`]+`")

// makeRE finds a make target named in code.
var makeRE = regexp.MustCompile(`\bmake\s+([a-z][a-z0-9-]*)`)

// targetRE finds a target the Makefile defines.
var targetRE = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)

// TestDocsNameMakeTargetsThatExist: every `make TARGET` the docs show is a
// target of the Makefile, so a renamed target cannot leave a newcomer's
// first command broken.
func TestDocsNameMakeTargetsThatExist(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range targetRE.FindAllStringSubmatch(string(mk), -1) {
		targets[m[1]] = true
	}
	named := 0
	for _, doc := range append(userDocs(t), filepath.Join(repoRoot, "docs", "architecture.md")) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// Go code is not a command line ("would make the TTL").
		text := goBlockRE.ReplaceAllString(string(b), "")
		for _, code := range codeRE.FindAllString(text, -1) {
			for _, m := range makeRE.FindAllStringSubmatch(code, -1) {
				named++
				if !targets[m[1]] {
					t.Errorf("%s names make %s, which the Makefile does not define", doc, m[1])
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("the docs name no make target")
	}
	for _, must := range []string{"chaos", "test"} {
		if !targets[must] {
			t.Errorf("the Makefile has no %s target: the README's two commands are make chaos and make test", must)
		}
	}
}

// linkRE finds a Markdown link or image: [text](target) or ![alt](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingRE finds a Markdown heading.
var headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)

// TestDocsLinksResolve: every relative link of the README and docs/ names
// a file that exists, and every #anchor a heading of the page it points to
// (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens).
func TestDocsLinksResolve(t *testing.T) {
	docs := append(userDocs(t), filepath.Join(repoRoot, "docs", "architecture.md"))
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// A link shown as code is an example, not a link.
		text := codeRE.ReplaceAllString(string(b), "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links %s: %v", doc, target, err)
					continue
				}
			}
			if anchor != "" && !slices.Contains(anchors(t, path), anchor) {
				t.Errorf("%s links %s: %s has no heading with that anchor", doc, target, path)
			}
		}
	}
}

// anchors are the anchors GitHub gives the headings of a Markdown file.
func anchors(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Headings inside code blocks are not headings.
	text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "")
	var out []string
	for _, m := range headingRE.FindAllStringSubmatch(text, -1) {
		out = append(out, anchor(m[1]))
	}
	return out
}

// anchor is GitHub's anchor for a heading: lower case, every character but
// letters, digits, spaces, hyphens and underscores dropped, spaces to hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestREADMEMarginsAreTheGeneratedOnes: the rows of the margins table the
// README shows in short are the rows make margins-table wrote into
// docs/margins.md, word for word, so the short form cannot drift from a
// rerun.
func TestREADMEMarginsAreTheGeneratedOnes(t *testing.T) {
	margins, err := os.ReadFile(filepath.Join(repoRoot, "docs", "margins.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	generated := regexp.MustCompile(`(?s)<!-- lockchaos:margins -->\n(.*?)<!-- /lockchaos:margins -->`).FindSubmatch(margins)
	if generated == nil {
		t.Fatal("docs/margins.md has no <!-- lockchaos:margins --> ... <!-- /lockchaos:margins --> table")
	}
	rows := map[string]string{} // first cell -> row
	for _, line := range strings.Split(string(generated[1]), "\n") {
		if first, ok := firstCell(line); ok {
			rows[first] = line
		}
	}
	shown := 0
	for _, line := range strings.Split(string(readme), "\n") {
		first, ok := firstCell(line)
		if !ok || rows[first] == "" {
			continue
		}
		shown++
		if line != rows[first] {
			t.Errorf("README.md shows the margins row\n%s\nbut docs/margins.md has\n%s", line, rows[first])
		}
	}
	if shown < 2 {
		t.Errorf("README.md shows %d rows of docs/margins.md's table, want the header and a row at least", shown)
	}
}

// firstCell is a Markdown table row's first cell; separator rows have none.
func firstCell(line string) (string, bool) {
	if !strings.HasPrefix(line, "| ") {
		return "", false
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
	return first, true
}
