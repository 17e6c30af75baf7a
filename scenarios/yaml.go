package scenarios

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/internal/suggest"
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
//	      no-ttl: {safety: safe, liveness: stuck}
//	      naive: {unsafe: [mutual-exclusion, foreign-release]}
//
// An expectation in one word speaks of safety (safe, unsafe, either,
// n/a), the cell expected live; a mapping says both groups (safety, and
// liveness: live, stuck or either), and unsafe lists the only properties
// allowed to fail, which implies safety unsafe. Fields are those of Scenario (durations as "300ms", "2s"). An unknown
// field is an error naming the field it most likely meant; a field written
// as 0 where 0 means the default (ttl: 0s, clients: 0) is an error too:
// leave it out for the default. Names become folders under --out, so they
// are letters, digits, ".", "_" and "-", starting with a letter or digit.
// A file may also declare locks served by driver processes, in any
// language (docs/driver-protocol.md), with their traits and their
// expectations per scenario:
//
//	locks:
//	  - name: redis-py
//	    command: python3 drivers/redispy/driver.py
//	    nodes: 1
//	    expect: {baseline: safe, gc-pause: unsafe}
//
// Such a lock runs in the scenarios its expect lists, and only there, each
// cell gated by its expectation. A lock no scenario expects anything of (a
// lock without expect, or one from --lock-driver) runs in every scenario
// once named in --lock, reported as "either", not gated.
type File struct {
	Scenarios []Scenario `yaml:"scenarios"`
	Locks     []LockDecl `yaml:"locks"`

	// Where Load found them, for the errors Register and Apply find.
	source        string
	lockLines     []int
	scenarioLines []int
	expectLines   []map[string]int // per lock: its expect's scenarios
}

// LockDecl declares a driver lock and what it must show where.
type LockDecl struct {
	drivers.Driver `yaml:",inline"`
	// Expect maps a scenario (built-in or from a file) to the lock's
	// expectation there, in either form (see File). The lock runs in these
	// scenarios only; without Expect it runs in every scenario, ungated
	// ("either"), when named in --lock.
	Expect map[string]Expect `yaml:"expect"`
}

// Register registers the file's driver locks, so scenarios and the command
// line can name them. An error names the file and line of the lock at
// fault.
func (f *File) Register() error {
	for i, l := range f.Locks {
		if err := lockimpl.Register(l.Spec()); err != nil {
			return fmt.Errorf("%s%w", f.at(f.lockLines, i), err)
		}
	}
	return nil
}

// Apply adds the file's scenarios to list (replacing same-named ones) and
// its locks' expectations to the scenarios they name. A scenario no list
// has is an error at its line in the lock's expect.
func (f *File) Apply(list []Scenario) ([]Scenario, error) {
	out := Merge(list, f.Scenarios)
	for i, l := range f.Locks {
		for _, name := range slices.Sorted(maps.Keys(l.Expect)) {
			j := slices.IndexFunc(out, func(s Scenario) bool { return s.Name == name })
			if j < 0 {
				return nil, f.unknownExpect(out, i, name)
			}
			exp := maps.Clone(out[j].Expect)
			if exp == nil {
				exp = map[string]Expect{}
			}
			exp[l.Name] = l.Expect[name]
			out[j].Expect = exp
		}
	}
	return out, nil
}

// unknownExpect is the error for scenario name in lock i's expect.
func (f *File) unknownExpect(list []Scenario, i int, name string) error {
	var line []int
	if i < len(f.expectLines) {
		line = []int{f.expectLines[i][name]}
	}
	names := Names(list)
	hint := ""
	if s := suggest.Closest(name, names); s != "" {
		hint = " (did you mean " + s + "?)"
	}
	slices.Sort(names)
	return fmt.Errorf("%s%w %q in the expect of lock %s%s; valid: %s", f.at(line, 0), ErrUnknownScenario, name, f.Locks[i].Name,
		hint, strings.Join(names, ", "))
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// LoadFile reads extra scenarios (and driver locks) from a YAML file.
// Every error names the file and line: "extra.yaml:7: scenarios: unknown
// field colour in scenario x; valid: ...".
func LoadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return Load(b, path)
}

// Load parses scenarios YAML; name is used in error messages. Locks the
// file declares count as known to its scenarios (register them with
// File.Register before running). A field the types do not have is an
// error with the field it most likely meant; a field written as 0 where 0
// would silently mean the default (ttl: 0s, clients: 0, nodes: 0) is an
// error too: leave it out for the default.
func Load(b []byte, name string) (*File, error) {
	roots, err := documents(b)
	if err != nil {
		return nil, yamlError(name, err)
	}
	if le := oneDocument(roots); le != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, le.line, le.err)
	}
	doc := document(roots[0])
	if doc == nil {
		// Line 1: every error of a file names a line, an editor's jump target.
		return nil, fmt.Errorf("%s:1: %w (no scenarios or locks)", name, ErrEmptyFile)
	}
	if le := checkFields(doc); le != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, le.line, le.err)
	}
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, yamlError(name, err)
	}
	f.source = name
	declared, le := f.loadLocks(doc)
	if le == nil {
		le = f.loadScenarios(doc, declared)
	}
	if le != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, le.line, le.err)
	}
	if len(f.Scenarios) == 0 && len(f.Locks) == 0 {
		return nil, fmt.Errorf("%s:1: %w: no scenarios and no locks (want a top-level \"scenarios:\" or \"locks:\" list)", name, ErrInvalid)
	}
	return &f, nil
}

