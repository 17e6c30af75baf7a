package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lockchaos/lockchaos/reports/reportstest"
)

// schemaBase is where the schemas' $id place them; the test serves them
// from docs/schema, so a $ref between them resolves as it would online.
const schemaBase = "https://github.com/lockchaos/lockchaos/docs/schema/"

func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "schema", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in docs/schema: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(schemaBase+filepath.Base(f), doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	s, err := c.Compile(schemaBase + name)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, what string, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, doc)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not match its schema: %v", what, err)
	}
}

// Every line `run --json` prints, and the summary.json it writes, match
// the versioned schemas under docs/schema: what a CI step parses is what
// is documented.
func TestRunJSONStreamAndSummaryMatchTheirSchemas(t *testing.T) {
	stream, summary := compileSchema(t, "run-stream.v1.json"), compileSchema(t, "summary.v2.json")
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--scenario", "baseline,failover", "--lock", "token,redlock", "--duration", "300ms",
		"--seed", "5", "--json", "--out", out)
	if code != exitOK && code != exitInconclusive {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	types := map[string]int{}
	for i, l := range lines {
		validate(t, stream, fmt.Sprintf("line %d", i+1), []byte(l))
		for _, typ := range []string{"start", "cell-started", "cell-finished", "summary"} {
			if strings.HasPrefix(l, `{"type":"`+typ+`"`) {
				types[typ]++
			}
		}
	}
	// 4 cells (failover/redlock is n/a: it starts and finishes skipped).
	if types["start"] != 1 || types["cell-started"] != 4 || types["cell-finished"] != 4 || types["summary"] != 1 ||
		!strings.HasPrefix(lines[len(lines)-1], `{"type":"summary"`) {
		t.Fatalf("stream of %d lines has %v", len(lines), types)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	validate(t, summary, "summary.json", b)
	// Its junit.xml, with failover/redlock skipped (n/a), matches
	// docs/schema/junit.xsd.
	reportstest.ValidJUnit(t, filepath.Join(out, "junit.xml"))
	// The schema rejects what it should: a summary with an unknown outcome.
	// (Whatever the first cell's outcome was: on a loaded machine no cell
	// may have met its expectation, and a replaced "met" that was not
	// there tested nothing.)
	unknown := regexp.MustCompile(`"outcome": "[a-z-]+"`).ReplaceAllLiteralString(string(b), `"outcome": "fine"`)
	if unknown == string(b) {
		t.Fatal("summary.json has no outcome to replace")
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(unknown))
	if summary.Validate(v) == nil {
		t.Fatal("the summary schema accepted an unknown outcome")
	}
}

// `list --json` and `check --json` match their schemas too.
func TestListAndCheckJSONMatchTheirSchemas(t *testing.T) {
	list, check := compileSchema(t, "list.v2.json"), compileSchema(t, "check.v1.json")
	code, stdout, stderr := runCLI("list", "--json", "--scenarios-file", "../../scenarios/critiques.yaml")
	if code != exitOK {
		t.Fatalf("list: exit %d, %s", code, stderr)
	}
	validate(t, list, "list --json", []byte(stdout))
	for _, f := range []string{"pass.jsonl", "lost-update.jsonl", "foreign-release.jsonl", "stale-fence-rejected.jsonl"} {
		_, stdout, stderr := runCLI("check", "--json", testdata(f))
		if stdout == "" {
			t.Fatalf("check --json %s printed nothing: %s", f, stderr)
		}
		validate(t, check, "check --json "+f, []byte(stdout))
		bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(stdout, `"verdict": "`, `"verdict": "maybe-`, 1)))
		if check.Validate(bad) == nil {
			t.Errorf("the check schema accepted an unknown verdict (%s)", f)
		}
	}
}
