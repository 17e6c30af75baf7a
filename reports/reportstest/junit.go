// Package reportstest holds test helpers for the reports' files: it checks
// a junit.xml against docs/schema/junit.xsd with xmllint, from the reports
// package's tests and the command's alike.
package reportstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// installHint says how to get xmllint where the test cannot find it.
const installHint = "xmllint not found: apt-get install libxml2-utils (Debian/Ubuntu) or brew install libxml2"

// XMLLint returns xmllint's path. Without it the test is skipped with the
// install hint, except in CI (CI=true), which must install it (.ci/run
// does) and where a skip would hide that the schema was never checked.
func XMLLint(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("xmllint")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(installHint)
	}
	t.Skip(installHint)
	return ""
}

// JUnitSchema is docs/schema/junit.xsd in this module, found from the
// test's working directory (its package's folder).
func JUnitSchema(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "docs", "schema", "junit.xsd")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("reportstest: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Validate runs xmllint on file against the schema and returns its
// complaint, nil when the file is valid.
func Validate(xmllint, schema, file string) error {
	out, err := exec.Command(xmllint, "--noout", "--schema", schema, file).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return fmt.Errorf("%s does not validate against %s:\n%s", file, filepath.Base(schema), strings.TrimSpace(string(out)))
	}
	return fmt.Errorf("xmllint: %w", err)
}

// ValidJUnit fails the test unless file validates against junit.xsd.
func ValidJUnit(t testing.TB, file string) {
	t.Helper()
	if err := Validate(XMLLint(t), JUnitSchema(t), file); err != nil {
		t.Error(err)
	}
}
