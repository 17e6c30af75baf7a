package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
)

// File is the shape of a scenarios YAML file:
//
//	scenarios:
//	  - name: long-gc-pause
//	    description: a holder frozen for 3x the TTL
//	    ttl: 200ms
//	    faults:
//	      - kind: client-pause
//	        pause: 600ms
//	    expect:
//	      token: unsafe
//	      fenced: safe
//
// Fields are those of Scenario (durations as "300ms", "2s"); unknown
// fields are errors. A file may also declare locks served by driver
// processes, in any language (docs/driver-protocol.md), with their traits
// and their expectations per scenario:
//
//	locks:
//	  - name: redis-py
//	    command: python3 drivers/redispy/driver.py
//	    nodes: 1
//	    expect: {baseline: safe, gc-pause: unsafe}
type File struct {
	Scenarios []Scenario `yaml:"scenarios"`
	Locks     []LockDecl `yaml:"locks"`
}

// LockDecl declares a driver lock and what it must show where.
type LockDecl struct {
	drivers.Driver `yaml:",inline"`
	// Expect maps a scenario (built-in or from a file) to the lock's
	// expectation there.
	Expect map[string]Expectation `yaml:"expect"`
}

// Register registers the file's driver locks, so scenarios and the command
// line can name them.
func (f *File) Register() error {
	for _, l := range f.Locks {
		if err := lockimpl.Register(l.Spec()); err != nil {
			return err
		}
	}
	return nil
}

// Apply adds the file's scenarios to list (replacing same-named ones) and
// its locks' expectations to the scenarios they name.
func (f *File) Apply(list []Scenario) ([]Scenario, error) {
	out := Merge(list, f.Scenarios)
	for _, l := range f.Locks {
		for name, e := range l.Expect {
			i := slices.IndexFunc(out, func(s Scenario) bool { return s.Name == name })
			if i < 0 {
				_, err := find(out, name)
				return nil, fmt.Errorf("lock %s: expect: %w", l.Name, err)
			}
			exp := maps.Clone(out[i].Expect)
			if exp == nil {
				exp = map[string]Expectation{}
			}
			exp[l.Name] = e
			out[i].Expect = exp
		}
	}
	return out, nil
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// LoadFile reads extra scenarios (and driver locks) from a YAML file.
// Every error names the file and line: "extra.yaml:7: field colour not
// found in type ...".
func LoadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return Load(b, path)
}

// Load parses scenarios YAML; name is used in error messages. Locks the
// file declares count as known to its scenarios (register them with
// File.Register before running).
func Load(b []byte, name string) (*File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, yamlError(name, err)
	}
	var root yaml.Node
	_ = yaml.Unmarshal(b, &root)
	declared := map[string]bool{}
	for i, l := range f.Locks {
		line := itemLine(&root, "locks", i)
		if err := l.Validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		for sc, e := range l.Expect {
			if !e.Valid() {
				return nil, fmt.Errorf("%s:%d: %w: lock %s: expect %s: %q is not one of %v",
					name, line, ErrInvalid, l.Name, sc, e, results.Expectations)
			}
		}
		declared[l.Name] = true
	}
	// The node tree gives each scenario's line for the errors Validate finds.
	lines := scenarioLines(&root)
	seen := map[string]int{}
	for i, s := range f.Scenarios {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		if err := s.validate(declared); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if prev, dup := seen[s.Name]; dup {
			return nil, fmt.Errorf("%s:%d: %w: scenario %q is defined twice (first at line %d)", name, line, ErrInvalid, s.Name, prev)
		}
		seen[s.Name] = line
	}
	if len(f.Scenarios) == 0 && len(f.Locks) == 0 {
		return nil, fmt.Errorf("%s:1: %w: no scenarios and no locks (want a top-level \"scenarios:\" or \"locks:\" list)", name, ErrInvalid)
	}
	return &f, nil
}

// itemLine is the line of item i of a top-level list, or 0.
func itemLine(root *yaml.Node, list string, i int) int {
	if len(root.Content) == 0 {
		return 0
	}
	doc := root.Content[0]
	for k := 0; k+1 < len(doc.Content); k += 2 {
		if doc.Content[k].Value == list && i < len(doc.Content[k+1].Content) {
			return doc.Content[k+1].Content[i].Line
		}
	}
	return 0
}

// yamlError turns yaml.v3's "yaml: line 7: ..." into "file:7: ...".
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return fmt.Errorf("%s:%s: %w: %s", name, m[1], ErrInvalid, yamlLine.ReplaceAllString(msg, ""))
		}
		return fmt.Errorf("%s: %w: %s", name, ErrInvalid, msg)
	}
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %w: %s", name, m[1], ErrInvalid, yamlLine.ReplaceAllString(msg, ""))
	}
	return fmt.Errorf("%s:1: %w: %s", name, ErrInvalid, msg)
}

func scenarioLines(root *yaml.Node) []int {
	if len(root.Content) == 0 {
		return nil
	}
	doc := root.Content[0]
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "scenarios" {
			var out []int
			for _, item := range doc.Content[i+1].Content {
				out = append(out, item.Line)
			}
			return out
		}
	}
	return nil
}

// Merge returns base with extra added; an extra scenario with a base
// scenario's name replaces it.
func Merge(base, extra []Scenario) []Scenario {
	out := append([]Scenario(nil), base...)
	for _, e := range extra {
		replaced := false
		for i := range out {
			if out[i].Name == e.Name {
				out[i], replaced = e, true
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}
