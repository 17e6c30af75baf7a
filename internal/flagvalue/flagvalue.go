// Package flagvalue holds the pflag value types of the CLI's flags: lists
// of names, optional numbers (set only when the flag is given) and
// positive overrides (whose 0 would mean "not given").
package flagvalue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// OptInt and OptFloat are flags stored in a pointer set only when the
// flag is given, so an unset flag keeps the scenario's own value.
func OptInt(p **int) pflag.Value { return optInt{p} }

// OptFloat is OptInt for a number.
func OptFloat(p **float64) pflag.Value { return optFloat{p} }

// PositiveInt and PositiveDuration are override flags whose 0 would mean
// "not given": given, they must be positive (up to max, for an int), and
// leaving the flag out keeps the default its help names.
func PositiveInt(p *int, most int) pflag.Value { return positiveInt{p, most} }

// PositiveDuration is PositiveInt for a duration.
func PositiveDuration(p *time.Duration) pflag.Value { return positiveDuration{p} }

type optInt struct{ p **int }

func (o optInt) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.Itoa(**o.p)
}

func (o optInt) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a whole number, got %q", v)
	}
	*o.p = &n
	return nil
}

func (optInt) Type() string { return "int" }

type optFloat struct{ p **float64 }

func (o optFloat) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(**o.p, 'g', -1, 64)
}

func (o optFloat) Set(v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("want a number, got %q", v)
	}
	*o.p = &f
	return nil
}

func (optFloat) Type() string { return "float" }

// List is a flag of comma-separated names that may also be repeated.
type List []string

func (s *List) String() string { return strings.Join(*s, ",") }

// Set adds v's names. A value with none (--lock "", as a script's empty
// variable gives) is an error: the flag left out means "all", and an
// empty one must not mean it too.
func (s *List) Set(v string) error {
	n := len(*s)
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	if len(*s) == n {
		return fmt.Errorf("want one or more names, comma separated, got %q (leave the flag out for the default)", v)
	}
	return nil
}

// Type is the value's name in the help: "--lock list".
func (s *List) Type() string { return "list" }

// Multi is a repeatable flag whose values may contain commas.
type Multi []string

func (m *Multi) String() string     { return strings.Join(*m, " ") }
func (m *Multi) Set(v string) error { *m = append(*m, v); return nil }
func (m *Multi) Type() string       { return "string" }

type positiveInt struct {
	p   *int
	max int
}

func (o positiveInt) String() string {
	if o.p == nil {
		return "0"
	}
	return strconv.Itoa(*o.p)
}

func (o positiveInt) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a whole number, got %q", v)
	}
	if n < 1 || n > o.max {
		return fmt.Errorf("want 1..%d (leave the flag out for the default)", o.max)
	}
	*o.p = n
	return nil
}

func (positiveInt) Type() string { return "int" }

type positiveDuration struct{ p *time.Duration }

// String is "0" when unset, which the help reads as no default to show.
func (o positiveDuration) String() string {
	if o.p == nil || *o.p == 0 {
		return "0"
	}
	return o.p.String()
}

func (o positiveDuration) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d <= 0 {
		return errors.New("want a positive duration (leave the flag out for the default)")
	}
	*o.p = d
	return nil
}

func (positiveDuration) Type() string { return "duration" }
