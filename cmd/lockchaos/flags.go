package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/lockimpl"
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
// says which variables it used.
func shardFromEnv(getenv func(string) string) (shard, from string, err error) {
	if i, n := getenv("CI_NODE_INDEX"), getenv("CI_NODE_TOTAL"); i != "" && n != "" {
		return i + "/" + n, "CI_NODE_INDEX/CI_NODE_TOTAL", nil
	}
	if i := getenv("JOB_COMPLETION_INDEX"); i != "" {
		n := getenv("LOCKCHAOS_SHARD_TOTAL")
		idx, err := strconv.Atoi(i)
		if err != nil || n == "" {
			return "", "", fmt.Errorf("JOB_COMPLETION_INDEX=%q needs LOCKCHAOS_SHARD_TOTAL (the Job's completions) to make a shard", i)
		}
		return strconv.Itoa(idx+1) + "/" + n, "JOB_COMPLETION_INDEX/LOCKCHAOS_SHARD_TOTAL", nil
	}
	return "", "", nil
}

func rerunFlags(d time.Duration, clients int, files []string) string {
	s := ""
	if d > 0 {
		s += " --duration " + d.String()
	}
	if clients > 0 {
		s += fmt.Sprintf(" --clients %d", clients)
	}
	for _, f := range files {
		s += " --scenarios-file " + f
	}
	return s
}

func commandLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t'\"") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.TrimSpace("lockchaos run " + strings.Join(q, " "))
}

// intPtr and floatPtr parse a flag into a pointer set only when the flag
// is given, so an unset flag keeps the scenario's own value.
func intPtr(p **int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", v)
		}
		*p = &n
		return nil
	}
}

func floatPtr(p **float64) func(string) error {
	return func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("want a number, got %q", v)
		}
		*p = &f
		return nil
	}
}

// multiList is a repeatable flag whose values may contain commas.
type multiList []string

func (m *multiList) String() string     { return strings.Join(*m, " ") }
func (m *multiList) Set(v string) error { *m = append(*m, v); return nil }

// loadCatalog is the built-in catalog with the scenario files applied and
// every driver lock (from the files and from --lock-driver) registered.
func loadCatalog(files []string, lockDrivers []string) ([]scenarios.Scenario, error) {
	for _, v := range lockDrivers {
		d, err := drivers.Parse(v)
		if err != nil {
			return nil, err
		}
		if err := lockimpl.Register(d.Spec()); err != nil {
			return nil, fmt.Errorf("--lock-driver %s: %w", d.Name, err)
		}
	}
	catalog := scenarios.Catalog()
	for _, f := range files {
		file, err := scenarios.LoadFile(f)
		if err != nil {
			return nil, err
		}
		if err := file.Register(); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if catalog, err = file.Apply(catalog); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
	}
	return catalog, nil
}

// parseArgs parses a command's flags wherever they stand among its
// arguments ("check FILE --json" as well as "check --json FILE"; after
// "--" everything is an argument) and returns the arguments. On --help it
// prints the usage and returns exitOK; on a bad flag it says what is wrong,
// suggests the flag that was probably meant, and returns exitUsage,
// without the whole usage text.
func parseArgs(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, int, bool) {
	var tail []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, tail = args[:i], args[i+1:]
	}
	// The flag package prints the whole usage on any error; we print one
	// line and a suggestion instead, and the usage only when asked.
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(stderr) }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			fs.SetOutput(stderr)
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, exitOK, false
			}
			fmt.Fprintf(stderr, "lockchaos %s: %v%s\nRun 'lockchaos %s --help' for its flags.\n", fs.Name(), err, suggestFlag(fs, err), fs.Name())
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return append(positional, tail...), exitOK, true
}

// suggestFlag names the defined flag closest to an undefined one.
func suggestFlag(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDist || (strings.HasPrefix(f.Name, name) && bestDist > 1) {
			best, bestDist = f.Name, min(d, 1)
		}
	})
	if best == "" {
		return ""
	}
	return " (did you mean --" + best + "?)"
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
