package results

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/internal/suggest"
)

// ExpectFields are the keys of an expectation's long form in YAML.
var ExpectFields = []string{"safety", "liveness", "unsafe", "why"}

// LineError is an expectation in a YAML file that cannot be held to, at
// its line.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// UnmarshalYAML reads an expectation in either form: one word, which
// speaks of safety (token: safe), or a mapping of groups (no-ttl: {safety:
// safe, liveness: stuck}; naive: {unsafe: [mutual-exclusion]}, which
// implies safety unsafe). Errors are *LineError, naming the line at fault.
func (e *Expect) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		x := Expect{Safety: Expectation(n.Value)}
		if err := x.Validate(); err != nil {
			return &LineError{n.Line, err}
		}
		*e = x.Expected()
		return nil
	case yaml.MappingNode:
		x, err := expectFromMapping(n)
		if err != nil {
			return err
		}
		*e = x.Expected()
		return nil
	}
	return &LineError{n.Line, fmt.Errorf("%w: want one word (%s) or a mapping {safety: ..., liveness: ..., unsafe: [...]}",
		ErrExpectation, words(Expectations, ", "))}
}

func expectFromMapping(n *yaml.Node) (Expect, error) {
	var x Expect
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		switch key.Value {
		case "safety", "liveness":
			if val.Kind != yaml.ScalarNode {
				return x, &LineError{val.Line, fmt.Errorf("%w: %s: want one word", ErrExpectation, key.Value)}
			}
			if key.Value == "safety" {
				x.Safety = Expectation(val.Value)
			} else {
				x.Liveness = Expectation(val.Value)
			}
		case "why":
			if val.Kind != yaml.ScalarNode {
				return x, &LineError{val.Line, fmt.Errorf("%w: why: want a sentence", ErrExpectation)}
			}
			x.Why = val.Value
		case "unsafe":
			ps, err := propertiesOf(val)
			if err != nil {
				return x, err
			}
			x.MayFail = ps
		default:
			hint := ""
			if s := suggest.Closest(key.Value, ExpectFields); s != "" {
				hint = " (did you mean " + s + "?)"
			}
			return x, &LineError{key.Line, fmt.Errorf("%w: unknown field %s in an expectation%s; valid: %s",
				ErrExpectation, key.Value, hint, strings.Join(ExpectFields, ", "))}
		}
	}
	if err := x.Validate(); err != nil {
		return x, &LineError{lineOf(n, x), err}
	}
	return x, nil
}

// propertiesOf reads unsafe: a list of properties, or just one.
func propertiesOf(val *yaml.Node) ([]checker.Property, error) {
	items := []*yaml.Node{val}
	if val.Kind == yaml.SequenceNode {
		items = val.Content
	}
	var ps []checker.Property
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return nil, &LineError{it.Line, fmt.Errorf("%w: unsafe: want a list of properties, such as [%s]",
				ErrExpectation, checker.MutualExclusion)}
		}
		p := checker.Property(it.Value)
		if err := validMayFail(p); err != nil {
			return nil, &LineError{it.Line, err}
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil, &LineError{val.Line, fmt.Errorf("%w: unsafe: [] names no property; leave it out, or say safety: unsafe",
			ErrExpectation)}
	}
	return ps, nil
}

// lineOf is the line of the mapping's value most likely at fault in x:
// its liveness, else its safety, else the mapping's own.
func lineOf(n *yaml.Node, x Expect) int {
	key := "safety"
	if x.Safety != "" && validSafety(x.Expected().Safety) == nil {
		key = "liveness"
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		if n.Content[k].Value == key {
			return n.Content[k+1].Line
		}
	}
	return n.Line
}
