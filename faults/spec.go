package faults

import (
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lockchaos/lockchaos/netfault"
)

// Params are a fault kind's own parameters: a struct registered with the
// kind (Kind.Params), in the kind's file, whose yaml tags are the fields
// a YAML `faults:` entry of that kind may have. Durations left zero are
// the kind's defaults, scaled from the TTL when the fault is built.
type Params interface {
	// Validate reports a parameter out of range.
	Validate() error
	// Scaled returns the parameters with every duration multiplied by k.
	Scaled(k float64) Params
	// Build makes the fault, filling zero durations from ttl.
	Build(ttl time.Duration) Fault
}

// Spec describes a fault by kind and parameters (from the scenario catalog
// or a YAML file, where it is one flat mapping: kind: client-pause,
// pause: 600ms).
type Spec struct {
	Kind string
	// Params are the kind's own (the type it registered); nil is every
	// default.
	Params Params
}

// params are s's parameters, the kind's zero ones when unset.
func (s Spec) params() (Params, error) {
	k, err := LookupKind(s.Kind)
	if err != nil {
		return nil, err
	}
	if s.Params == nil {
		return k.Params, nil
	}
	if reflect.TypeOf(s.Params) != reflect.TypeOf(k.Params) {
		return nil, fmt.Errorf("%w: fault %s given %T, want %T", ErrInvalidConfig, s.Kind, s.Params, k.Params)
	}
	return s.Params, nil
}

// Validate reports an unknown kind, parameters of another kind, or a
// parameter out of range.
func (s Spec) Validate() error {
	p, err := s.params()
	if err != nil {
		return err
	}
	return p.Validate()
}

// Build turns a spec into a Fault, filling zero durations from ttl.
func (s Spec) Build(ttl time.Duration) (Fault, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	p, _ := s.params()
	return p.Build(ttl), nil
}

// Scaled returns the spec with every duration multiplied by k (a slower
// machine or backend stretches a scenario without changing its shape).
func (s Spec) Scaled(k float64) Spec {
	if s.Params != nil {
		s.Params = s.Params.Scaled(k)
	}
	return s
}

// Durations yields each duration parameter set, by its YAML name, in the
// order the kind declares them: for range checks that know nothing of
// the kind.
func (s Spec) Durations() iter.Seq2[string, time.Duration] {
	return func(yield func(string, time.Duration) bool) {
		if s.Params == nil {
			return
		}
		v := reflect.ValueOf(s.Params)
		for i := range v.NumField() {
			d, ok := v.Field(i).Interface().(time.Duration)
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			if ok && !yield(name, d) {
				return
			}
		}
	}
}

// kindOf reads a YAML fault entry's kind (its `kind:` field).
type kindOf struct {
	Kind string `yaml:"kind" json:"kind"`
}

// UnmarshalYAML decodes a fault entry into its kind's own parameters. An
// unknown kind keeps its name and no parameters, for Validate to report
// with the valid ones; the fields a kind does not have are the loader's to
// report, at their line.
func (s *Spec) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{typeError(n, reflect.TypeFor[Spec]())}}
	}
	var head kindOf
	if err := n.Decode(&head); err != nil {
		return err
	}
	*s = Spec{Kind: head.Kind}
	k, err := LookupKind(head.Kind)
	if err != nil {
		return nil
	}
	p := reflect.New(reflect.TypeOf(k.Params))
	if err := n.Decode(p.Interface()); err != nil {
		return err
	}
	s.Params = p.Elem().Interface().(Params)
	return nil
}

// typeError is yaml.v3's message for a value of the wrong shape.
func typeError(n *yaml.Node, into reflect.Type) string {
	value := ""
	if n.Kind == yaml.ScalarNode {
		value = " `" + n.Value + "`"
		if len(n.Value) > 10 {
			value = " `" + n.Value[:7] + "...`"
		}
	}
	return fmt.Sprintf("line %d: cannot unmarshal %s%s into %s", n.Line, n.ShortTag(), value, into)
}

// MarshalYAML writes the spec as one flat mapping, kind first.
func (s Spec) MarshalYAML() (any, error) {
	var n yaml.Node
	if err := n.Encode(kindOf{s.Kind}); err != nil {
		return nil, err
	}
	if s.Params != nil {
		var p yaml.Node
		if err := p.Encode(s.Params); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, p.Content...)
	}
	return &n, nil
}

// MarshalJSON writes the spec as one flat object, kind first.
func (s Spec) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(kindOf{s.Kind})
	if err != nil || s.Params == nil {
		return b, err
	}
	p, err := json.Marshal(s.Params)
	if err != nil || string(p) == "{}" {
		return b, err
	}
	return append(append(b[:len(b)-1], ','), p[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Spec) UnmarshalJSON(b []byte) error {
	var head kindOf
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	*s = Spec{Kind: head.Kind}
	k, err := LookupKind(head.Kind)
	if err != nil {
		return nil // Validate reports it
	}
	p := reflect.New(reflect.TypeOf(k.Params))
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		return err
	}
	s.Params = p.Elem().Interface().(Params)
	return nil
}

// The helpers every kind's parameters share.

// or returns d, or def when d is zero.
func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// scale multiplies d by k, as every kind's Scaled does.
func scale(d time.Duration, k float64) time.Duration { return time.Duration(float64(d) * k) }

// nonNegative reports a negative duration among ds of fault kind.
func nonNegative(kind string, ds ...time.Duration) error {
	for _, d := range ds {
		if d < 0 {
			return fmt.Errorf("%w: fault %s has a negative duration", ErrInvalidConfig, kind)
		}
	}
	return nil
}

// validDirection reports a direction no link knows ("" is both ways).
func validDirection(d netfault.Direction) error {
	if d == "" {
		return nil
	}
	_, err := d.Streams()
	return err
}
