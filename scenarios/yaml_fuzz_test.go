package scenarios_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/lockchaos/lockchaos/backend/sim"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/scenarios"
)

// fileLine is how every error of a scenarios file begins: "f.yaml:7: ".
var fileLine = regexp.MustCompile(`^f\.yaml:[1-9]\d*: `)

// FuzzLoad: whatever a scenarios file holds, Load never panics, and every
// error it (or Apply, which looks up the scenarios a lock expects
// something of) returns names the file and a line. Seeds: the shipped
// scenario files and the shapes the other tests write.
//
//	go test ./scenarios -run '^$' -fuzz FuzzLoad -fuzztime 5m
func FuzzLoad(f *testing.F) {
	for _, path := range []string{"critiques.yaml", "../drivers/libs.yaml"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"",
		"scenarios:\n  - name: x\n    expect: {token: safe}\n",
		"\ufeffscenarios:\n  - name: x\n    expect: {token: safe}\n---\nscenarios: []\n",
		"scenarios:\n  - name: x\n    max_indefinite: .nan\n    gap_min: 1ms\n    gap_max: 1ms\n    expect: {token: safe}\n",
		"scenarios:\n  - name: x\n    faults: [{kind: client-pause, pause: 1ns}, {kind: clock-jump, jump: -1s}]\n" +
			"    expect: {naive: {unsafe: [mutual-exclusion]}, no-ttl: {safety: safe, liveness: stuck}}\n",
		"locks:\n  - name: d\n    command: ./d\n    nodes: 3\n    expect: {baseline: safe, nope: unsafe}\n",
		"scenarios:\n  - &a {name: x, expect: {token: safe}}\n  - *a\n",
		"scenarios:\n  - name: x\n    ttl: 0s\n    clients: 300\n    expect: {token: n/a}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := scenarios.Load(b, "f.yaml")
		if err == nil {
			_, err = file.Apply(scenarios.Catalog())
		}
		if err != nil && !fileLine.MatchString(err.Error()) {
			t.Fatalf("%q: error without file:line: %v", b, err)
		}
		if err == nil {
			planEach(t, file)
		}
	})
}

// planEach plans every cell of a loaded file's scenarios with a built-in
// lock (pure: nothing starts), so what a file lets through reaches the
// planner's arithmetic too: it must not panic, and a scenario the loader
// accepted plans into at least one part.
func planEach(t *testing.T, file *scenarios.File) {
	for _, sc := range file.Scenarios {
		for name, e := range sc.Expect {
			spec, err := lockimpl.Lookup(name)
			if err != nil {
				continue // a lock the file declares: not registered here
			}
			p := scenarios.NewPlan(scenarios.Cell{Scenario: sc, Lock: spec, Expect: e}, scenarios.Options{Backend: sim.New(nil)})
			if len(p.Parts) == 0 || p.Timeout <= 0 {
				t.Fatalf("%s: %d parts, timeout %v", p.Name(), len(p.Parts), p.Timeout)
			}
		}
	}
}
