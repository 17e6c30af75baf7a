package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/internal/shellword"
	"github.com/lockchaos/lockchaos/scenarios"
)

// The run command's flag helpers and the catalog it loads.

func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("--shard %q: want i/n, e.g. 1/4", s)
	}
	return i, n, nil
}

// commandLine is the run's command line as typed after "run", for
// summary.json, each argument quoted for a shell (shellJoin).
func commandLine(args []string) string {
	return shellword.Join(append([]string{"lockchaos", "run"}, args...))
}

// rerunLine is the run's command line (args, after "run") with each of
// pins (flag, value) in place of what was given for that flag: the line
// that reruns the whole run, whose random seed, measured time scale or
// shard from the CI's variables are nowhere in what was typed.
func rerunLine(args []string, pins [][2]string) string {
	// The run's own flags say which take a value: that value is passed
	// through whatever it looks like (--lock-driver '--seed').
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	(&runConfig{}).bind(fs)
	pinned := map[string]bool{}
	for _, p := range pins {
		pinned[p[0]] = true
	}
	var out, tail []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			tail = args[i:]
			break
		}
		name, _, inline := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		f := fs.Lookup(name)
		flag := strings.HasPrefix(a, "--") && f != nil
		takesValue := flag && !inline && f.NoOptDefVal == "" && i+1 < len(args)
		if !flag || !pinned[name] {
			out = append(out, a)
		}
		if takesValue {
			i++
			if !pinned[name] {
				out = append(out, args[i])
			}
		}
	}
	for _, p := range pins {
		out = append(out, "--"+p[0], p[1])
	}
	return commandLine(append(out, tail...))
}

// optInt and optFloat are flags stored in a pointer set only when the
// flag is given, so an unset flag keeps the scenario's own value.
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

// stringList is a flag of comma-separated names that may also be repeated.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

// Set adds v's names. A value with none (--lock "", as a script's empty
// variable gives) is an error: the flag left out means "all", and an
// empty one must not mean it too.
func (s *stringList) Set(v string) error {
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
func (s *stringList) Type() string { return "list" }

// multiList is a repeatable flag whose values may contain commas.
type multiList []string

func (m *multiList) String() string     { return strings.Join(*m, " ") }
func (m *multiList) Set(v string) error { *m = append(*m, v); return nil }
func (m *multiList) Type() string       { return "string" }

// loadCatalog is scenarios.LoadCatalog, its errors named by the flags.
func loadCatalog(files []string, lockDrivers []string) ([]scenarios.Scenario, error) {
	catalog, err := scenarios.LoadCatalog(files, lockDrivers)
	return catalog, namedFlag(err)
}

// positiveInt and positiveDuration are override flags whose 0 would mean
// "not given": given, they must be positive (up to max, for an int), and
// leaving the flag out keeps the default its help names.
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
