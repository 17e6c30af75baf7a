package main

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// now is the clock the tests resolve with: a zero --seed becomes 1 + its
// nanoseconds mod 1e9.
var testNow = time.Unix(1700000000, 123456789)

// parseRun parses run's flags as cobra does (bind, on pflag), without
// resolving them.
func parseRun(args ...string) (runConfig, error) {
	var c runConfig
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	c.bind(fs)
	err := fs.Parse(args)
	return c, err
}

// resolved is args parsed and resolved; it fails the test on an error.
func resolved(t *testing.T, args ...string) runConfig {
	t.Helper()
	f, err := parseRun(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	c, err := resolveRun(f, testNow)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c
}

func TestResolveRunDefaults(t *testing.T) {
	want := runConfig{seed: 123456790, repeat: 1, parallel: scenarios.DefaultParallel(), budget: 30 * time.Second,
		backend: "auto", out: "out/chaos"}
	if got := resolved(t); !reflect.DeepEqual(got, want) {
		t.Errorf("no flags:\n got %+v\nwant %+v", got, want)
	}
	if got := resolved(t, "--seed", "42"); got.seed != 42 {
		t.Errorf("--seed 42 resolved to seed %d", got.seed)
	}
	// Flags that go together.
	for _, args := range [][]string{
		{"--backend", "sim", "--time-scale", "1"},
		{"--backend", "sim", "--replay-on", "docker", "--redis-image", "redis:7"},
		{"--backend", "sim", "--replay-on", "auto", "--redis-image", "redis:7"},
		{"--backend", "docker", "--redis-image", "redis:7"},
		{"--redis-image", "redis:7"}, // auto: docker
		{"--backend", "sim", "--repeat", "2", "--keep-histories"},
		{"--repeat", "2", "--same-seed"},
		{"--toxiproxy-api", "127.0.0.1:8474", "--parallel", "1"},
		{"--toxiproxy-api", "127.0.0.1:0"},
		{"--backend", "external", "--redis-addr", "127.0.0.1:6379"},
		{"--backend", "external", "--redis-addr", "127.0.0.1:6379,127.0.0.1:6380,[::1]:6379"},
		{"--backend", "external", "--postgres-url", "postgres://app:pw@db:5432/x"},
		{"--backend", "external", "--redis-addr", "127.0.0.1:6379", "--postgres-url", "postgres://app@db:5432/x"},
		{"--time-scale", "0.1"}, {"--time-scale", "100"},
		{"--duration", "2s", "--max-duration", "2s"},
		{"--clients", "256"}, {"--parallel", strconv.Itoa(scenarios.MaxParallel())}, {"--max-indefinite", "0"}, {"--min-cycles", "0"},
	} {
		resolved(t, args...)
	}
}

// TestResolveRunErrorsNameTheFlag: each check's error names the flag at
// fault and what it wants; NaN and the infinities are out of range for
// every float flag.
func TestResolveRunErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--repeat", "0"}, "--repeat 0: want 1 or more"},
		{[]string{"--repeat", "-3"}, "--repeat -3: want 1 or more"},
		{[]string{"--repeat", strconv.Itoa(scenarios.MaxRuns + 1)}, "at most 100000 runs"},
		{[]string{"--parallel", "0"}, "--parallel 0: want 1 or more"},
		{[]string{"--parallel", "1000000"}, "--parallel 1000000: at most"},
		{[]string{"--budget", "0s"}, "--budget 0s: want a positive duration"},
		{[]string{"--budget", "-1s"}, "--budget -1s"},
		{[]string{"--duration", "2s", "--max-duration", "1s"}, "--max-duration 1s is shorter than --duration 2s"},
		{[]string{"--time-scale", "0.01"}, "--time-scale 0.01"},
		{[]string{"--time-scale", "101"}, "--time-scale 101"},
		{[]string{"--time-scale", "-2"}, "--time-scale -2"},
		{[]string{"--time-scale", "NaN"}, "--time-scale NaN"},
		{[]string{"--time-scale", "Inf"}, "--time-scale +Inf"},
		{[]string{"--time-scale", "-Inf"}, "--time-scale -Inf"},
		{[]string{"--min-cycles", "-1"}, "--min-cycles -1: want 0 or more"},
		{[]string{"--min-exercised", "-1"}, "--min-exercised -1: want 0 or more"},
		{[]string{"--max-indefinite", "1.5"}, "--max-indefinite 1.5: want a share in 0..1"},
		{[]string{"--max-indefinite", "NaN"}, "--max-indefinite NaN"},
		{[]string{"--max-indefinite", "-Inf"}, "--max-indefinite -Inf"},
		{[]string{"--backend", "cloud"}, `unknown backend "cloud"`},
		{[]string{"--same-seed"}, "--same-seed goes with --repeat"},
		{[]string{"--replay-on", "process"}, "--replay-on goes with --backend sim"},
		{[]string{"--backend", "sim", "--replay-on", "sim"}, `--replay-on "sim"`},
		{[]string{"--backend", "sim", "--time-scale", "2"}, "--time-scale 2 with --backend sim"},
		{[]string{"--backend", "sim", "--toxiproxy-api", "127.0.0.1:0"}, "--toxiproxy-api with --backend sim"},
		{[]string{"--backend", "sim", "--redis-image", "x"}, "--redis-image with --backend sim"},
		{[]string{"--backend", "sim", "--replay-on", "process", "--redis-image", "x"}, "--redis-image with --replay-on process"},
		{[]string{"--backend", "process", "--redis-image", "x"}, "--redis-image with --backend process"},
		{[]string{"--backend", "external", "--redis-addr", "h:1", "--redis-image", "x"}, "--redis-image with --backend external"},
		{[]string{"--keep-histories"}, "--keep-histories goes with --backend sim and --repeat"},
		{[]string{"--backend", "process", "--repeat", "3", "--keep-histories"}, "--keep-histories goes with --backend sim"},
		{[]string{"--backend", "sim", "--keep-histories"}, "--keep-histories goes with --backend sim and --repeat"},
		{[]string{"--toxiproxy-api", "10.0.0.1:80"}, "--toxiproxy-api: "},
		{[]string{"--backend", "external"}, "--redis-addr"},
		{[]string{"--redis-addr", "127.0.0.1:6379"}, "--redis-addr and --postgres-url go with --backend external"},
		{[]string{"--backend", "external", "--redis-addr", "127.0.0.1:6379,127.0.0.1:6379,127.0.0.1:6379"},
			"--redis-addr 127.0.0.1:6379 given twice: each address must be a different server"},
		{[]string{"--backend", "external", "--redis-addr", "Redis.example:6379,redis.EXAMPLE:6379"}, "given twice (as Redis.example:6379)"},
		{[]string{"--backend", "external", "--redis-addr", "nocolon"}, `--redis-addr "nocolon": want host:port`},
		{[]string{"--postgres-url", "postgres://app@db:5432/x"}, "--redis-addr and --postgres-url go with --backend external"},
		{[]string{"--backend", "external", "--postgres-url", "host=db password=s3cret"}, "password=xxxxx: not a postgres:// URL"},
		{[]string{"--backend", "external", "--postgres-url", "postgres://app:s3cret@db:x/y"}, "postgres://app:xxxxx@db:x/y: cannot parse"},
	} {
		f, err := parseRun(c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if _, err := resolveRun(f, testNow); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: error %v; want one saying %q", c.args, err, c.says)
		}
	}
}

