package scenarios

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/internal/safename"
	"github.com/lockchaos/lockchaos/internal/suggest"
	"github.com/lockchaos/lockchaos/results"
)

// lineError is an error at a line of a scenarios file.
type lineError struct {
	line int
	err  error
}

// The fields each mapping of a scenarios file may have, from the types'
// yaml tags (inline structs included), in declaration order.
var (
	fileFields     = yamlFields(reflect.TypeFor[File]())
	scenarioFields = yamlFields(reflect.TypeFor[Scenario]())
	lockFields     = yamlFields(reflect.TypeFor[LockDecl]())
)

// The fields that hold a number with a fraction (NaN and the infinities
// parse as one; none of them is a value any field takes).
var (
	scenarioFloats = yamlFieldsOf(reflect.TypeFor[Scenario](), isFloat)
	lockFloats     = yamlFieldsOf(reflect.TypeFor[LockDecl](), isFloat)
)

func yamlFields(t reflect.Type) []string { return yamlFieldsOf(t, nil) }

// isFloat says whether a field of type t holds a float (or points to one).
func isFloat(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64
}

// yamlFieldsOf are t's yaml field names whose type keep accepts (every
// one when keep is nil).
func yamlFieldsOf(t reflect.Type, keep func(reflect.Type) bool) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "" && strings.Contains(","+opts+",", ",inline,"):
			out = append(out, yamlFieldsOf(f.Type, keep)...)
		case keep != nil && !keep(f.Type):
		case name == "":
			out = append(out, strings.ToLower(f.Name))
		default:
			out = append(out, name)
		}
	}
	return out
}

// checkFields finds the first unknown field of the file's tree, with the
// field it most likely meant: "unknown field signal_loss in lock rb (did
// you mean signals_loss?); valid: ...". A tree of another shape is left to
// the decoder to describe.
func checkFields(doc *yaml.Node) *lineError {
	if doc.Kind != yaml.MappingNode {
		return nil
	}
	if err := unknownField(doc, fileFields, "at the top level"); err != nil {
		return err
	}
	for i, sc := range items(doc, "scenarios") {
		what := "in scenario " + itemName(sc, i)
		if err := firstOf(unknownField(sc, scenarioFields, what), nonFinite(sc, scenarioFloats, what)); err != nil {
			return err
		}
		for j, f := range items(sc, "faults") {
			params, ok := faultParams(f)
			if !ok {
				continue // no kind, or an unknown one: Validate names the valid kinds
			}
			what := "in fault " + fmt.Sprint(j+1) + " of scenario " + itemName(sc, i)
			valid := append([]string{"kind"}, yamlFields(params)...)
			if err := firstOf(unknownField(f, valid, what), nonFinite(f, yamlFieldsOf(params, isFloat), what)); err != nil {
				return err
			}
		}
		inScenario := func(lock string) string { return lock + " in scenario " + itemName(sc, i) }
		if err := checkExpect(value(sc, "expect"), inScenario); err != nil {
			return err
		}
	}
	for i, l := range items(doc, "locks") {
		what := "in lock " + itemName(l, i)
		if err := firstOf(unknownField(l, lockFields, what), nonFinite(l, lockFloats, what)); err != nil {
			return err
		}
		if err := checkExpect(value(l, "expect"), func(sc string) string { return sc + " of lock " + itemName(l, i) }); err != nil {
			return err
		}
	}
	return nil
}

// faultParams is the parameter type of the fault kind a fault entry
// names: the fields it may have besides its kind.
func faultParams(f *yaml.Node) (reflect.Type, bool) {
	kind := value(f, "kind")
	if kind == nil || kind.Kind != yaml.ScalarNode {
		return nil, false
	}
	k, err := faults.LookupKind(kind.Value)
	if err != nil {
		return nil, false
	}
	return reflect.TypeOf(k.Params), true
}

// checkExpect finds the first mistake in an expect mapping (a scenario's,
// whose keys are locks, or a lock's, whose keys are scenarios), at its
// line: an unknown field of an expectation's mapping, with the field it
// most likely meant, or an expectation that cannot be held to. label names
// an entry in a message ("token in scenario x").
func checkExpect(exp *yaml.Node, label func(key string) string) *lineError {
	if exp == nil || exp.Kind != yaml.MappingNode {
		return nil // the decoder describes another shape
	}
	for k := 0; k+1 < len(exp.Content); k += 2 {
		what := label(exp.Content[k].Value)
		v := exp.Content[k+1]
		if err := unknownField(v, results.ExpectFields, "in expect "+what); err != nil {
			return err
		}
		var e results.Expect
		var le *results.LineError
		if err := e.UnmarshalYAML(v); errors.As(err, &le) {
			return &lineError{le.Line, fmt.Errorf("%w: expect %s: %w", ErrInvalid, what, le.Err)}
		}
	}
	return nil
}

