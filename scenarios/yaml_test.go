package scenarios_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockchaos/lockchaos/drivers"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

const allowedNames = `use letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64 characters, no ".."`

// TestYAMLRefusesNamesThatLeaveOut: a scenario or lock name that would
// put files outside --out is an error at its line, listing what a name may
// be.
func TestYAMLRefusesNamesThatLeaveOut(t *testing.T) {
	for body, want := range map[string]string{
		"scenarios:\n  - name: ../../../ESCAPED\n    expect: {token: safe}\n":                           `f.yaml:2: scenarios: invalid scenario "../../../ESCAPED": `,
		"scenarios:\n  - name: x\n    expect: {token: safe}\n  - name: ..\n    expect: {token: safe}\n": `f.yaml:4: scenarios: invalid scenario "..": `,
		"scenarios:\n  - name: a/b\n    expect: {token: safe}\n":                                        `f.yaml:2: scenarios: invalid scenario "a/b": `,
		"locks:\n  - name: ..\n    command: \"true\"\n":                                                 `f.yaml:2: lockimpl: invalid config: lock name "..": `,
		"locks:\n  - name: x;touch${IFS}PWNED;#\n    command: \"true\"\n":                               `f.yaml:2: lockimpl: invalid config: lock name "x;touch${IFS}PWNED;#": `,
	} {
		_, err := scenarios.Load([]byte(body), "f.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), allowedNames) {
			t.Errorf("%q:\n got %v\nwant %s...%s", body, err, want, allowedNames)
		}
	}
}

// TestYAMLUnknownFieldsSayWhatWasMeant: an unknown field is named with
// where it is, the field it most likely meant and every valid one; never a
// Go type name.
func TestYAMLUnknownFieldsSayWhatWasMeant(t *testing.T) {
	for body, want := range map[string]string{
		"locks:\n  - name: rb\n    command: ruby d.rb\n    signal_loss: true\n": "f.yaml:4: scenarios: unknown field signal_loss in lock rb " +
			"(did you mean signals_loss?); valid: name, doc, command, nodes, service, fencing, renews, signals_loss, lease, expect",
		"scenarios:\n  - name: x\n    tll: 1s\n    expect: {token: safe}\n": "f.yaml:3: scenarios: unknown field tll in scenario x " +
			"(did you mean ttl?); valid: name, description, topology, node_timeout, ttl, duration, clients, keys, work_min, work_max, call_timeout, " +
			"fsync, faults, first_fault, gap_min, gap_max, recover_within, min_exercised, min_cycles, max_indefinite, expect",
		"scenarios:\n  - name: x\n    colour: red\n    expect: {token: safe}\n": "f.yaml:3: scenarios: unknown field colour in scenario x; " +
			"valid: name, description,",
		"scenarios:\n  - name: x\n    Min_Cycles: 3\n    expect: {token: safe}\n": "f.yaml:3: scenarios: unknown field Min_Cycles " +
			"in scenario x (did you mean min_cycles?)",
		"scenarios:\n  - expect: {token: safe}\n    faults:\n      - kind: client-pause\n        pasue: 1s\n": "f.yaml:5: scenarios: " +
			"unknown field pasue in fault 1 of scenario #1 (did you mean pause?); valid: kind, pause",
		"scenario:\n  - name: x\n": "f.yaml:1: scenarios: unknown field scenario at the top level (did you mean scenarios?); valid: scenarios, locks",
		"scenarios:\n  - name: x\n    ttl: soon\n    expect: {token: safe}\n": "f.yaml:3: scenarios: invalid scenario: " +
			"want a duration (such as 300ms or 2s), got `soon`",
		"scenarios:\n  name: x\n": "f.yaml:2: scenarios: invalid scenario: want a list of scenarios (- name: ...), got a mapping",
	} {
		_, err := scenarios.Load([]byte(body), "f.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", body, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), "scenarios.") || strings.Contains(err.Error(), " type ")) {
			t.Errorf("%q: %v names a Go type", body, err)
		}
	}
}