// TestOverrideFlagsRefuseZero: an override flag given 0 (or less) is an
// error naming the flag, not a silent "the scenario's own": leaving the
// flag out is how to keep the default.
func TestOverrideFlagsRefuseZero(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--clients", "0"}, `invalid argument "0" for "--clients" flag: want 1..256 (leave the flag out for the default)`},
		{[]string{"--clients", "-1"}, `"--clients" flag: want 1..256`},
		{[]string{"--clients", "100000"}, `"--clients" flag: want 1..256`},
		{[]string{"--clients", "x"}, `"--clients" flag: want a whole number`},
		{[]string{"--duration", "0"}, `invalid argument "0" for "--duration" flag: want a positive duration`},
		{[]string{"--duration", "-1s"}, `"--duration" flag: want a positive duration`},
		{[]string{"--duration", "soon"}, `"--duration" flag: time: invalid duration`},
		{[]string{"--max-duration", "0s"}, `"--max-duration" flag: want a positive duration`},
		{[]string{"--part-length", "-1s"}, `"--part-length" flag: want a positive duration`},
		{[]string{"--node-timeout", "0"}, `"--node-timeout" flag: want a positive duration`},
	} {
		if _, err := parseRun(c.args...); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: error %v; want one saying %q", c.args, err, c.says)
		}
	}
	// The help says what each takes, and shows no default 0 or 0s.
	if _, help, _ := runCLI("run", "--help"); strings.Contains(help, "(default 0s)") || strings.Contains(help, "(default 0)") ||
		!strings.Contains(help, "--clients int                   override each scenario's number of clients, 1..256") {
		t.Errorf("run --help:\n%s", help)
	}
	// A runConfig built in code (not through the flags) still gets the
	// flags' names.
	for _, c := range []struct {
		cfg  runConfig
		says string
	}{
		{runConfig{repeat: 1, parallel: 1, budget: time.Second, backend: "auto", clients: -1}, "--clients -1: out of range 1..256"},
		{runConfig{repeat: 1, parallel: 1, budget: time.Second, backend: "auto", duration: -1}, "--duration -1ns"},
		{runConfig{repeat: 1, parallel: 1, budget: time.Second, backend: "auto", partLength: -1}, "--part-length -1ns"},
	} {
		if _, err := resolveRun(c.cfg, testNow); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: error %v; want one saying %q", c.cfg, err, c.says)
		}
	}
}