func unknownField(m *yaml.Node, valid []string, what string) *lineError {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		key := m.Content[k]
		if key.Kind != yaml.ScalarNode || slices.Contains(valid, key.Value) {
			continue
		}
		hint := ""
		if s := suggest.Closest(key.Value, valid); s != "" {
			hint = " (did you mean " + s + "?)"
		}
		return &lineError{key.Line, fmt.Errorf("%w %s %s%s; valid: %s", ErrUnknownField, key.Value, what, hint, strings.Join(valid, ", "))}
	}
	return nil
}

// firstOf is the first of errs that is not nil.
func firstOf(errs ...*lineError) *lineError {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// nonFinite finds a number field of mapping m (one of fields) written as
// NaN or an infinity (.nan, .inf, 1e999): no comparison holds for NaN, so
// a range check downstream would take it for a value.
func nonFinite(m *yaml.Node, fields []string, what string) *lineError {
	for _, field := range fields {
		v := value(m, field)
		var x float64
		if v == nil || v.Kind != yaml.ScalarNode || v.Decode(&x) != nil || !math.IsNaN(x) && !math.IsInf(x, 0) {
			continue // a finite number, or a shape the decoder describes
		}
		return &lineError{v.Line, fmt.Errorf("%w: %s %s %s: want a finite number", ErrInvalid, field, v.Value, what)}
	}
	return nil
}

// value is the node under key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			return m.Content[k+1]
		}
	}
	return nil
}

// keyNode is the key node of key in mapping m (for its line), or nil.
func keyNode(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			return m.Content[k]
		}
	}
	return nil
}

// items are the entries of the list under key in mapping m.
func items(m *yaml.Node, key string) []*yaml.Node {
	if v := value(m, key); v != nil && v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return nil
}

// itemName names entry i of a list in a message: its name field, quoted
// when it is not a plain name, else its position ("#2").
func itemName(m *yaml.Node, i int) string {
	v := value(m, "name")
	switch {
	case v == nil || v.Kind != yaml.ScalarNode || v.Value == "":
		return fmt.Sprintf("#%d", i+1)
	case safename.Valid(v.Value):
		return v.Value
	}
	return fmt.Sprintf("%q", v.Value)
}

// A zero rule is a scenario field whose zero value means "the default":
// written out as 0 in a file, it is a mistake (the default is what leaving
// it out gives), unless the other end of its range is set, where 0 is a
// value like any other.
type zeroRule struct {
	field string
	get   func(Scenario) any
	// meaningful says 0 means 0 here (the range's other end is set).
	meaningful func(Scenario) bool
	// advice says what to do instead, given the defaults (default: "FIELD
	// must be positive; leave it out for the default D").
	advice func(d Scenario) string
}

var zeroRules = []zeroRule{
	{field: "ttl", get: func(s Scenario) any { return s.TTL }},
	{field: "duration", get: func(s Scenario) any { return s.Duration }},
	{field: "clients", get: func(s Scenario) any { return s.Clients }},
	{field: "keys", get: func(s Scenario) any { return s.Keys }},
	{field: "call_timeout", get: func(s Scenario) any { return s.CallTimeout }},
	{field: "first_fault", get: func(s Scenario) any { return s.FirstFault }},
	{field: "recover_within", get: func(s Scenario) any { return s.RecoverWithin },
		advice: func(Scenario) string {
			return "recover_within must be positive; leave it out for the default, twice the TTL plus 60ms of retry slack"
		}},
	{field: "node_timeout", get: func(s Scenario) any { return s.NodeTimeout },
		advice: func(Scenario) string {
			return "node_timeout must be positive; leave it out for the default, 500ms stretched with the cell"
		}},
	{field: "work_min", get: func(s Scenario) any { return s.WorkMin },
		meaningful: func(s Scenario) bool { return s.WorkMax > 0 },
		advice: func(d Scenario) string {
			return fmt.Sprintf("work_min 0 needs a positive work_max; leave both out for the default %v-%v", d.WorkMin, d.WorkMax)
		}},
	{field: "work_max", get: func(s Scenario) any { return s.WorkMax },
		advice: func(d Scenario) string {
			return fmt.Sprintf("work_max must be positive; leave work_min and work_max out for the default %v-%v", d.WorkMin, d.WorkMax)
		}},
	// A gap of 0 between faults has no bound on how many fire (MinGap).
	{field: "gap_min", get: func(s Scenario) any { return s.GapMin },
		advice: func(d Scenario) string {
			return fmt.Sprintf("gap_min must be at least %v; leave gap_min and gap_max out for the default %v-%v",
				MinGap, d.GapMin, d.GapMax)
		}},
	{field: "gap_max", get: func(s Scenario) any { return s.GapMax },
		advice: func(d Scenario) string {
			return fmt.Sprintf("gap_max must be positive; leave gap_min and gap_max out for the default %v-%v", d.GapMin, d.GapMax)
		}},
}