// documents are the file's YAML documents, at least one (empty for an
// empty file). A UTF-8 byte order mark at the start is read as yaml.v3
// reads it: as nothing.
func documents(b []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var roots []*yaml.Node
	for {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		roots = append(roots, &root)
	}
	if len(roots) == 0 {
		roots = append(roots, &yaml.Node{})
	}
	return roots, nil
}

// oneDocument refuses a file of more than one YAML document (a second
// "---" with something under it): Load reads one, and a second one
// dropped without a word would run fewer scenarios than the file shows.
// An empty document after the first (a trailing "---") holds nothing to
// drop.
func oneDocument(roots []*yaml.Node) *lineError {
	for _, r := range roots[1:] {
		if doc := document(r); doc != nil {
			return &lineError{max(r.Line, 1), fmt.Errorf("%w: a second YAML document (after \"---\"): a scenarios file "+
				"holds one; list every scenario under one \"scenarios:\" (and every lock under one \"locks:\"), "+
				"or give each document its own --scenarios-file", ErrInvalid)}
		}
	}
	return nil
}

// document is the file's top node, or nil for a file with none (empty,
// comments only, or a bare null).
func document(root *yaml.Node) *yaml.Node {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	if doc := root.Content[0]; doc.Kind != yaml.ScalarNode || doc.Tag != "!!null" {
		return doc
	}
	return nil
}

// loadLocks checks the file's lock declarations and notes their lines; it
// returns their names, known to the file's scenarios.
func (f *File) loadLocks(doc *yaml.Node) (map[string]bool, *lineError) {
	nodes := items(doc, "locks")
	declared := map[string]bool{}
	for i, l := range f.Locks {
		m := nodeAt(nodes, i)
		f.lockLines = append(f.lockLines, m.Line)
		if le := explicitZeroNodes(m, l); le != nil {
			return nil, le
		}
		if err := l.Validate(); err != nil {
			return nil, &lineError{m.Line, err}
		}
		lines := map[string]int{}
		if exp := value(m, "expect"); exp != nil && exp.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(exp.Content); k += 2 {
				lines[exp.Content[k].Value] = exp.Content[k].Line
			}
		}
		f.expectLines = append(f.expectLines, lines)
		for sc, e := range l.Expect {
			if err := e.Validate(); err != nil {
				return nil, &lineError{max(lines[sc], m.Line), fmt.Errorf("%w: lock %s: expect %s: %w", ErrInvalid, l.Name, sc, err)}
			}
		}
		declared[l.Name] = true
	}
	return declared, nil
}

// loadScenarios checks the file's scenarios, each at its line.
func (f *File) loadScenarios(doc *yaml.Node, declared map[string]bool) *lineError {
	nodes := items(doc, "scenarios")
	seen := map[string]int{}
	for i, s := range f.Scenarios {
		m := nodeAt(nodes, i)
		if le := firstOf(explicitZero(m, s), gapsBelowFloor(m, s)); le != nil {
			return le
		}
		if err := s.validate(declared); err != nil {
			return &lineError{m.Line, err}
		}
		if prev, dup := seen[s.Name]; dup {
			return &lineError{m.Line, fmt.Errorf("%w: scenario %q is defined twice (first at line %d)", ErrInvalid, s.Name, prev)}
		}
		seen[s.Name] = m.Line
		f.scenarioLines = append(f.scenarioLines, m.Line)
	}
	return nil
}

// Clash says which scenario of f an earlier file of the same run already
// defines, at its line in f: within one file a name twice is an error,
// and so it is across files (which definition ran would hang on the order
// of the files). Overriding a built-in scenario is what a file is for.
func (f *File) Clash(earlier []*File) error {
	for _, e := range earlier {
		if e.source != "" && e.source == f.source {
			return fmt.Errorf("%s:1: %w: the file is given twice", f.source, ErrInvalid)
		}
	}
	for i, s := range f.Scenarios {
		for _, e := range earlier {
			j := slices.IndexFunc(e.Scenarios, func(o Scenario) bool { return o.Name == s.Name })
			if j < 0 {
				continue
			}
			first := cmp.Or(strings.TrimSuffix(e.at(e.scenarioLines, j), ": "), "another file")
			return fmt.Errorf("%s%w %q: defined again (first in %s); a scenario comes from one file",
				f.at(f.scenarioLines, i), ErrInvalid, s.Name, first)
		}
	}
	return nil
}

// nodeAt is entry i of a list's nodes (an empty node past its end).
func nodeAt(nodes []*yaml.Node, i int) *yaml.Node {
	if i < len(nodes) {
		return nodes[i]
	}
	return &yaml.Node{}
}

// at is "FILE:LINE: " for a line of the file the declarations came from,
// "" when they came from elsewhere.
func (f *File) at(lines []int, i int) string {
	switch {
	case f.source == "":
		return ""
	case i < len(lines) && lines[i] > 0:
		return fmt.Sprintf("%s:%d: ", f.source, lines[i])
	}
	return f.source + ": "
}

// yamlError turns yaml.v3's "yaml: line 7: ..." into "file:7: ...", its
// Go type names into words.
func yamlError(name string, err error) error {
	var le *results.LineError
	if errors.As(err, &le) {
		return fmt.Errorf("%s:%d: %w: %w", name, le.Line, ErrInvalid, le.Err)
	}
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = plainTypeError(te.Errors[0])
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %w: %s", name, m[1], ErrInvalid, yamlLine.ReplaceAllString(msg, ""))
	}
	return fmt.Errorf("%s:1: %w: %s", name, ErrInvalid, msg)
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