// TestCheckCellsBoundsRunsAndMaxDuration: what depends on the selected
// cells: the runs they make under --repeat, and --max-duration against
// each cell's duration (a --max-duration below it would be raised to it
// silently).
func TestCheckCellsBoundsRunsAndMaxDuration(t *testing.T) {
	base, _ := scenarios.Get("baseline")
	token, _ := lockimpl.Lookup("token")
	cells := []scenarios.Cell{{Scenario: base, Lock: token}, {Scenario: base, Lock: token},
		{Scenario: scenarios.Scenario{Name: "long", Duration: 4 * time.Second}, Lock: token}}
	if err := resolved(t, "--repeat", "33333").checkCells(cells); err != nil {
		t.Errorf("3 cells x 33333, at most 100000 runs: %v", err)
	}
	err := resolved(t, "--repeat", "33334").checkCells(cells)
	if err == nil || !strings.Contains(err.Error(), "--repeat 33334: 3 cell(s) x 33334 is 100002 runs, more than the 100000 a run holds") {
		t.Errorf("3 cells x 33334, at most 100000 runs: %v", err)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--max-duration", "1ns"}, "--max-duration 1ns is shorter than baseline/token's duration 2s"},
		{[]string{"--max-duration", "3s"}, "--max-duration 3s is shorter than long/token's duration 4s: a cell always runs its duration; want 4s"},
		{[]string{"--max-duration", "4s"}, ""},
		{[]string{"--duration", "1ns", "--max-duration", "1ns"}, ""},
	} {
		err := resolved(t, c.args...).checkCells(cells)
		if c.says == "" && err != nil || c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)) {
			t.Errorf("%v: %v; want %q", c.args, err, c.says)
		}
	}
}

