package reports

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockchaos/lockchaos/checker"
	"github.com/lockchaos/lockchaos/results"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Package    string           `xml:"package,attr"`
	ID         int              `xml:"id,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       string           `xml:"time,attr"`
	Timestamp  string           `xml:"timestamp,attr,omitempty"`
	Hostname   string           `xml:"hostname,attr,omitempty"`
	Properties *junitProperties `xml:"properties"`
	Cases      []junitCase      `xml:"testcase"`
	// The suite's own output: the details of its passing cases (a failing
	// or erroring case carries its details in its failure or error).
	SystemOut string `xml:"system-out"`
	SystemErr string `xml:"system-err"`
}

type junitProperties struct {
	List []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes dir/junit.xml: a test suite per scenario, a test case
// "scenario/lock" per cell run, a failure for each regression or miss, an
// error for a cell that could not run, could not be decided, stayed below
// its evidence floor or was interrupted, skipped for n/a. Each suite
// carries the run's seed, backend, versions and time scale as properties;
// a case's details appear once (in its failure or error, else in the
// suite's system-out). The shape follows the Ant JUnit structure most
// reporters read (suites with package and id, properties, system-out and
// system-err; nothing but failure, error or skipped inside a case), as
// docs/schema/junit.xsd states it; the tests validate against it.
func WriteJUnit(dir string, s *Summary) (string, error) {
	var suites []junitSuite
	var secs []float64 // each suite's time, summed from its cases
	// Each suite's system-out, built up and set once: appending to the
	// string itself copied it whole per case (a 29,000-run sweep: 16 s
	// and 58 GB of allocation).
	var outs []*strings.Builder
	index := map[string]int{}
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	for _, c := range s.Cells {
		// A simulated cell lives under its own package and class names,
		// so a CI dashboard never files it with (or as) a real one.
		pkg := "lockchaos"
		if c.Simulated {
			pkg = "lockchaos.sim"
		}
		i, ok := index[c.Scenario]
		if !ok {
			i = len(suites)
			index[c.Scenario] = i
			suites = append(suites, junitSuite{Name: strings.ReplaceAll(pkg, ".", "/") + "/" + c.Scenario, Package: pkg, ID: i,
				Timestamp: s.Started.UTC().Format("2006-01-02T15:04:05"), Hostname: host, Properties: runProperties(s)})
			secs = append(secs, 0)
			outs = append(outs, &strings.Builder{})
		}
		suite := &suites[i]
		name := c.Name()
		if s.Repeat > 1 {
			name = fmt.Sprintf("%s [seed %d]", name, c.RunSeed)
		}
		if c.Simulated {
			name += " (sim)"
		}
		tc := junitCase{Classname: pkg + "." + c.Scenario, Name: name, Time: seconds(c.Elapsed.Seconds())}
		details := caseDetails(c)
		if !markOutcome(&tc, suite, c, details) {
			outs[i].WriteString(details)
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
		secs[i] += c.Elapsed.Seconds()
	}
	for i := range suites {
		suites[i].Time = seconds(secs[i])
		suites[i].SystemOut = outs[i].String()
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: suites}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	path := filepath.Join(dir, "junit.xml")
	return path, writeFile(path, append([]byte(xml.Header), append(b, '\n')...))
}

// runProperties are what a CI reader needs to rerun or compare the run.
func runProperties(s *Summary) *junitProperties {
	p := &junitProperties{}
	add := func(name, value string) {
		if value != "" {
			p.List = append(p.List, junitProperty{Name: name, Value: value})
		}
	}
	add("seed", strconv.FormatInt(s.Seed, 10))
	add("backend", s.Backend)
	if s.Simulated {
		add("simulated", "true: miniredis in virtual time, not real Redis")
	}
	add("lockchaos.version", s.Version)
	add("go.version", s.GoVersion)
	add("redis.version", s.RedisVersion)
	add("time_scale", strconv.FormatFloat(max(s.TimeScale, 1), 'f', 2, 64))
	add("shard", s.Shard)
	add("command", s.Command)
	add("rerun", s.Rerun)
	return p
}

func caseDetails(c *results.Cell) string {
	var b strings.Builder
	if c.Simulated {
		fmt.Fprintf(&b, "SIMULATED on backend %s (miniredis in virtual time), not real Redis\n", c.Backend)
	}
	fmt.Fprintf(&b, "%s\nevidence: %s (time scale %.2f, ran %.1f s)\nrerun: %s\n",
		c.Summary(), c.Evidence.Summary(), c.TimeScale, c.Ran.Seconds(), c.Rerun)
	if c.History != "" {
		fmt.Fprintf(&b, "history: %s\n", c.History)
	}
	for _, r := range c.Results {
		for i, v := range r.Violations {
			if i == 5 {
				fmt.Fprintf(&b, "  ... %d more %s violation(s)\n", r.ViolationCount-5, r.Property)
				break
			}
			fmt.Fprintf(&b, "  %s: %s\n", r.Property, v.Summary)
		}
	}
	return b.String()
}

// failureMessage names the group (or groups) that did not do what was
// expected of them, and how.
func failureMessage(c *results.Cell) string {
	_, so := c.SafetyGroup()
	var parts []string
	switch so {
	case results.Regression:
		m := fmt.Sprintf("expected safe, %d incident(s), %d violation(s)", len(c.Incidents), c.Violations)
		if c.Grouped() {
			m = fmt.Sprintf("safety expected %s: %d incident(s), %d violation(s)", c.Expected().SafetyText(),
				len(c.Incidents), c.Violations)
		}
		if c.Why != "" && len(c.MayFail) > 0 {
			m += ": " + c.Why
		}
		parts = append(parts, m)
	case results.Missed:
		m := "expected unsafe, but no violation was detected: the harness missed a known bug"
		if c.Grouped() {
			m = "safety " + m
		}
		parts = append(parts, m)
	}
	switch c.LivenessOutcome {
	case results.Regression:
		parts = append(parts, fmt.Sprintf("liveness expected %s, but the lock was stuck (%s failed)",
			c.Expected().Liveness, failedIn(c, checker.GroupLiveness)))
	case results.Missed:
		parts = append(parts, "liveness expected stuck, but the lock kept working: the harness missed a known deadlock")
	}
	return strings.Join(parts, "; ")
}

// failedIn lists the cell's failed properties of group g.
func failedIn(c *results.Cell, g checker.Group) string {
	var out []string
	for _, p := range c.FailedProperties {
		if p.Group() == g {
			out = append(out, string(p))
		}
	}
	if len(out) == 0 {
		return "a " + string(g) + " property"
	}
	return strings.Join(out, ", ")
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// markOutcome files a cell that did not pass as its test case's failure,
// error or skip, counted in its suite; false for a met cell, whose details
// go to the suite's system-out instead.
func markOutcome(tc *junitCase, suite *junitSuite, c *results.Cell, details string) bool {
	switch c.Outcome {
	case results.Regression, results.Missed:
		tc.Failure = &junitMessage{Type: string(c.Outcome), Body: details, Message: failureMessage(c)}
		suite.Failures++
	case results.HarnessError:
		tc.Error = &junitMessage{Type: "harness", Message: c.Error, Body: details}
		suite.Errors++
	case results.Unknown:
		tc.Error = &junitMessage{Type: "unknown", Message: "the checker could not decide (budget exhausted)", Body: details}
		suite.Errors++
	case results.Inconclusive:
		msg := "below the evidence floor: " + strings.Join(c.Evidence.Short, "; ")
		switch {
		case c.Why != "" && len(c.Evidence.Short) == 0:
			msg = c.Why
		case c.Why != "":
			msg += "; " + c.Why
		}
		tc.Error = &junitMessage{Type: "inconclusive", Body: details, Message: msg}
		suite.Errors++
	case results.Interrupted:
		tc.Error = &junitMessage{Type: "interrupted", Body: details,
			Message: "interrupted (Ctrl-C or SIGTERM) before the cell was decided"}
		suite.Errors++
	case results.Skipped:
		tc.Skipped = &junitMessage{Message: c.Error}
		suite.Skipped++
	default:
		return false
	}
	return true
}
