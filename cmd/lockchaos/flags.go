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

// shardFromEnv reads the shard the CI system or orchestrator already
// assigned: GitLab's parallel jobs (CI_NODE_INDEX, 1-based, and
// CI_NODE_TOTAL), or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX,
// 0-based, with the total in LOCKCHAOS_SHARD_TOTAL, which the Job's
// manifest sets to its completions). It returns "" when none is set, and
// says which variables it used. Half a pair, or a value that is not a
// shard, is an error naming the variables: a job that silently ran every
// cell (or none) would pass its CI gate for the wrong reason.
func shardFromEnv(getenv func(string) string) (shard, from string, err error) {
	if i, n := getenv("CI_NODE_INDEX"), getenv("CI_NODE_TOTAL"); i != "" || n != "" {
		const from = "CI_NODE_INDEX/CI_NODE_TOTAL"
		idx, total, err := envShard("CI_NODE_INDEX", i, "CI_NODE_TOTAL", n, 1)
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("%d/%d", idx, total), from, nil
	}
	if i, n := getenv("JOB_COMPLETION_INDEX"), getenv("LOCKCHAOS_SHARD_TOTAL"); i != "" || n != "" {
		idx, total, err := envShard("JOB_COMPLETION_INDEX", i, "LOCKCHAOS_SHARD_TOTAL", n, 0)
		if err != nil {
			return "", "", err
		}
		return fmt.Sprintf("%d/%d", idx+1, total), "JOB_COMPLETION_INDEX/LOCKCHAOS_SHARD_TOTAL", nil
	}
	return "", "", nil
}

// envShard reads an index variable (counted from base) and a total one:
// both set, whole numbers, the index in base..total-1+base.
func envShard(iName, i, nName, n string, base int) (idx, total int, err error) {
	switch {
	case i == "":
		return 0, 0, fmt.Errorf("%s=%q is set without %s: set both (or neither, or --shard i/n)", nName, n, iName)
	case n == "":
		hint := ""
		if nName == "LOCKCHAOS_SHARD_TOTAL" {
			hint = " (the Job's completions)"
		}
		return 0, 0, fmt.Errorf("%s=%q needs %s%s to make a shard: set both (or --shard i/n)", iName, i, nName, hint)
	}
	idx, err1 := strconv.Atoi(i)
	total, err2 := strconv.Atoi(n)
	switch {
	case err2 != nil || total < 1:
		return 0, 0, fmt.Errorf("%s=%q: want a whole number of shards, 1 or more", nName, n)
	case err1 != nil || idx < base || idx > total-1+base:
		return 0, 0, fmt.Errorf("%s=%q: want a whole number in %d..%d (%s=%d, counted from %d)", iName, i, base, total-1+base,
			nName, total, base)
	}
	return idx, total, nil
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