// TestCellOptionsCarryTheSettings: every cell option the flags give
// reaches scenarios.Options, with the target's backend and timing.
func TestCellOptionsCarryTheSettings(t *testing.T) {
	c := resolved(t, "--seed", "7", "--out", "o", "--duration", "3s", "--clients", "4", "--budget", "1m",
		"--max-duration", "9s", "--part-length", "5s", "--in-parts", "--min-cycles", "5", "--toxiproxy-api", "127.0.0.1:0",
		"--scenarios-file", "x.yaml")
	opts := c.cellOptions(target{Timing: scenarios.Timing{Scale: 1.5, NodeOp: 20 * time.Millisecond}, named: "process"}, nil)
	five := 5
	want := scenarios.Options{Seed: 7, OutDir: "o", Duration: 3 * time.Second, Clients: 4, Budget: time.Minute,
		MaxDuration: 9 * time.Second, PartLength: 5 * time.Second, InParts: true, Floor: scenarios.FloorOverride{MinCycles: &five},
		ToxiproxyAPI: "127.0.0.1:0", TimeScale: 1.5, NodeOpTime: 20 * time.Millisecond}
	rerun := opts.Rerun
	opts.Rerun = nil
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("options\n got %+v\nwant %+v", opts, want)
	}
	sc, _ := scenarios.Get("baseline")
	token, _ := lockimpl.Lookup("token")
	line := rerun(&scenarios.Plan{Scenario: sc, Lock: token, RunSeed: 7})
	if want := "lockchaos run --scenario baseline --lock token --seed 7 --scenarios-file x.yaml --duration 3s --clients 4 " +
		"--budget 1m0s --max-duration 9s --part-length 5s --in-parts --min-cycles 5 --backend process --time-scale 1.50"; line != want {
		t.Errorf("rerun line\n got %s\nwant %s", line, want)
	}
}

// rerunRoles says what a cell's rerun line does with each of run's
// settings; TestRerunLineParsesBackToTheRun checks it. A new setting must
// be listed, and is carried only when rerunFlags (or rerun) writes it.
// Every setting that changes what a cell does is carried.
var rerunRoles = map[string]string{
	// The line names the cell: its scenario, lock and run seed.
	"scen": "line", "locks": "line", "seed": "line",
	// Carried as the cell ran.
	"duration": "carried", "clients": "carried", "files": "carried", "timeScale": "carried (as measured or given)",
	"budget": "carried", "floor": "carried", "maxDuration": "carried", "partLength": "carried", "inParts": "carried",
	"recoverWithin": "carried", "nodeTimeout": "carried", "noWitness": "carried", "lockDrivers": "carried (the one declaring the cell's lock)",
	"backend": "carried when named (--backend, the simulation, a replay's backend); after auto the rerun finds Redis with auto",
	"image":   "carried with the docker backend", "addrs": "carried with the external backend",
	"pgURL": "carried with the external backend, without its password (the rerun reads PGPASSWORD)",
	// Nothing to choose for one cell and one seed, or not the cell's.
	"expects": "one cell", "services": "one cell", "shard": "one cell", "parallel": "one cell", "repeat": "one seed", "sameSeed": "one seed",
	"keepHistories": "one seed", "replayOn": "one seed", "out": "output", "asJSON": "output", "cpuProfile": "output",
	"toxAPI": "output",
}

