package reports

import (
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lockchaos/lockchaos/results"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes dir/junit.xml: one test case per cell run, a failure
// for each regression or miss, an error for a cell that could not run or
// could not be decided, skipped for n/a.
func WriteJUnit(dir string, s *Summary) (string, error) {
	suite := junitSuite{Name: "lockchaos", Time: seconds(s.Elapsed.Seconds())}
	for _, c := range s.Cells {
		name := c.Lock
		if s.Repeat > 1 {
			name = fmt.Sprintf("%s [seed %d]", c.Lock, c.RunSeed)
		}
		tc := junitCase{Classname: "lockchaos." + c.Scenario, Name: name, Time: seconds(c.Elapsed.Seconds()),
			SystemOut: caseDetails(c)}
		switch c.Outcome {
		case results.Regression:
			tc.Failure = &junitMessage{Type: "regression", Message: fmt.Sprintf("expected safe, %d incident(s), %d violation(s)", len(c.Incidents), c.Violations), Body: caseDetails(c)}
			suite.Failures++
		case results.Missed:
			tc.Failure = &junitMessage{Type: "missed", Message: "expected unsafe, but no violation was detected: the harness missed a known bug", Body: caseDetails(c)}
			suite.Failures++
		case results.HarnessError:
			tc.Error = &junitMessage{Type: "harness", Message: c.Error, Body: caseDetails(c)}
			suite.Errors++
		case results.Unknown:
			tc.Error = &junitMessage{Type: "unknown", Message: "the checker could not decide (budget exhausted)", Body: caseDetails(c)}
			suite.Errors++
		case results.Inconclusive:
			tc.Error = &junitMessage{Type: "inconclusive", Message: "below the evidence floor: " + strings.Join(c.Evidence.Short, "; "), Body: caseDetails(c)}
			suite.Errors++
		case results.Skipped:
			tc.Skipped = &junitMessage{Message: c.Error}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{suite}}, "", "  ")
	if err != nil {
		return "", fmt.Errorf("reports: %w", err)
	}
	path := filepath.Join(dir, "junit.xml")
	return path, writeFile(path, append([]byte(xml.Header), append(b, '\n')...))
}

func caseDetails(c *results.Cell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nevidence: %s (time scale %.2f, ran %.1f s)\nrerun: %s\n", c.Summary(), c.Evidence.Summary(), c.TimeScale, c.Ran.Seconds(), c.Rerun)
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

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