// explicitZero finds a field of scenario s (its node m) written as 0 where
// 0 would silently mean the default.
func explicitZero(m *yaml.Node, s Scenario) *lineError {
	defaults := Scenario{}.WithDefaults()
	for _, r := range zeroRules {
		key := keyNode(m, r.field)
		if key == nil || !reflect.ValueOf(r.get(s)).IsZero() || r.meaningful != nil && r.meaningful(s) {
			continue
		}
		advice := fmt.Sprintf("%s must be positive; leave it out for the default %v", r.field, r.get(defaults))
		if r.advice != nil {
			advice = r.advice(defaults)
		}
		return &lineError{key.Line, fmt.Errorf("%w %q: %s", ErrInvalid, s.Name, advice)}
	}
	return nil
}

// gapsBelowFloor finds a gap of scenario s (its node m) set below MinGap,
// at the gap's own line.
func gapsBelowFloor(m *yaml.Node, s Scenario) *lineError {
	err := s.checkGaps()
	if err == nil {
		return nil
	}
	line := m.Line
	for _, k := range []string{"gap_min", "gap_max"} {
		if key := keyNode(m, k); key != nil && strings.HasPrefix(err.Error(), k+" ") {
			line = key.Line
		}
	}
	return &lineError{line, fmt.Errorf("%w %q: %w", ErrInvalid, s.Name, err)}
}

// explicitZeroNodes finds a lock declaring nodes: 0 (a driver lock needs
// Redis: the default is 1).
func explicitZeroNodes(m *yaml.Node, l LockDecl) *lineError {
	if key := keyNode(m, "nodes"); key != nil && l.Nodes == 0 {
		return &lineError{key.Line, fmt.Errorf("%w: lock %q: nodes must be positive; "+
			"leave it out for the default 1 (a driver lock always needs Redis)", drivers.ErrInvalid, l.Name)}
	}
	return nil
}

var typeErrorText = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")

// The types a scenarios file's values decode into, in words.
var typeWords = map[string]string{
	"[]scenarios.Scenario":      "a list of scenarios (- name: ...)",
	"scenarios.Scenario":        "a scenario (name: ..., expect: ...)",
	"[]scenarios.LockDecl":      "a list of locks (- name: ...)",
	"scenarios.LockDecl":        "a lock (name: ..., command: ...)",
	"[]faults.Spec":             "a list of faults (- kind: ...)",
	"faults.Spec":               "a fault (kind: ...)",
	"map[string]results.Expect": "a mapping of names to expectations (name: safe)",
	"results.Expect":            "an expectation (" + expectationList() + ", or {safety: ..., liveness: ...})",
	"time.Duration":             "a duration (such as 300ms or 2s)",
	"int":                       "a whole number",
	"*int":                      "a whole number",
	"*float64":                  "a number",
	"float64":                   "a number",
	"bool":                      "true or false",
	"string":                    "a string",
	"deployment.Topology":       "a topology name",
	"netfault.Direction":        "a direction",
}

func expectationList() string {
	out := make([]string, len(results.Expectations))
	for i, e := range results.Expectations {
		out[i] = string(e)
	}
	return strings.Join(out, ", ")
}

var kindWords = map[string]string{"map": "a mapping", "seq": "a list", "null": "nothing"}

// plainTypeError rewrites yaml.v3's "line 3: cannot unmarshal !!str `soon`
// into time.Duration" as "line 3: want a duration (such as 300ms or 2s),
// got `soon`".
func plainTypeError(msg string) string {
	m := typeErrorText.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	kind, val, into := msg[m[2]:m[3]], "", msg[m[6]:m[7]]
	if m[4] >= 0 {
		val = msg[m[4]:m[5]]
	}
	want, ok := typeWords[into]
	if !ok {
		return msg
	}
	got := "`" + val + "`"
	if w, ok := kindWords[kind]; ok || val == "" {
		got = w
	}
	return msg[:m[0]] + "want " + want + ", got " + got
}
