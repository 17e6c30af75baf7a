package drivers

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShellLine: a simple command is exec'd after its leading
// assignments; a compound one, or one that execs itself, is left alone.
func TestShellLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ruby bad.rb", "exec ruby bad.rb"},
		{"  python3 -u d.py", "exec python3 -u d.py"},
		{"BUG=x ruby bad.rb", "BUG=x exec ruby bad.rb"},
		{`A=1 B="two words" C='x y' D=a\ b ruby d.rb`, `A=1 B="two words" C='x y' D=a\ b exec ruby d.rb`},
		{"PY=${LOCKCHAOS_PYTHON:-python3 -u} $PY d.py", "PY=${LOCKCHAOS_PYTHON:-python3 -u} exec $PY d.py"},
		{"${LOCKCHAOS_PYTHON:-python3} drivers/redispy/driver.py", "exec ${LOCKCHAOS_PYTHON:-python3} drivers/redispy/driver.py"},
		{"./a=b", "exec ./a=b"},
		{"1A=x cmd", "exec 1A=x cmd"},
		{"exec ruby d.rb", "exec ruby d.rb"},
		{"BUG=x exec ruby d.rb", "BUG=x exec ruby d.rb"},
		{"BUG=x", "BUG=x"},
		{"cd x && ruby d.rb", "cd x && ruby d.rb"},
		{"sleep 1; ruby d.rb", "sleep 1; ruby d.rb"},
	} {
		if got := shellLine(c.in); got != c.want {
			t.Errorf("shellLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAssignmentsReachTheExecdCommand: sh (dash here) exports a leading
// assignment to the command exec runs, and runs it in the shell's place.
func TestAssignmentsReachTheExecdCommand(t *testing.T) {
	out, err := exec.Command("sh", "-c", shellLine(`LOCKCHAOS_T="a b" sh -c 'echo "$LOCKCHAOS_T $$ $PPID"'`)+"; echo never").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "a b ") {
		t.Fatalf("got %q", out)
	}
}

// TestWhatIsWrong: each kind of bad line is said for what it is.
func TestWhatIsWrong(t *testing.T) {
	for _, c := range []struct{ line, says string }{
		{`{"id":1,"result":"ok","lease":0}`, ""},
		{`{"lost":0}`, ""},
		{`{"id":null,"result":"ok"}`, "its id is null"},
		{`{"result":"ok"}`, "it has no id"},
		{`{"id":"1","result":"ok"}`, `its "id" is a JSON string, want an integer`},
		{`{"id":1,"fence":-1}`, `its "fence" is a JSON number -1, want an integer from 0`},
		{`{"id":1,"result":7}`, `its "result" is a JSON number, want a string`},
		{`[1]`, "it is a JSON array, want an object"},
		{`ok 1`, "it is not JSON: invalid character"},
		{`{"id":1,`, "it is not JSON"},
	} {
		var m message
		err := decodeMessage([]byte(c.line), &m)
		got := whatIsWrong([]byte(c.line), &m, err)
		if (c.says == "") != (got == "") || !strings.Contains(got, c.says) {
			t.Errorf("%s: %q, want %q", c.line, got, c.says)
		}
	}
}
