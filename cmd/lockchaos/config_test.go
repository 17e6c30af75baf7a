package main

import (
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

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
		{"--repeat", "2", "--same-seed"},
		{"--toxiproxy-api", "127.0.0.1:8474", "--parallel", "1"},
		{"--toxiproxy-api", "127.0.0.1:0"},
		{"--backend", "external", "--redis-addr", "127.0.0.1:6379"},
		{"--time-scale", "0.1"}, {"--time-scale", "100"},
	} {
		resolved(t, args...)
	}
}

// TestResolveRunErrorsNameTheFlag: each check's error names the flag at
// fault. Those scenarios.Options.Validate words name the option instead
// ("clients", "max duration", "part length", "evidence floor"): the run
// has always printed them so.
func TestResolveRunErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--repeat", "0"}, "--repeat"},
		{[]string{"--parallel", "0"}, "--parallel"},
		{[]string{"--budget", "0s"}, "--budget"},
		{[]string{"--duration", "-1s"}, "--duration"},
		{[]string{"--clients", "-1"}, "--clients"},
		{[]string{"--time-scale", "0.01"}, "--time-scale 0.01"},
		{[]string{"--time-scale", "101"}, "--time-scale 101"},
		{[]string{"--time-scale", "-2"}, "--time-scale -2"},
		{[]string{"--clients", "100000"}, "clients 100000 out of range"},
		{[]string{"--max-duration", "-1s"}, "max duration"},
		{[]string{"--part-length", "-1s"}, "part length"},
		{[]string{"--min-cycles", "-1"}, "evidence floor"},
		{[]string{"--min-exercised", "-1"}, "evidence floor"},
		{[]string{"--max-indefinite", "1.5"}, "max_indefinite"},
		{[]string{"--backend", "cloud"}, `unknown backend "cloud"`},
		{[]string{"--same-seed"}, "--same-seed goes with --repeat"},
		{[]string{"--replay-on", "process"}, "--replay-on goes with --backend sim"},
		{[]string{"--backend", "sim", "--replay-on", "sim"}, `--replay-on "sim"`},
		{[]string{"--backend", "sim", "--time-scale", "2"}, "--time-scale 2 with --backend sim"},
		{[]string{"--backend", "sim", "--toxiproxy-api", "127.0.0.1:0"}, "--toxiproxy-api with --backend sim"},
		{[]string{"--backend", "sim", "--redis-image", "x"}, "--redis-image with --backend sim"},
		{[]string{"--toxiproxy-api", "10.0.0.1:80"}, "--toxiproxy-api: "},
		{[]string{"--toxiproxy-api", "127.0.0.1:8474", "--parallel", "2"}, "add --parallel 1"},
		{[]string{"--backend", "external"}, "--redis-addr"},
		{[]string{"--redis-addr", "127.0.0.1:6379"}, "--redis-addr goes with --backend external"},
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

// TestCellOptionsCarryTheSettings: every cell option the flags give
// reaches scenarios.Options, with the target's backend and timing.
func TestCellOptionsCarryTheSettings(t *testing.T) {
	c := resolved(t, "--seed", "7", "--out", "o", "--duration", "3s", "--clients", "4", "--budget", "1m",
		"--max-duration", "9s", "--part-length", "5s", "--in-parts", "--min-cycles", "5", "--toxiproxy-api", "127.0.0.1:0",
		"--scenarios-file", "x.yaml")
	opts := c.cellOptions(target{timing: timing{scale: 1.5, nodeOp: 20 * time.Millisecond}, named: "process"}, nil)
	five := 5
	want := scenarios.Options{Seed: 7, OutDir: "o", Duration: 3 * time.Second, Clients: 4, Budget: time.Minute,
		MaxDuration: 9 * time.Second, PartLength: 5 * time.Second, InParts: true, Floor: scenarios.FloorOverride{MinCycles: &five},
		ToxiproxyAPI: "127.0.0.1:0", TimeScale: 1.5, NodeOpTime: 20 * time.Millisecond,
		RerunFlags: " --duration 3s --clients 4 --scenarios-file x.yaml --backend process --time-scale 1.50"}
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("options\n got %+v\nwant %+v", opts, want)
	}
}

// rerunRoles says what a cell's rerun line does with each of run's
// settings; TestRerunLineParsesBackToTheRun checks it. A new setting must
// be listed, and is carried only when rerunFlags writes it.
var rerunRoles = map[string]string{
	// The line names the cell: its scenario, lock and run seed.
	"scen": "line", "locks": "line", "seed": "line",
	// Carried as the cell ran.
	"duration": "carried", "clients": "carried", "files": "carried", "timeScale": "carried (as measured or given)",
	"backend": "carried when named (the simulation, a replay's backend); else the rerun finds Redis with auto",
	// Nothing to choose for one cell and one seed, or not the cell's.
	"expects": "one cell", "shard": "one cell", "parallel": "one cell", "repeat": "one seed", "sameSeed": "one seed",
	"keepHistories": "one seed", "replayOn": "one seed", "out": "output", "asJSON": "output", "cpuProfile": "output",
	"toxAPI": "output",
	// Not carried: the rerun runs with the default (known gaps, kept as
	// they are; lockDrivers is the --lock-driver issue).
	"lockDrivers": "dropped", "budget": "dropped", "floor": "dropped", "maxDuration": "dropped", "partLength": "dropped",
	"inParts": "dropped", "image": "dropped", "addrs": "dropped",
}

func TestEveryRunSettingHasARerunRole(t *testing.T) {
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
// writes it (scenarios.NewPlan with the run's cellOptions), parses it back
// through run's flags and resolves it: what the line carries comes back
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
		{nil, target{timing: timing{scale: 1}}},
		{[]string{"--seed", "9", "--duration", "3s", "--clients", "4", "--time-scale", "1.5"}, target{timing: timing{scale: 1.5}}},
		{[]string{"--backend", "sim", "--duration", "1m30s", "--scenarios-file", "a.yaml", "--scenarios-file", "b.yaml"},
			target{timing: timing{scale: 1, virtual: true}, named: "sim"}},
		// A replay: measured on process, named in the line.
		{[]string{"--backend", "sim", "--seed", "3", "--replay-on", "process", "--repeat", "20"}, target{timing: timing{scale: 1.25}, named: "process"}},
		// Settings the line does not carry rerun at their defaults.
		{[]string{"--backend", "process", "--budget", "1m", "--min-cycles", "5", "--max-duration", "9s", "--part-length", "5s",
			"--in-parts", "--lock-driver", "x=./x", "--out", "o", "--parallel", "1", "--toxiproxy-api", "127.0.0.1:0",
			"--expect", "unsafe", "--shard", "1/2", "--repeat", "3", "--same-seed", "--json", "--cpuprofile", "p"}, target{timing: timing{scale: 2}}},
	} {
		ran := resolved(t, c.args...)
		p := scenarios.NewPlan(cells[0], ran.cellOptions(c.on, nil))
		line := p.Rerun
		args, ok := strings.CutPrefix(line, "lockchaos run ")
		if !ok {
			t.Fatalf("%v: rerun line %q", c.args, line)
		}
		back := resolved(t, strings.Fields(args)...)
		want := resolved(t, "--scenario", "gc-pause", "--lock", "token", "--seed", strconv.FormatInt(p.RunSeed, 10))
		want.duration, want.clients, want.files, want.timeScale = ran.duration, ran.clients, ran.files, c.on.scale
		if c.on.named != "" {
			want.backend = c.on.named
		}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%v: rerun line %q parses back to\n %+v\nwant %+v", c.args, line, back, want)
		}
	}
}