// carried are the runConfig fields rerunRoles marks carried.
func carried() []string {
	var out []string
	for name, role := range rerunRoles {
		if strings.HasPrefix(role, "carried") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// carry sets in want what a rerun line of a cell (gc-pause/token) run by
// ran on t carries: the fields rerunRoles marks carried
// (TestEveryRunSettingHasARerunRole holds the two lists together).
func carry(want *runConfig, ran runConfig, t target) {
	want.duration, want.clients, want.files, want.budget, want.floor = ran.duration, ran.clients, ran.files, ran.budget, ran.floor
	want.maxDuration, want.partLength, want.inParts, want.timeScale = ran.maxDuration, ran.partLength, ran.inParts, t.Scale
	want.recoverWithin, want.noWitness, want.nodeTimeout = ran.recoverWithin, ran.noWitness, ran.nodeTimeout
	for _, v := range ran.lockDrivers {
		if strings.HasPrefix(v, "token=") {
			want.lockDrivers = append(want.lockDrivers, v)
		}
	}
	if t.named != "" {
		want.backend = t.named
	}
	if t.named == "docker" {
		want.image = ran.image
	}
	if t.named == "external" {
		want.addrs = ran.addrs
		if ran.pgURL != "" {
			want.pgURL = external.WithoutPassword(ran.pgURL)
		}
	}
}

// carriedFields are the fields carry sets.
var carriedFields = []string{"addrs", "backend", "budget", "clients", "duration", "files", "floor", "image", "inParts",
	"lockDrivers", "maxDuration", "noWitness", "nodeTimeout", "partLength", "pgURL", "recoverWithin", "timeScale"}

func TestEveryRunSettingHasARerunRole(t *testing.T) {
	if got := carried(); !reflect.DeepEqual(got, carriedFields) {
		t.Errorf("rerunRoles carries %v\ncarry sets        %v", got, carriedFields)
	}
	var fields []string
	rt := reflect.TypeOf(runConfig{})
	for i := range rt.NumField() {
		fields = append(fields, rt.Field(i).Name)
	}
	var roles []string
	for name := range rerunRoles {
		roles = append(roles, name)
	}
	sort.Strings(fields)
	sort.Strings(roles)
	if !reflect.DeepEqual(fields, roles) {
		t.Errorf("runConfig fields %v\nrerunRoles      %v", fields, roles)
	}
}

// TestRerunLineParsesBackToTheRun renders a cell's rerun line as the run
// writes it (scenarios.NewPlan with the run's cellOptions), has a shell
// split it into words (shellWords: what a pasted line gives), parses them
// through run's flags and resolves them: every carried setting comes back
// as it ran, everything else at its default. This is what keeps rerun
// lines true.
func TestRerunLineParsesBackToTheRun(t *testing.T) {
	cells, err := scenarios.Select(scenarios.Catalog(), []string{"gc-pause"}, []string{"token"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		on   target
	}{
		{nil, target{Timing: scenarios.Timing{Scale: 1}}},
		{[]string{"--seed", "9", "--duration", "3s", "--clients", "4", "--time-scale", "1.5"}, target{Timing: scenarios.Timing{Scale: 1.5}}},
		{[]string{"--backend", "sim", "--duration", "1m30s", "--scenarios-file", "a b.yaml", "--scenarios-file", "$HOME/it's.yaml"},
			target{Timing: scenarios.Timing{Scale: 1, Virtual: true}, named: "sim"}},
		// A replay: measured on process, named in the line.
		{[]string{"--backend", "sim", "--seed", "3", "--replay-on", "process", "--repeat", "20"}, target{Timing: scenarios.Timing{Scale: 1.25}, named: "process"}},
		// Every setting that changes the cell is carried; the others rerun at their defaults.
		{[]string{"--backend", "process", "--budget", "1m", "--min-cycles", "5", "--min-exercised", "0", "--max-indefinite", "0.25",
			"--max-duration", "9s", "--part-length", "5s", "--in-parts", "--lock-driver", "x=./x --flag 'a b' $V; touch PWNED",
			"--lock-driver", "token=./tok", "--out", "o", "--parallel", "1", "--toxiproxy-api", "127.0.0.1:0",
			"--expect", "unsafe", "--shard", "1/2", "--repeat", "3", "--same-seed", "--json", "--cpuprofile", "p"},
			target{Timing: scenarios.Timing{Scale: 2}, named: "process"}},
		{[]string{"--backend", "docker", "--redis-image", "my registry/redis:7"}, target{Timing: scenarios.Timing{Scale: 1}, named: "docker"}},
		{[]string{"--redis-image", "redis:7"}, target{Timing: scenarios.Timing{Scale: 1}, named: "docker"}},
		{[]string{"--backend", "external", "--redis-addr", "10.0.0.1:6379,10.0.0.2:6379"}, target{Timing: scenarios.Timing{Scale: 1}, named: "external"}},
		// The password is not in the line: the rerun reads PGPASSWORD.
		{[]string{"--backend", "external", "--postgres-url", "postgres://app:s3cret@db:5432/billing?sslmode=require"},
			target{Timing: scenarios.Timing{Scale: 1}, named: "external"}},
	} {
		ran := resolved(t, c.args...)
		p := scenarios.NewPlan(cells[0], ran.cellOptions(c.on, nil))
		words := shellWords(t, p.Rerun)
		if len(words) < 2 || words[0] != "lockchaos" || words[1] != "run" {
			t.Fatalf("%v: rerun line %q", c.args, p.Rerun)
		}
		back := resolved(t, words[2:]...)
		want := resolved(t, "--scenario", "gc-pause", "--lock", "token", "--seed", strconv.FormatInt(p.RunSeed, 10))
		carry(&want, ran, c.on)
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%v: rerun line %q parses back to\n %+v\nwant %+v", c.args, p.Rerun, back, want)
		}
	}
}
