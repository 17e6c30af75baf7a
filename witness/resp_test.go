package witness

import (
	"bufio"
	"errors"
	"strings"
	"testing"
)

func TestReadFrameReadsWhatTheWitnessGets(t *testing.T) {
	in := ">4\r\n$8\r\npmessage\r\n$16\r\n__keyspace@0__:*\r\n$22\r\n__keyspace@0__:order:1\r\n$3\r\nset\r\n" +
		"*2\r\n$4\r\ntokA\r\n:299\r\n" + // EXEC: GET, PTTL
		"*2\r\n_\r\n:-2\r\n" + // a key gone before the read (RESP3 null)
		"%1\r\n+server\r\n+redis\r\n" + // HELLO's map
		"|1\r\n+ttl\r\n:3\r\n+OK\r\n" + // an attribute before a value
		"-ERR unknown command\r\n" +
		"$-1\r\n"
	r := bufio.NewReader(strings.NewReader(in))
	push, err := readFrame(r)
	if err != nil || !push.push || len(push.items) != 4 || push.items[3].str != "set" || push.items[2].str != "__keyspace@0__:order:1" {
		t.Fatalf("push: %+v %v", push, err)
	}
	exec, _ := readFrame(r)
	if len(exec.items) != 2 || exec.items[0].str != "tokA" || exec.items[1].int != 299 {
		t.Errorf("exec: %+v", exec)
	}
	gone, _ := readFrame(r)
	if !gone.items[0].null || gone.items[1].int != -2 {
		t.Errorf("gone: %+v", gone)
	}
	hello, _ := readFrame(r)
	if len(hello.items) != 2 || hello.items[1].str != "redis" {
		t.Errorf("map: %+v", hello)
	}
	if ok, _ := readFrame(r); ok.str != "OK" {
		t.Errorf("after an attribute: %+v", ok)
	}
	if e, _ := readFrame(r); e.err != "ERR unknown command" {
		t.Errorf("error: %+v", e)
	}
	if n, _ := readFrame(r); !n.null {
		t.Errorf("null bulk: %+v", n)
	}
	if _, err := readFrame(bufio.NewReader(strings.NewReader("?x\r\n"))); !errors.Is(err, errProtocol) {
		t.Errorf("an unknown type: %v, want errProtocol", err)
	}
}
