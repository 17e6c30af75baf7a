package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"
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
// fields are errors.
type File struct {
	Scenarios []Scenario `yaml:"scenarios"`
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// LoadFile reads extra scenarios from a YAML file. Every error names the
// file and line: "extra.yaml:7: field colour not found in type ...".
func LoadFile(path string) ([]Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return Load(b, path)
}

// Load parses scenarios YAML; name is used in error messages.
func Load(b []byte, name string) ([]Scenario, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, yamlError(name, err)
	}
	// A second pass over the node tree gives each scenario's line for
	// the errors Validate finds.
	var root yaml.Node
	_ = yaml.Unmarshal(b, &root)
	lines := scenarioLines(&root)
	seen := map[string]int{}
	for i, s := range f.Scenarios {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if prev, dup := seen[s.Name]; dup {
			return nil, fmt.Errorf("%s:%d: %w: scenario %q is defined twice (first at line %d)", name, line, ErrInvalid, s.Name, prev)
		}
		seen[s.Name] = line
	}
	if len(f.Scenarios) == 0 {
		return nil, fmt.Errorf("%s:1: %w: no scenarios (want a top-level \"scenarios:\" list)", name, ErrInvalid)
	}
	return f.Scenarios, nil
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