// TestYAMLUnknownScenarioInALocksExpectHasItsLine: the scenario a lock
// expects something of is looked up once every file is read (it may come
// from another file); the error still points at its line.
func TestYAMLUnknownScenarioInALocksExpectHasItsLine(t *testing.T) {
	body := "locks:\n  - name: i24-expect\n    command: \"true\"\n    expect:\n      baseline: safe\n      slow-holdr: unsafe\n"
	f, err := scenarios.Load([]byte(body), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Apply(scenarios.Catalog())
	want := `f.yaml:6: scenarios: unknown scenario "slow-holdr" in the expect of lock i24-expect (did you mean slow-holder?); valid: abandoned-lease, baseline,`
	if !errors.Is(err, scenarios.ErrUnknownScenario) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v\nwant %s...", err, want)
	}
	// Declared twice (here: a built-in's name), Register names the line.
	f, err = scenarios.Load([]byte("scenarios:\n  - name: x\n    expect: {token: safe}\nlocks:\n  - name: token\n    command: \"true\"\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Register(); err == nil || !strings.HasPrefix(err.Error(), `f.yaml:5: lockimpl: invalid config: lock "token" is already registered`) {
		t.Fatalf("Register: %v", err)
	}
}

// TestYAMLEmptyFileSaysSo: a file with nothing in it is said to be empty,
// not "EOF".
func TestYAMLEmptyFileSaysSo(t *testing.T) {
	for _, body := range []string{"", "\n\n", "# only a comment\n", "---\n", "~\n", "null\n"} {
		_, err := scenarios.Load([]byte(body), "f.yaml")
		if !errors.Is(err, scenarios.ErrEmptyFile) || err.Error() != "f.yaml:1: scenarios: empty scenarios file (no scenarios or locks)" {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// TestYAMLExplicitZeroIsAnError: a field written as 0 where 0 would
// silently mean the default is an error at its line, saying what leaving
// it out gives; where 0 is a value (the range's other end is set, a floor
// count), it is accepted.
func TestYAMLExplicitZeroIsAnError(t *testing.T) {
	sc := func(fields string) string { return "scenarios:\n  - name: x\n    expect: {token: safe}\n" + fields }
	for body, want := range map[string]string{
		sc("    ttl: 0s\n"):                        `f.yaml:4: scenarios: invalid scenario "x": ttl must be positive; leave it out for the default 300ms`,
		sc("    clients: 0\n"):                     `f.yaml:4: scenarios: invalid scenario "x": clients must be positive; leave it out for the default 8`,
		sc("    duration: 0ms\n"):                  `f.yaml:4: scenarios: invalid scenario "x": duration must be positive; leave it out for the default 2s`,
		sc("    keys: 0\n"):                        `f.yaml:4: scenarios: invalid scenario "x": keys must be positive; leave it out for the default 1`,
		sc("    call_timeout: 0s\n"):               `f.yaml:4: scenarios: invalid scenario "x": call_timeout must be positive; leave it out for the default 250ms`,
		sc("    first_fault: 0s\n"):                `f.yaml:4: scenarios: invalid scenario "x": first_fault must be positive; leave it out for the default 100ms`,
		sc("    work_max: 0s\n"):                   `f.yaml:4: scenarios: invalid scenario "x": work_max must be positive; leave work_min and work_max out for the default 2ms-10ms`,
		sc("    work_min: 0s\n"):                   `f.yaml:4: scenarios: invalid scenario "x": work_min 0 needs a positive work_max; leave both out for the default 2ms-10ms`,
		sc("    gap_min: 0s\n"):                    `f.yaml:4: scenarios: invalid scenario "x": gap_min must be at least 1ms; leave gap_min and gap_max out for the default 100ms-250ms`,
		sc("    gap_min: 0s\n    gap_max: 50ms\n"): `f.yaml:4: scenarios: invalid scenario "x": gap_min must be at least 1ms; leave gap_min and gap_max out for the default 100ms-250ms`,
		sc("    ttl: 200ms\n    gap_max: 0s\n"):    `f.yaml:5: scenarios: invalid scenario "x": gap_max must be positive; leave gap_min and gap_max out for the default 100ms-250ms`,
		"locks:\n  - name: rb\n    command: ruby d.rb\n    nodes: 0\n": `f.yaml:4: drivers: invalid driver: lock "rb": nodes must be positive; ` +
			`leave it out for the default 1 (a driver lock always needs Redis)`,
	} {
		_, err := scenarios.Load([]byte(body), "f.yaml")
		if err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", body, err, want)
		}
	}
	for _, body := range []string{
		sc("    work_min: 0s\n    work_max: 5ms\n"), sc("    gap_min: 1ms\n    gap_max: 50ms\n"),
		sc("    min_exercised: 0\n    min_cycles: 0\n    max_indefinite: 0\n"),
		sc("    faults:\n      - kind: node-restart\n        delay: 0s\n"),
	} {
		if _, err := scenarios.Load([]byte(body), "f.yaml"); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// TestDriverLocksRunWhereTheirExpectSays pins which cells a driver lock
// gets. A lock runs where a scenario expects something of it (a file's
// lock: the scenarios its expect lists, gated). A lock no scenario expects
// anything of (--lock-driver, or a file's lock without expect) runs in
// every scenario once it is named in --lock, reported as "either", not
// gated; unnamed, it runs nowhere.
func TestDriverLocksRunWhereTheirExpectSays(t *testing.T) {
	f, err := scenarios.Load([]byte("locks:\n  - name: i24-listed\n    command: \"true\"\n    expect: {baseline: safe, gc-pause: unsafe}\n"+
		"  - name: i24-unlisted\n    command: \"true\"\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Register(); err != nil {
		t.Fatal(err)
	}
	flag, err := drivers.Parse("i24-flag=true")
	if err != nil {
		t.Fatal(err)
	}
	if err := lockimpl.Register(flag.Spec()); err != nil {
		t.Fatal(err)
	}
	list, err := f.Apply(scenarios.Catalog())
	if err != nil {
		t.Fatal(err)
	}
	cellsOf := func(locks ...string) map[string]string {
		cells, err := scenarios.Select(list, nil, locks)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range cells {
			out[c.Name()] = c.Expect.String()
		}
		return out
	}
	listed := cellsOf("i24-listed")
	if len(listed) != 2 || listed["baseline/i24-listed"] != "safe" || listed["gc-pause/i24-listed"] != "unsafe" {
		t.Errorf("--lock i24-listed: %v, want only the scenarios its expect lists", listed)
	}
	for _, name := range []string{"i24-flag", "i24-unlisted"} {
		got := cellsOf(name)
		if len(got) != len(list) {
			t.Errorf("--lock %s: %d cells, want one per scenario (%d)", name, len(got), len(list))
		}
		for cell, e := range got {
			if e != "safety either, liveness either" {
				t.Errorf("%s: %s, want either (in both groups)", cell, e)
			}
		}
	}
	all := cellsOf()
	for cell := range all {
		if strings.HasSuffix(cell, "/i24-flag") || strings.HasSuffix(cell, "/i24-unlisted") {
			t.Errorf("without --lock, %s runs", cell)
		}
	}
	if all["baseline/i24-listed"] != "safe" || all["gc-pause/i24-listed"] != "unsafe" {
		t.Errorf("without --lock, the listed lock does not run where its expect says: %v", all)
	}
}
